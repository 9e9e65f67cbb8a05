"""A human player at the terminal: shows the board, reads a move, explains rejections."""

from __future__ import annotations

import re
import sys
from typing import TextIO

from boardzoo.envs.core.game import BoardzooError, GameState, Move, MoveError, echo

from .agent_spec import AgentKind, AgentSpec
from .base import Agent

HELP = "commands: a move in the game's notation, '?' lists legal moves, 'board', 'quit'"


class HumanQuit(BoardzooError):
    """The human player quit (typed ``quit`` or closed the input)."""


class HumanAgent(Agent):
    """Reads moves from a text stream (stdin by default) and writes prompts to another."""

    def __init__(self, input: TextIO | None = None, output: TextIO | None = None) -> None:
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self._after: GameState | None = None  # the position our last move produced

    def reset(self) -> None:
        self._after = None

    def _opponent_move(self, state: GameState) -> str | None:
        """Return the notation of the move that led from our last position to ``state``."""
        return move_between(self._after, state)

    def _say(self, text: str) -> None:
        print(text, file=self.output, flush=True)

    def select_move(self, state: GameState) -> Move:
        name = state.player_names[state.to_move]
        last = self._opponent_move(state)
        if last is not None:
            self._say(f"{state.player_names[1 - state.to_move]} played {last}")
        self._say(state.render_text())
        self._say(f"{name} to move (ply {state.ply}); {HELP}")
        while True:
            self.output.write(f"{name}> ")
            self.output.flush()
            line = self.input.readline()
            if not line:
                raise HumanQuit(f"{name} (human) closed the input")
            text = line.strip()
            if not text:
                continue
            if text.lower() in ("quit", "exit", "resign"):
                raise HumanQuit(f"{name} (human) quit")
            if text in ("?", "help", "moves"):
                self._say("legal moves: " + " ".join(state.legal_move_strs()))
                continue
            if text.lower() == "board":
                self._say(state.render_text())
                continue
            try:
                move = state.parse_move(text)
            except MoveError as exc:
                starting = moves_from(state, text)
                if text == first_cell(text) and starting:  # a cell alone: show its moves
                    self._say(f"moves from {text}: {', '.join(starting)}")
                else:
                    self._say(f"rejected {echo(text)}: {exc}.{_hint(state, text)} "
                              "Try again ('?' lists legal moves).")
                continue
            self._after = state.apply(move)
            return move


#: A cell in every game's notation: letters then digits (``b1``, ``w19``, ``G19``).
CELL = re.compile(r"[A-Za-z]+[0-9]+")


def first_cell(text: str) -> str:
    """Return the cell that ``text`` starts with (the whole of ``w19`` in ``w19-G19``), or ""."""
    match = CELL.match(text.strip())
    return match.group(0) if match else ""


def moves_from(state: GameState, text: str) -> list[str]:
    """Return the legal moves whose first cell is the first cell of ``text``."""
    cell = first_cell(text)
    return [m for m in state.legal_move_strs() if cell and first_cell(m) == cell]


def _hint(state: GameState, text: str) -> str:
    """Return the legal moves from the cell ``text`` starts with, if there are a few."""
    near = moves_from(state, text)
    if not 0 < len(near) <= 12:
        return ""
    return f" Legal moves starting {first_cell(text)!r}: {', '.join(near)}."


#: The kind ``human``: no options but ``name=``.
AGENT_KIND = AgentKind("human")


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> HumanAgent:
    """Build ``human`` (no parameter; reads stdin, writes stdout)."""
    AGENT_KIND.bind(spec)
    return HumanAgent()


def move_between(before: GameState | None, state: GameState) -> str | None:
    """Return the notation of the one move that leads from ``before`` to ``state``, if any."""
    if before is None or before.is_terminal() or state.ply != before.ply + 1:
        return None
    key = state.key()
    for move in before.legal_moves():
        if before.apply(move).key() == key:
            return before.move_to_str(move)
    return None
