"""boardzoo's games as PettingZoo AEC environments.

``from boardzoo.envs import loa_v0, ultima_v0, whistling_v0``; each module has
``env()`` (with PettingZoo's standard wrappers) and ``raw_env()``. Each game's
rules engine lives in ``boardzoo.envs.<game>.rules`` and knows nothing of PettingZoo.
"""
