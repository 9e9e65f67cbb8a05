"""A person playing with the mouse: the ``gui`` agent shows the board in a window, takes clicks.

Click a piece: it is ringed and the cells it can reach light up; click one of them to
play that move (click another piece to choose it instead, the ringed one again to let
go). An Ultima move's captures follow from the move. A Whistling chain is clicked hop
by hop: after each hop the moving stone stays chosen and only the hops that continue a
maximum capture light up. A move without a cell (LOA's pass, legal only when nothing
else is) is a button below the board, or the key P. A click that is no legal choice is
refused with a message below the board. Closing the window abandons the game
(:class:`~boardzoo.agents.human.HumanQuit`, as the terminal's ``quit``).

The agent works on the game's action level (one Whistling hop per action) and finds
cells through the descriptor's ``picture_cells`` and ``action_cells``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from boardzoo.envs.core.draw import PictureCells, font
from boardzoo.envs.core.game import GameState, Move
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.window import Window

from .agent_spec import AgentKind, AgentSpec
from .base import UnknownAgentError
from .human import HumanQuit, move_between
from .policy import ActionAgent

#: Height in pixels of the message bar below the picture.
BAR = 34
BAR_FILL = (36, 28, 22)
MESSAGE = (240, 240, 240)
REFUSED = (255, 120, 110)
CHOSEN = (30, 120, 230)
TARGET = (40, 170, 70)
BUTTON = (90, 70, 55)


@dataclass
class Turn:
    """What the window shows while the agent waits: the state, the choice so far, a message."""

    state: Any
    legal: list[int]
    #: (from, to) cells of each legal action.
    cells: dict[int, tuple[int, int]]
    selected: int | None = None
    message: str = ""
    refused: bool = False
    #: Cell-less legal actions (LOA's pass) with their button text.
    buttons: dict[int, str] = field(default_factory=dict)

    def targets(self) -> dict[int, int]:
        """Return destination cell -> action for the selected piece."""
        return {t: a for a, (f, t) in self.cells.items() if f == self.selected and f >= 0}

    def movable(self) -> set[int]:
        """Return the cells a legal action starts from."""
        return {f for f, _ in self.cells.values() if f >= 0}


def compose(picture: np.ndarray, where: PictureCells, turn: Turn) -> np.ndarray:
    """Return the window's frame: ``picture`` with the chosen piece ringed, its destinations
    dotted, and the message bar (with any buttons) below it."""
    height, width = picture.shape[:2]
    image = Image.new("RGB", (width, height + BAR), BAR_FILL)
    image.paste(Image.fromarray(picture), (0, 0))
    draw = ImageDraw.Draw(image)
    if turn.selected is not None:
        r = where.size * 0.47
        x, y = where.centre(turn.selected)
        draw.ellipse([x - r, y - r, x + r, y + r], outline=CHOSEN, width=4)
        d = max(where.size * 0.16, 6.0)  # hexes are small: a dot must stay visible
        for cell in turn.targets():
            x, y = where.centre(cell)
            draw.ellipse([x - d, y - d, x + d, y + d], fill=TARGET, outline=(255, 255, 255))
    for box, label in _button_boxes(width, height, turn).values():
        draw.rectangle(box, fill=BUTTON, outline=MESSAGE)
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), label, fill=MESSAGE,
                  font=font(14), anchor="mm")
    draw.text((8, height + BAR / 2), turn.message, fill=REFUSED if turn.refused else MESSAGE,
              font=font(14), anchor="lm")
    return np.asarray(image, dtype=np.uint8)


def _button_boxes(width: int, height: int, turn: Turn
                  ) -> dict[int, tuple[tuple[int, int, int, int], str]]:
    """Return action -> (box, label) of the buttons, right-aligned in the message bar."""
    boxes, right = {}, width - 6
    for action, label in turn.buttons.items():
        left = right - 12 - 8 * len(label)
        boxes[action] = ((left, height + 5, right, height + BAR - 5), label)
        right = left - 6
    return boxes


class GuiAgent(ActionAgent):
    """Takes a person's moves as mouse clicks in a pygame window (see the module doc)."""

    #: Called with the agent whenever it finds no event to handle (tests post clicks here).
    idle: Callable[[GuiAgent], None] | None = None

    def __init__(self, game: str, fps: float = 30.0) -> None:
        """Play ``game``; the window polls its events ``fps`` times a second."""
        spec = get_spec(game)
        if spec.render_rgb is None or spec.picture_cells is None or spec.action_cells is None:
            raise UnknownAgentError(f"{spec.name} has no picture to click on; use 'human'")
        self.game_spec = spec
        self.actions = spec.actions
        self.where: PictureCells = spec.picture_cells
        self.window = Window(f"{spec.long_name}: boardzoo", fps)
        #: What the window shows now (None before the first move).
        self.turn: Turn | None = None
        self._after: GameState | None = None  # the position our last move produced
        self._last: str | None = None  # the move to light in the picture
        self._mid = False  # True between the actions of one turn (a Whistling chain)
        self._picture: np.ndarray | None = None

    def reset(self) -> None:
        self._after = None

    def select_move(self, state: GameState) -> Move:
        self._last = move_between(self._after, state)
        actions = self.actions
        s = actions.from_game_state(state)
        self._mid = False
        while True:
            s, text = actions.apply_action(s, self.select_action(s))
            self._mid = True
            if text is not None:
                move = state.parse_move(text)
                self._after = state.apply(move)
                self._last = text
                self._show(Turn(s, [], {}, message="the other player is thinking..."))
                return move

    def finish(self, state: GameState) -> None:
        """Show the final position and its result until the window is clicked or closed."""
        self._last = move_between(self._after, state) or self._last
        result = state.outcome() if state.is_terminal() else "game stopped (max moves)"
        self._show(Turn(self.actions.from_game_state(state), [], {},
                        message=f"{result}: click or close the window"))
        while not self.window.closed:
            events = self.window.events()
            pg = self.window.pygame
            if any(e.type in (pg.MOUSEBUTTONDOWN, pg.KEYDOWN) for e in events):
                return
            self._wait(events)

    def select_action(self, state: Any) -> int:
        """Show ``state``, then handle clicks until one chooses a legal action; return it."""
        actions, action_cells = self.actions, self.game_spec.action_cells
        legal = actions.legal_actions(state)
        turn = Turn(state, legal, {a: action_cells(state, a) for a in legal})
        turn.buttons = {a: actions.action_to_str(state, a)
                        for a, (f, _) in turn.cells.items() if f < 0}
        if self._mid:  # a chain goes on with the stone that moved
            turn.selected = next(iter(turn.movable()))
        turn.message = self._prompt(turn)
        self._show(turn)
        while True:
            events = self.window.events()
            if self.window.closed:
                name = actions.game_state(state).player_names[actions.to_move(state)]
                raise HumanQuit(f"{name} (gui) closed the window")
            for event in events:
                chosen = self._handle(event, turn)
                if chosen is not None:
                    return chosen
                self._draw()
            self._wait(events)

    def click(self, turn: Turn, x: float, y: float) -> int | None:
        """Apply a left click at pixel (x, y) to ``turn``; return the action it chooses."""
        assert self._picture is not None
        height, width = self._picture.shape[:2]
        for action, (box, _) in _button_boxes(width, height, turn).items():
            if box[0] <= x <= box[2] and box[1] <= y <= box[3]:
                return action
        cell = self.where.cell_at(x, y) if y < height else None
        targets = turn.targets()
        if cell is not None and cell in targets:
            return targets[cell]
        if cell is not None and cell in turn.movable() and not self._mid:
            turn.selected = None if cell == turn.selected else cell
            turn.message, turn.refused = self._prompt(turn), False
            return None
        turn.message, turn.refused = self._refusal(turn, cell), True
        return None

    def close(self) -> None:
        """Close the window."""
        self.window.close()

    # -- internals ----------------------------------------------------------------------
    def _handle(self, event: Any, turn: Turn) -> int | None:
        """Update ``turn`` for one event; return an action once one is chosen."""
        pg = self.window.pygame
        if event.type == pg.KEYDOWN:
            if event.key == pg.K_p and turn.buttons:
                return next(iter(turn.buttons))
            if event.key == pg.K_ESCAPE and not self._mid:
                turn.selected = None
                turn.message, turn.refused = self._prompt(turn), False
            return None
        if event.type != pg.MOUSEBUTTONDOWN or event.button != 1:
            return None
        return self.click(turn, *event.pos)

    def _wait(self, events: list[Any]) -> None:
        """Let a test post its clicks when nothing happened, else wait for the next frame."""
        if not events and self.idle is not None:
            self.idle(self)
        else:
            self.window.tick()

    def _prompt(self, turn: Turn) -> str:
        """Return the message that says what to click next."""
        if turn.buttons and not turn.movable():
            return "no move on the board: click " + ", ".join(turn.buttons.values())
        if turn.selected is None:
            return "click a piece to move"
        where = self.where.name(turn.selected)
        if self._mid:
            return f"the chain goes on from {where}: click a lit cell"
        return f"{where} chosen: click a lit cell (or another piece)"

    def _refusal(self, turn: Turn, cell: int | None) -> str:
        """Return why a click on ``cell`` (None: off the board) does nothing."""
        if cell is None:
            return "refused: that is not a cell of the board"
        where = self.where.name(cell)
        if self._mid:
            return f"refused: the chain cannot go on to {where}; click a lit cell"
        if turn.selected is not None:
            return f"refused: {self.where.name(turn.selected)} cannot move to {where}"
        return f"refused: no legal move starts at {where}"

    def _show(self, turn: Turn) -> None:
        """Draw a new picture of ``turn``'s state and make it the turn on screen."""
        actions = self.actions
        game = actions.game_state(turn.state)
        caption = (game.outcome() if game.is_terminal()
                   else f"to move: {game.player_names[actions.to_move(turn.state)]}")
        self._picture = self.game_spec.render_rgb(turn.state, self._last, caption)
        self.turn = turn
        self._draw()

    def _draw(self) -> None:
        """Show the picture with the current turn's marks and message."""
        assert self._picture is not None and self.turn is not None
        self.window.show(compose(self._picture, self.where, self.turn))


#: The kind ``gui``: no options but ``name=``.
AGENT_KIND = AgentKind("gui")


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> GuiAgent:
    """Build ``gui`` (no parameter): a window that takes mouse clicks."""
    AGENT_KIND.bind(spec)
    return GuiAgent(game)
