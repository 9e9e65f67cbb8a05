"""The shipped training configs (package data: ``<name>.yaml``); ``boardzoo train --config NAME``
and ``boardzoo config`` find them by name (boardzoo.training.configfiles)."""
