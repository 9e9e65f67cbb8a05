"""The one game loop: play agents against each other and return the game's record.

``boardzoo play`` (:func:`play_game`), the arena and the trainer's evaluation
matches all play through :func:`play_from`, and write what it returns (a
:class:`~.records.GameRecord`) as the same games.jsonl line.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from boardzoo.agents.base import Agent, Forfeit
from boardzoo.envs.core.game import GameState
from boardzoo.envs.core.registry import load_state

from .records import GameRecord


def play_from(
    state: GameState,
    agents: Sequence[Agent],
    max_moves: int | None = None,
    opening_moves: int = 0,
    opening_seed: int = 0,
    show: bool = False,
    opening: Sequence[str] = (),
) -> GameRecord:
    """Play ``agents[0]`` (first mover) against ``agents[1]`` from ``state``; return the record.

    The game opens with the moves of ``opening`` (canonical notation: a line the arena
    chose), then ``opening_moves`` uniformly random moves (seeded by ``opening_seed``), so
    that deterministic agents need not replay one game; both are in ``moves``. A game
    stopped by ``max_moves`` scores as a draw. An agent that raises
    :class:`~boardzoo.agents.base.Forfeit` loses (the record's ``forfeit``).
    """
    forfeit: dict[str, Any] | None = None
    for i, agent in enumerate(agents):
        try:
            agent.reset()
        except Forfeit as exc:
            forfeit = forfeit or {"player": i, "reason": exc.reason, "detail": exc.detail}
    first = state
    drawer = random.Random(opening_seed)
    moves: list[str] = []
    infos: list[dict[str, Any] | None] = []
    think, think_moves, longest = [0.0, 0.0], [0, 0], [0.0, 0.0]
    move_seconds: list[float] = []  # per ply: what a replay shows next to each move
    started = time.perf_counter()
    if show:
        print(state.render_text())
    while (forfeit is None and not state.is_terminal()
           and (max_moves is None or len(moves) < max_moves)):
        side = state.to_move
        t0 = time.perf_counter()
        info = None
        if len(moves) < len(opening):
            move = state.parse_move(opening[len(moves)])
            move_seconds.append(0.0)
        elif len(moves) < len(opening) + opening_moves:
            move = drawer.choice(list(state.legal_moves()))
            move_seconds.append(0.0)
        else:
            agents[side].see_game(first, moves)
            try:
                move = agents[side].select_move(state)
            except Forfeit as exc:
                forfeit = {"player": side, "reason": exc.reason, "detail": exc.detail}
            spent = time.perf_counter() - t0
            think[side] += spent
            if forfeit is not None:
                break
            think_moves[side] += 1
            longest[side] = max(longest[side], spent)
            move_seconds.append(round(spent, 4))
            info = agents[side].move_info() or None
        infos.append(info)
        moves.append(state.move_to_str(move))
        state = state.apply(move)
        if show:
            print(f"\n{len(moves)}. {moves[-1]}\n{state.render_text()}")
    for agent in agents:
        agent.finish(state)
    terminated = state.is_terminal()
    winner = state.winner() if terminated else None
    result = state.result() if terminated else "unfinished (max moves)"
    if forfeit is not None:
        winner = 1 - forfeit["player"]
        why = ": ".join(t for t in (forfeit["reason"], forfeit["detail"]) if t)
        result = (f"{state.player_names[winner]} wins: "
                  f"{state.player_names[forfeit['player']]} forfeits ({why})")
    return GameRecord(
        players=[a.spec for a in agents],
        player_names=list(state.player_names),
        scores=[0.5, 0.5] if winner is None else [1.0 - winner, float(winner)],
        winner=winner,
        terminated=terminated,
        description=result,
        moves=moves,
        seconds=round(time.perf_counter() - started, 4),
        think_seconds=[round(t, 4) for t in think],
        think_moves=think_moves,
        max_move_seconds=[round(t, 4) for t in longest],
        move_seconds=move_seconds,
        final_position=state.to_text(),
        forfeit=forfeit,
        move_info=infos if any(infos) else None,
    )


def play_game(
    game: str,
    agents: Sequence[Agent],
    position: str | None = None,
    max_moves: int | None = None,
    show: bool = False,
    opening: Sequence[str] = (),
) -> GameRecord:
    """Play one game of ``game`` from its start (or ``position`` text), opening with the
    moves of ``opening``; see :func:`play_from`."""
    return play_from(load_state(game, position), agents, max_moves=max_moves, show=show,
                     opening=opening)
