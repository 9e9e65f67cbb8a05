"""Network-guided tree search, composed from parts (mctx's shape).

* :mod:`.formulas`: PUCT, the completed Q, the sigma transform, the improved
  policy: written once over numpy arrays and torch tensors alike;
* :mod:`.roots`: the root rules (``puct``, ``gumbel``): root and inner selection,
  policy target, the move played, the config keys each reads;
* two tree backends that the rules drive: :mod:`.tree` (one Python tree per game,
  numpy edge arrays; self-play's ``reference`` engine, evaluation and agents) and
  :mod:`.batched` over :mod:`.batched_tree` (the trees of B games in tensors, on a
  batched engine; self-play's ``batched`` engine).

The package imports nothing itself (the config reads :mod:`.roots` without torch);
import the part you need.
"""
