"""AlphaZero-style self-play training for boardzoo games (see docs/training.md).

Modules, from the loop down:

* ``trainer`` (the loop: self-play, replay, gradient steps, evaluation, checkpoints),
  ``learner`` (network, optimiser, buffer, gradient steps), ``buffer`` (replay buffer,
  symmetry augmentation), ``rundir`` (a run's folder and CSVs), ``checkpoint``
  (atomic save, safe load), ``plot`` (learning curves), ``commands``
  (``boardzoo train``/``plot``/``export``/``distill``);
* self-play: ``backends`` (where games are played: this process, workers, Ray),
  ``selfplay`` (per-game trees on the reference engine), ``batched_selfplay`` (all
  games as tensors on a batched engine); ``search/`` (PUCT and Gumbel root rules over
  both tree backends, leaf values by alpha-beta);
* the network: ``network`` (residual policy/value net and its heads), ``knowledge``
  (the game's priors a network adds, for both engines and distillation), ``distill``
  (distillation warm start, ``boardzoo distill``);
* play: ``agent`` (the ``checkpoint:`` agent), ``evaluate`` (matches);
* the config: ``config_schema`` (every key declared once: default, range or choices,
  meaning, the settings it needs and those without which it does nothing; old keys),
  ``config`` (reading, checking and writing configs by those declarations, ``--set``),
  ``configfiles`` (the shipped configs), ``safe_yaml`` (bounded YAML reading);
* ``examples/``: training with other RL libraries on boardzoo's envs.

Importing this package imports nothing heavy; torch loads with the modules that need it.
"""
