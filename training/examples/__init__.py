"""RL framework examples, runnable from an installed package (each needs its extra, see
docs/integrations.md): ``python -m boardzoo.training.examples.<name> --help``."""
