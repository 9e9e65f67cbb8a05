"""UCT Monte Carlo tree search over whole-turn moves, with tree reuse between moves.

Every edge is one whole turn of :meth:`GameState.legal_moves`, so a chained
Whistling capture is a single edge and players strictly alternate edges as the
game says (the code never assumes alternation: each node records who moved
into it). Playouts are uniformly random and stop at a length cap, where the
game's evaluation, squashed by ``tanh(eval / scale)``, stands in for the result.
"""

from __future__ import annotations

import math
import random
import time

from boardzoo.envs.core.game import GameState, Move

from .agent_spec import AgentKind, AgentSpec, Option, number, whole
from .base import Agent
from .evaluation import Evaluator, as_value, get_evaluator, get_playout_cap, get_scale


class Node:
    """A search-tree node: a state, its expanded children and UCT statistics."""

    __slots__ = ("state", "mover", "children", "untried", "visits", "total")

    def __init__(self, state: GameState, mover: int, rng: random.Random) -> None:
        self.state = state
        #: The player who chose the edge into this node; ``total`` is from their view.
        self.mover = mover
        self.children: dict[Move, Node] = {}
        self.untried = list(state.legal_moves())
        rng.shuffle(self.untried)  # expansion order is random but seeded
        self.visits = 0
        self.total = 0.0


DEFAULT_SIMULATIONS = 200


class MCTSAgent(Agent):
    """UCT with ``simulations`` new simulations per move (the reused subtree counts extra).

    With a time limit (:meth:`set_move_time`) the search also stops when the time is up,
    after at least one simulation; ``simulations`` None means 200 without a time limit and
    no count limit with one (the search then runs until the time is up)."""

    def __init__(self, game: str, simulations: int | None, seed: int | None = None,
                 c: float = 1.0, playout_cap: int | None = None,
                 evaluator: Evaluator | None = None, scale: float | None = None,
                 reuse: bool = True) -> None:
        #: Whether the count was chosen (else it is the default, which a time limit lifts).
        self.count_given = simulations is not None
        self.simulations = DEFAULT_SIMULATIONS if simulations is None else simulations
        self._spec_count = (self.count_given, self.simulations)  # set_node_limit(None)
        self.c = c
        self.playout_cap = get_playout_cap(game) if playout_cap is None else playout_cap
        self.evaluate = evaluator or get_evaluator(game)
        self.scale = scale or get_scale(game)
        self.reuse = reuse
        self.rng = random.Random(seed)
        self.root: Node | None = None
        self.counters = {"simulations": 0, "seconds": 0.0, "reused": 0}

    def reset(self) -> None:
        self.root = None

    def set_node_limit(self, nodes: int | None) -> bool:
        """Run ``nodes`` simulations a move (with a time limit: at most that many); None:
        the spec's count again."""
        self.count_given, self.simulations = (True, nodes) if nodes else self._spec_count
        return True

    def stats(self) -> dict[str, float]:
        return dict(self.counters)

    # -- tree reuse ---------------------------------------------------------------------
    def _root_for(self, state: GameState) -> Node:
        """Return the kept subtree whose state is ``state``, or a fresh root."""
        old = self.root
        if self.reuse and old is not None:
            key, ply = state.key(), state.ply
            for node in (old, *old.children.values()):
                if node.state.ply == ply and node.state.key() == key:
                    self.counters["reused"] += 1
                    return node
        return Node(state, 1 - state.to_move, self.rng)

    # -- search ---------------------------------------------------------------------------
    def select_move(self, state: GameState) -> Move:
        start = time.perf_counter()
        root = self._root_for(state)
        if len(root.children) + len(root.untried) > 1:
            if self.move_time is None:
                for _ in range(self.simulations):
                    self._simulate(root)
                self.counters["simulations"] += self.simulations
            else:
                self._timed_search(root, start + self.move_time)
        best = max(root.children.items() if root.children else [],
                   key=lambda kv: (kv[1].visits, kv[1].total / max(kv[1].visits, 1)),
                   default=None)
        if best is None:  # one legal move: no search needed
            move = root.untried[0]
            self.root = None
        else:
            move, self.root = best
        self.counters["seconds"] += time.perf_counter() - start
        return move

    def _timed_search(self, root: Node, deadline: float) -> None:
        """Simulate until ``deadline`` (perf_counter) or the count, whichever comes first."""
        limit = self.simulations if self.count_given else math.inf
        done = 0
        while done < limit:
            self._simulate(root)
            done += 1
            if time.perf_counter() >= deadline:
                break
        self.counters["simulations"] += done

    def _simulate(self, root: Node) -> None:
        """Run one selection-expansion-playout-backup pass from ``root``."""
        node, path = root, [root]
        while not node.untried and node.children:
            node = self._select(node)
            path.append(node)
        if node.untried:
            move = node.untried.pop()
            child = Node(node.state.apply(move), node.state.to_move, self.rng)
            node.children[move] = child
            node = child
            path.append(node)
        result = self._playout(node.state)
        for n in path:
            n.visits += 1
            n.total += result[n.mover]

    def _select(self, node: Node) -> Node:
        """Return the child with the best UCT score (first one on ties: deterministic)."""
        log_n = math.log(node.visits)
        c = self.c
        best, best_score = None, -math.inf
        for child in node.children.values():
            score = child.total / child.visits + c * math.sqrt(log_n / child.visits)
            if score > best_score:
                best, best_score = child, score
        return best  # type: ignore[return-value]

    def _playout(self, state: GameState) -> tuple[float, float]:
        """Play random moves up to the cap; return the (estimated) result per player."""
        rng = self.rng
        for _ in range(self.playout_cap):
            if state.is_terminal():
                return state.returns()
            state = state.apply(rng.choice(state.legal_moves()))
        if state.is_terminal():
            return state.returns()
        v = as_value(self.evaluate(state), self.scale)
        return (v, -v) if state.to_move == 0 else (-v, v)


#: ``mcts[:N][,c=C][,cap=P]``: the value is the simulations (``mcts:400`` is ``mcts:sims=400``).
SIMS = Option("sims", whole(1, metavar="N"), "new simulations per move (default 200; none "
              "under a time limit: as many as the time allows)")
AGENT_KIND = AgentKind("mcts", (
    SIMS,
    Option("c", number(0, metavar="C"), "the UCT exploration constant", 1.0),
    Option("cap", whole(0, metavar="P"), "plies a playout runs before the evaluation stands "
           "in (default: the game's, 8 for the three games)"),
), value=SIMS)


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> MCTSAgent:
    """Build ``mcts:N`` (optionally ``mcts:N,c=1.0,cap=8``); N defaults to 200 (to no count
    limit under a time limit)."""
    opts = AGENT_KIND.bind(spec)
    return MCTSAgent(game, opts["sims"], seed, c=opts["c"], playout_cap=opts["cap"])
