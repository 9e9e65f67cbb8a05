"""The ``checkpoint`` agent: a trained network (with or without search) behind the Agent API.

Importing this module registers ``checkpoint`` in
:data:`boardzoo.agents.base.AGENT_FACTORIES` (``agents.base`` imports it
lazily the first time a ``checkpoint:...`` spec is built). Specs:

* ``checkpoint:PATH``: a model file (``runs/NAME/best.pt``, ``model.pt``) or a
  training checkpoint (``runs/NAME/checkpoint.pt``: its latest network);
* ``checkpoint:loa`` (``ultima``, ``whistling``): the network shipped with
  boardzoo for that game (package data ``boardzoo/agents/nets/<game>.pt``);
* options after commas, declared once in :data:`AGENT_KIND` (``sims=N``, ``root=``, ``m=``,
  ``ptemp=``, ``forced=``, ``win1=``, ``leaf=``, ``stop=``, ``batch=``); each ``play`` option
  defaults to the network's own ``play`` section (docs/training.md). Example:
  ``checkpoint:runs/loa/best.pt,sims=0``, ``checkpoint:runs/ultima/best.pt,m=64``.

A position with a single legal action is played without the network, and so is a win at
once found by ``win1=on``.

The agent works on whole-turn moves (the GameState protocol): it converts the
state to the game's action state and acts until the turn is complete (one
action for LOA and Ultima, one hop at a time for a Whistling chain), then
returns the rules-level move.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardzoo.agents.agent_spec import (
    AgentKind,
    AgentSpec,
    Option,
    Parser,
    choice,
    number,
    switch,
    unquote,
    whole,
)
from boardzoo.agents.base import UnknownAgentError
from boardzoo.agents.policy import ActionAgent
from boardzoo.envs.core.actions import MoveActions
from boardzoo.envs.core.registry import GAMES, action_game, get_spec

from .checkpoint import CheckpointError, load
from .config import Config, ConfigError, from_saved, play_search
from .network import PolicyValueNet, build_net
from .search.leaf import SearchedLeaves
from .search.roots import ROOT_RULES
from .search.tree import run_search
from .selfplay import NetEvaluator

# Shipped networks are package data of boardzoo.agents (the folder agents/nets/).
NETS_PACKAGE = "boardzoo.agents"
DEFAULT_SIMS = 100
#: The most leaves one network call of a playing search evaluates (agent option ``batch``).
MAX_LEAF_BATCH = 256


def shipped_net(game: str) -> Path:
    """Return the path of the network shipped for ``game`` (package data, found through
    importlib.resources so that it works wherever the package is installed)."""
    return Path(str(importlib.resources.files(NETS_PACKAGE) / "nets" / f"{game}.pt"))


def load_net(path: str | Path, game: str | None = None) -> tuple[PolicyValueNet, Config, dict]:
    """Load the network of a model file or training checkpoint; check it fits ``game``."""
    data = load(path)
    if game is not None and data["game"] != game:
        raise CheckpointError(f"checkpoint {str(path)!r} is a network for {data['game']}, "
                              f"not {game}")
    try:
        cfg = from_saved(data["config"])
    except ConfigError as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} has an invalid config: {exc}") from None
    ag = action_game(cfg.game)
    net = build_net(cfg, ag)
    try:
        net.load_state_dict(data["model"])
    except (RuntimeError, KeyError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0][:200]
        raise CheckpointError(f"checkpoint {str(path)!r} does not match its model config or the "
                              f"{cfg.game} observation/action shapes ({first})") from None
    net.eval()
    return net, cfg, data


class NetAgent(ActionAgent):
    """Plays a network: its ``play`` search with ``simulations`` per action, or the raw
    policy (``simulations`` 0)."""

    def __init__(self, game: str, net: torch.nn.Module, cfg: Config, simulations: int,
                 seed: int | None = None) -> None:
        self.game_name = game
        self.game = self.actions = action_game(game)
        self.net = net
        self.cfg = cfg
        #: The search as the network plays (the ``play`` section applied to ``mcts``).
        self.search_cfg = play_search(cfg)
        self.simulations = simulations
        self._spec_simulations = simulations  # set_node_limit(None) goes back to it
        self.rng = np.random.default_rng(seed)
        # Play-time only: self-play builds its own evaluator without the temperature.
        self.evaluate = NetEvaluator(net, self.game, cfg.play.policy_temperature)
        self._leaves: SearchedLeaves | None = None
        #: ``simulations``: the searches' simulations, which the engine protocol reports as
        #: its ``info ... nodes``.
        self.counters = {"actions": 0, "evaluations": 0, "simulations": 0}
        #: Seconds a simulation took in the last search under a time limit (None: none yet).
        self.seconds_per_simulation: float | None = None
        #: The game's winning-move check when the network plays with ``play.win_in_one``.
        self.winning_action = winning_action(game) if cfg.play.win_in_one else None
        #: Leaves evaluated per network call in play (agent option ``batch=N``; 1: one at a time).
        self.leaf_batch = 1

    def stats(self) -> dict[str, float]:
        return {**self.counters, "evaluations": self.evaluate.positions}

    def set_node_limit(self, nodes: int | None) -> bool:
        """Search ``nodes`` simulations an action (None: the spec's ``sims`` again); the raw
        policy (``sims=0``) searches nothing, so it has no budget to set."""
        if self._spec_simulations <= 0:
            return nodes is None
        self.simulations = self._spec_simulations if nodes is None else nodes
        return True

    @property
    def search_evaluate(self) -> Any:
        """What the search asks: the network, or its priors with values searched by
        alpha-beta (``play.leaf_depth``)."""
        depth = self.search_cfg.leaf_depth
        if not depth:
            return self.evaluate
        if self._leaves is None or self._leaves.inner is not self.evaluate:
            self._leaves = SearchedLeaves(self.evaluate, self.game_name, self.game, depth)
        return self._leaves

    def select_action(self, state: Any) -> int:
        """Return the action to take in action state ``state``."""
        game = self.game
        self.counters["actions"] += 1
        legal = game.legal_actions(state)
        if len(legal) == 1:  # forced: nothing to search (no randomness is drawn either way)
            return int(legal[0])
        if self.simulations <= 0:
            logits, _ = self.evaluate([state])
            return int(legal[int(np.argmax(logits[0][legal]))])
        if self.winning_action is not None:
            win = self.winning_action(state)
            if win is not None:  # a win at once needs no search
                return int(win)
        started = time.perf_counter()
        search = run_search(game, self.search_evaluate, state, self.search_cfg, self.rng,
                            self.budget(), add_noise=False, deadline=self.move_deadline,
                            skip_forced=self.cfg.play.skip_forced,
                            winning_action=self.winning_action,
                            stop_early=self.cfg.play.stop_early, leaf_batch=self.leaf_batch)
        self.counters["simulations"] += search.done
        if self.move_deadline is not None and search.done:
            self.seconds_per_simulation = (time.perf_counter() - started) / search.done
        return int(search.root.actions[search.choose(0.0)])

    def budget(self) -> int:
        """Return the simulations this search plans for: ``sims``, or under a time limit no
        more than it runs by the deadline at the rate of the last timed search. A Gumbel root
        plans its sequential halving from the budget, and one it cannot finish leaves its
        candidates barely searched; a PUCT root's ``stop_early`` reads it too."""
        if self.move_deadline is None or self.seconds_per_simulation is None:
            return self.simulations
        left = self.move_deadline - time.perf_counter()
        # one more than fits: the deadline, not the plan, ends a search at the expected rate
        fits = math.ceil(left / max(self.seconds_per_simulation, 1e-9)) + 1
        return max(1, min(self.simulations, fits))


def winning_action(game: str) -> Callable[[Any], int | None] | None:
    """Return ``game``'s check for an action that wins at once (its descriptor's
    ``winning_move``, where an action is a whole move), or None where it has none."""
    spec = get_spec(game)
    if spec.winning_move is None or not isinstance(spec.actions, MoveActions):
        return None
    return spec.winning_move


#: ``checkpoint:PATH[,sims=N][,root=...]...``; the ``play`` options default to the network's
#: own ``play`` section (None here: the network decides).
AGENT_KIND = AgentKind("checkpoint", (
    Option("sims", whole(0), "simulations per action (0: the raw policy's most likely "
           "legal action, no search)", DEFAULT_SIMS),
    Option("root", choice(*ROOT_RULES), "the root rule (default: the network's play.root, "
           "else the root it was trained with)"),
    Option("m", whole(1), "Gumbel root candidates (default: the network's play.gumbel_m, or "
           "its gumbel_m when that is 0; ignored by puct)"),
    Option("ptemp", number(0, above=True, metavar="T"), "the search's policy softmax temperature "
           "(default: the network's play.policy_temperature, 1 unless its config sets it)"),
    Option("forced", switch("skip", "search"), "whether the search plays forced actions "
           "below the root through without a simulation (default: play.skip_forced)"),
    Option("win1", switch("on", "off"), "whether the search looks for wins in one (Ultima's "
           "checkmates; default: play.win_in_one)"),
    Option("leaf", whole(0, 8, "D"), "each search leaf valued by an alpha-beta search of D "
           "turns (default: play.leaf_depth, 0: off; LOA and Ultima)"),
    Option("stop", switch("on", "off"), "whether the search stops once its remaining "
           "simulations cannot change its move (default: play.stop_early, on; PUCT roots)"),
    Option("batch", whole(1, MAX_LEAF_BATCH), "leaves evaluated in one network call, spread "
           "by virtual loss (PUCT roots; not the same search as one leaf at a time)", 1),
), value=Option("path", Parser(unquote, "a path or game name", "PATH"),
                "a path or game name (loa, ultima, whistling: the shipped network)"),
    required=True)


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> NetAgent:
    """Build ``checkpoint:PATH[,sims=N][,root=puct|gumbel][,m=N][,ptemp=T]
    [,forced=skip|search][,win1=on|off][,leaf=D][,stop=on|off][,batch=N]`` for ``game``."""
    opts = AGENT_KIND.bind(spec)
    where = opts["path"]
    path = Path(where)
    if where in GAMES and not path.is_file():
        path = shipped_net(where)
        if not path.is_file():
            raise CheckpointError(f"no network is shipped for {where!r} yet; train one with "
                                  f"`boardzoo train --config configs/{where}.yaml` and use "
                                  f"checkpoint:runs/{where}/best.pt")
    net, cfg, _ = load_net(path, game)
    if opts["leaf"] and not isinstance(get_spec(game).actions, MoveActions):
        raise UnknownAgentError(f"agent checkpoint: leaf=D needs a game whose actions are "
                                f"whole moves (LOA, Ultima), not {game}")
    play = {"gumbel_m": opts["m"], "policy_temperature": opts["ptemp"], "root": opts["root"],
            "leaf_depth": opts["leaf"], "skip_forced": opts["forced"],
            "win_in_one": opts["win1"], "stop_early": opts["stop"]}
    cfg = dataclasses.replace(cfg, play=dataclasses.replace(
        cfg.play, **{k: v for k, v in play.items() if v is not None}))
    agent = NetAgent(game, net, cfg, opts["sims"], seed)
    if opts["batch"] > 1:
        if not ROOT_RULES[agent.search_cfg.root].batches_leaves:
            raise UnknownAgentError("agent checkpoint: batch=N needs a PUCT root (add root=puct): "
                                    "a Gumbel root's halving counts its simulations one by one")
        agent.leaf_batch = opts["batch"]
    return agent
