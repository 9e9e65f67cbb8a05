"""Self-play on a batched engine: all games stepped, searched and evaluated as tensors.

:func:`play_games_batched` is the batched twin of
:func:`boardzoo.training.selfplay.play_games` (``selfplay.engine: batched``):
``selfplay.parallel_games`` games run as one :class:`BatchState`, each move is
one :class:`~.batched_mcts.BatchedSearch` over all of them (one ``step`` and
one network call per simulation for every game at once), and a finished game's
slot takes the next seed, or is dropped when none is left. The examples are
the same :class:`~.selfplay.GameRecord` s (observation, legal actions, search
policy, player, outcome, ``max_moves`` capping, ``temperature_moves``), so the
replay buffer and the trainer take them unchanged. As in the reference path, a
game whose position has a single legal action plays it without a search or a
network call and records no example (``GameRecord.forced``): while any game is
in that state, those games step alone and the others wait for the next search.

Determinism: all randomness comes from one ``torch.Generator`` seeded from the
list of seeds, so the same seeds, config and network give the same records on
a given device. Unlike the reference path a game's randomness is shared with
the games played beside it: a seed alone does not fix its game.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from boardzoo.envs.core.batched import BatchedGame

from .batched_mcts import BatchedSearch, Evaluator, NetBatchEvaluator, tree_capacity
from .batched_tree import Tree, new_tree, reroot
from .config import Config
from .selfplay import GameRecord, adjudicate


def generator_seed(seeds: list[int]) -> int:
    """Return the seed of the generator that plays the games of ``seeds``."""
    return int(np.random.SeedSequence([int(s) for s in seeds]).generate_state(1, np.uint64)[0])


def play_games_batched(net: torch.nn.Module | None, engine: BatchedGame, cfg: Config,
                       seeds: list[int], progress: Callable[[int], None] | None = None,
                       evaluate: Evaluator | None = None) -> list[GameRecord]:
    """Play one self-play game per seed; return the records in seed order.

    ``evaluate`` replaces the network (``net`` may then be None).
    """
    if not seeds:
        return []
    if evaluate is None:
        if net is None:
            raise ValueError("play_games_batched needs a network or an evaluator")
        evaluate = NetBatchEvaluator(net, engine)
    sp, mc = cfg.selfplay, cfg.mcts
    dev = engine.device
    gen = torch.Generator(device=dev)
    gen.manual_seed(generator_seed(seeds))
    cap = tree_capacity(mc, mc.simulations)
    reuse = mc.reuse_tree and mc.root == "puct"
    width = min(sp.parallel_games, len(seeds))
    slots = list(range(width))  # the game index each slot plays
    moves = [0] * width
    records = {i: GameRecord(int(seeds[i])) for i in slots}
    queued = width
    results: dict[int, GameRecord] = {}
    states = engine.initial(width)
    kept: Tree | None = None  # subtrees reused as the next roots (puct), where ``keep`` is True
    keep = torch.zeros(width, dtype=torch.bool, device=dev)
    while slots:
        legal_mask = engine.legal_mask(states)
        forced = legal_mask.sum(1) == 1  # (a slot never holds a finished game)
        search = None
        if bool(forced.any()):
            # play the only legal action of these games, with no search and no example
            idx = forced.nonzero().squeeze(1)
            only = legal_mask[idx].nonzero()[:, 1]  # one legal action per row, rows in order
            stepped = engine.step(states.index(idx), only)
            after = states.where(forced, stepped.index((forced.cumsum(0) - 1).clamp(min=0)))
            keep = keep & ~forced
            moved = forced.cpu().tolist()
        else:
            tree = new_tree(engine, states, cap)
            if kept is not None and bool(keep.any()):
                tree = tree.where(keep, kept)
            search = BatchedSearch(engine, mc, evaluate, gen, tree, add_noise=True).run()
            actions, probs = search.policy_target()
            temps = torch.tensor([1.0 if m < sp.temperature_moves else 0.0 for m in moves],
                                 dtype=torch.float64, device=dev)
            edge = search.choose(temps)
            after = engine.step(states, actions.gather(1, edge[:, None]).squeeze(1))
            obs = engine.observation(states).cpu().numpy()
            players = engine.to_move(states).cpu().tolist()
            legal = (actions >= 0).sum(1).cpu().tolist()
            acts_np = actions.cpu().numpy().astype(np.int32)
            probs_np = probs.cpu().numpy().astype(np.float32)
            moved = [True] * len(slots)
        over = engine.terminated(after).cpu().tolist()
        ret0 = engine.returns(after)[:, 0].cpu().tolist()
        finished: list[int] = []
        for k, game in enumerate(slots):
            if not moved[k]:
                continue
            rec, n = records[game], 0
            if search is None:
                rec.forced += 1
            else:
                n = legal[k]
                rec.obs.append(obs[k].copy())
                rec.actions.append(acts_np[k, :n].copy())
                rec.probs.append(probs_np[k, :n].copy())
                rec.players.append(int(players[k]))
            moves[k] += 1
            if over[k]:
                rec.outcome = float(ret0[k])
            elif moves[k] >= sp.max_moves:
                rec.capped = True
                if sp.adjudicate:
                    state = engine.to_states(after.index(torch.tensor([k], device=dev)))[0]
                    rec.outcome = adjudicate(cfg.game, engine.action_game.game_state(state))
            else:
                continue
            rec.length = moves[k]
            finished.append(k)
            results[game] = rec
            if progress is not None:
                progress(1)
        # finished slots take the next games; what remains is dropped below
        done = torch.zeros(len(slots), dtype=torch.bool, device=dev)
        done[finished] = True
        refill = finished[: len(seeds) - queued]
        if refill:
            fresh = torch.zeros_like(done)
            fresh[refill] = True
            after = after.where(fresh, engine.initial(len(slots)))
            for k in refill:
                slots[k], moves[k] = queued, 0
                records[queued] = GameRecord(int(seeds[queued]))
                queued += 1
        states = after
        if search is not None and reuse:  # keep the chosen child's subtree, as mcts.py does
            t = search.tree
            child = t.children[search.ar, 0, edge]
            keep = (child >= 0) & ~done & t.expanded[search.ar, child.clamp(min=0)]
            kept = reroot(t, child.clamp(min=0), cap - mc.simulations) if bool(keep.any()) \
                else None
        retired = finished[len(refill):]
        if retired:
            stay = [k for k in range(len(slots)) if k not in set(retired)]
            idx = torch.tensor(stay, dtype=torch.int64, device=dev)
            states, keep = states.index(idx), keep[idx]
            kept = kept.index(idx) if kept is not None else None
            slots = [slots[k] for k in stay]
            moves = [moves[k] for k in stay]
    return [results[i] for i in range(len(seeds))]
