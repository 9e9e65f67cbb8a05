"""A human player at the terminal: shows the board, reads a move, explains rejections."""

from __future__ import annotations

import sys
from typing import TextIO

from boardzoo.envs.core.game import BoardzooError, GameState, Move, MoveError

from .base import Agent, no_arg

HELP = "commands: a move in the game's notation, '?' lists legal moves, 'board', 'quit'"


class HumanQuit(BoardzooError):
    """The human player quit (typed ``quit`` or closed the input)."""


class HumanAgent(Agent):
    """Reads moves from a text stream (stdin by default) and writes prompts to another."""

    def __init__(self, input: TextIO | None = None, output: TextIO | None = None) -> None:
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout

    def _say(self, text: str) -> None:
        print(text, file=self.output, flush=True)

    def select_move(self, state: GameState) -> Move:
        name = state.player_names[state.to_move]
        self._say(state.render_text())
        self._say(f"{name} to move (ply {state.ply}); {HELP}")
        while True:
            self.output.write(f"{name}> ")
            self.output.flush()
            line = self.input.readline()
            if not line:
                raise HumanQuit(f"{name} (human) closed the input: game abandoned")
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
                return state.parse_move(text)
            except MoveError as exc:
                self._say(f"rejected {text!r}: {exc}. Try again ('?' lists legal moves).")


def from_spec(arg: str | None, game: str, seed: int | None) -> HumanAgent:
    """Build ``human`` (no parameter; reads stdin, writes stdout)."""
    no_arg("human", arg)
    return HumanAgent()
