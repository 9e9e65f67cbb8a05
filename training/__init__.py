"""AlphaZero-style self-play training for boardzoo games (see docs/training.md).

Modules: ``config`` (YAML configs, validation, ``--set``), ``network`` (residual
policy/value net, masked softmax, the bilinear head and internal grids), ``prior``
(the static-evaluation value prior), ``distill`` (distillation warm start), ``search``
(PUCT and Gumbel root rules over per-game and batched trees), ``selfplay`` (self-play, worker
processes), ``buffer`` (replay buffer with augmentation by the game's symmetries),
``trainer`` (the loop, checkpoints, metrics), ``checkpoint`` (atomic save, safe load),
``evaluate`` (matches), ``agent`` (the ``checkpoint:...`` agent), ``plot`` and
``commands`` (``boardzoo train``/``plot``).
Importing this package imports nothing heavy; torch loads with the modules that need it.
"""
