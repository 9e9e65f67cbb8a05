"""The pygame window (``render_mode="human"``) and the click agent ``gui``, driven headless
by posted mouse events as a person would click (SDL's dummy video driver)."""

# ruff: noqa: E402  (the video driver is chosen before pygame is imported)

from __future__ import annotations

import os
import random
import sys

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported: no screen needed
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pytest

pygame = pytest.importorskip("pygame")  # the dev extra has it: CI runs these

from boardzoo.agents import make_agent
from boardzoo.agents.arena.play import play_from
from boardzoo.agents.base import RandomAgent
from boardzoo.agents.greedy import GreedyAgent
from boardzoo.agents.gui import BAR, TARGET, GuiAgent, _button_boxes
from boardzoo.agents.human import HumanQuit
from boardzoo.cli import main
from boardzoo.envs import loa_v0, ultima_v0, whistling_v0
from boardzoo.envs.core.registry import get_spec, load_state
from boardzoo.envs.window import GuiUnavailable

ENVS = {"loa": loa_v0, "ultima": ultima_v0, "whistling": whistling_v0}
#: Black (to move) has no move: both its pieces are walled in by white ones.
LOA_PASS = "6wb/6ww/8/8/8/8/ww6/bw6 b 0"
#: White's pawn e1-e4 takes d4 and f4 at once; move 190, so the 400-ply cap ends it soon.
ULTIMA_DOUBLE = "7k/8/8/8/2Pp1pP1/8/8/K3P3 w 0 190"
#: Taylor's example (the rules' vectors): O's only turn is a two-hop chain w19-G19:D20-o1.
WHISTLING_CHAIN = (
    "s1,u1,r2,t2,v2,s3,u3,H14,J14,g15,i15,G15,I15,K15,f16,h16,j16,J16,g17,i17,D20/"
    "G5,I5,f6,h6,F6,H6,J6,e7,g7,i7,G7,I7,f8,h8,u19,w19,t20,v20,x20,u21,w21 o 1")


def post_click(x: float, y: float) -> None:
    """Post a left mouse click at pixel (x, y) of the window."""
    pos = (int(round(x)), int(round(y)))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))


class Clicker:
    """A person at the window: each time the agent waits, one click towards a chosen action.

    ``choose(turn)`` picks the action; the clicker clicks its piece (unless chosen already)
    and then its destination, or its button. ``turns`` collects the turns it meant to play.
    """

    def __init__(self, choose) -> None:
        self.choose = choose
        self.clicks: list[tuple[float, float]] = []
        self.turns: list[str] = []
        self.hops_per_turn: list[int] = []
        self._hops = 0
        self.seen_targets = False

    def __call__(self, agent: GuiAgent) -> None:
        turn = agent.turn
        if not turn.legal:  # the final position: any click leaves it
            post_click(5, 5)
            return
        if not self.clicks:
            action = self.choose(agent, turn)
            start, end = turn.cells[action]
            if start < 0:
                height, width = agent._picture.shape[:2]
                box = _button_boxes(width, height, turn)[action][0]
                self.clicks = [((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)]
            else:
                self.clicks = [] if turn.selected == start else [agent.where.centre(start)]
                self.clicks.append(agent.where.centre(end))
            _, text = agent.actions.apply_action(turn.state, action)
            self._hops += 1
            if text is not None:
                self.turns.append(text)
                self.hops_per_turn.append(self._hops)
                self._hops = 0
        elif turn.selected is not None and turn.targets():
            # the piece is chosen: its destinations are lit in the window
            shown = agent.window.pixels()
            x, y = agent.where.centre(next(iter(turn.targets())))
            assert tuple(shown[int(y), int(x)]) == TARGET
            self.seen_targets = True
        post_click(*self.clicks.pop(0))


def random_choice(seed: int):
    rng = random.Random(seed)
    return lambda agent, turn: rng.choice(turn.legal)


def greedy_choice(game: str):
    greedy = GreedyAgent(game, seed=0)
    # LOA and Ultima: a whole move is its own action number
    return lambda agent, turn: greedy.select_move(agent.actions.game_state(turn.state))


def play_clicks(game: str, position: str | None, clicker: Clicker):
    """Play a whole game of the gui agent (driven by ``clicker``, to move first) against
    random."""
    gui = GuiAgent(game, fps=1000)
    gui.idle = clicker
    state = load_state(game, position)
    agents = [gui, RandomAgent(1)] if state.to_move == 0 else [RandomAgent(1), gui]
    record = play_from(state, agents)
    gui.close()
    assert record.terminated
    assert record.moves[::2] == clicker.turns  # the clicks made exactly these moves
    assert clicker.seen_targets
    return record


@pytest.mark.parametrize("game", list(ENVS))
def test_human_render_mode_shows_the_rgb_picture_in_a_window(game):
    env = ENVS[game].env(render_mode="human")
    raw = env.unwrapped
    raw.metadata = {**raw.metadata, "render_fps": 1000}
    env.reset(seed=0)
    window = raw.window
    assert window.is_open and window.fps == 1000
    assert np.array_equal(window.pixels(), raw.render_rgb())
    rng = random.Random(0)
    for _ in range(3):
        env.step(rng.choice(raw.legal_actions()))
        assert np.array_equal(window.pixels(), raw.render_rgb())  # updated on every step
    assert env.render() is None
    env.close()
    assert not window.is_open and not pygame.display.get_init()


def test_human_window_closed_by_its_user_stays_closed_and_the_game_goes_on():
    env = whistling_v0.env(render_mode="human")
    raw = env.unwrapped
    raw.metadata = {**raw.metadata, "render_fps": 1000}
    env.reset(seed=0)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    env.step(raw.legal_actions()[0])  # the step's frame finds the close event
    assert raw.window.closed and not raw.window.is_open
    env.step(raw.legal_actions()[0])  # no window, no error
    assert raw.turns_played == 2
    env.close()


def test_single_agent_env_human_window_closes():
    from boardzoo.agents.single_agent import SingleAgentEnv
    env = SingleAgentEnv("loa", seed=0, render_mode="human")
    env.raw.metadata = {**env.raw.metadata, "render_fps": 1000}
    env.reset()
    assert env.raw.window.is_open
    env.close()
    assert not env.raw.window.is_open


def test_human_render_waits_for_render_fps():
    env = loa_v0.env(render_mode="human")
    raw = env.unwrapped
    raw.metadata = {**raw.metadata, "render_fps": 20}
    env.reset()
    started = pygame.time.get_ticks()
    for _ in range(4):
        env.step(raw.legal_actions()[0])
    assert pygame.time.get_ticks() - started >= 4 * 50 - 10  # 20 frames a second
    env.close()


def test_missing_pygame_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)  # import pygame now fails
    with pytest.raises(GuiUnavailable, match=r"pip install 'boardzoo\[gui\]'"):
        loa_v0.env(render_mode="human")
    with pytest.raises(GuiUnavailable, match=r"boardzoo\[gui\]"):
        make_agent("gui", "loa")
    loa_v0.env(render_mode="ansi")  # the other modes need no pygame


def test_loa_whole_game_by_clicks_with_a_pass():
    clicker = Clicker(greedy_choice("loa"))
    record = play_clicks("loa", LOA_PASS, clicker)
    assert record.moves[0] == "pass"  # clicked on the pass button
    assert len(record.moves) >= 3


def test_ultima_whole_game_by_clicks_with_a_double_capture():
    first = []

    def choose(agent, turn):
        if not first:
            first.append(agent.actions.str_to_action(turn.state, "e1e4"))
            return first[0]
        return greedy(agent, turn)

    greedy = greedy_choice("ultima")
    record = play_clicks("ultima", ULTIMA_DOUBLE, Clicker(choose))
    assert record.moves[0] == "e1e4xd4xf4"  # two clicks, two captures
    board = get_spec("ultima").state_cls.from_text(ULTIMA_DOUBLE).apply(first[0])
    assert board.cells()[27] is None and board.cells()[29] is None  # d4, f4 gone


def test_whistling_whole_game_by_clicks_with_a_two_hop_chain():
    clicker = Clicker(random_choice(3))
    record = play_clicks("whistling", WHISTLING_CHAIN, clicker)
    assert record.moves[0] == "w19-G19:D20-o1:r2s3"
    assert clicker.hops_per_turn[0] == 2  # clicked hop by hop: w19, G19, then o1


def test_whistling_chain_offers_only_maximum_capture_hops():
    gui = GuiAgent("whistling", fps=1000)
    spec = get_spec("whistling")
    state = spec.actions.initial_state(WHISTLING_CHAIN)
    seen = []

    def idle(agent):
        seen.append((agent.turn.selected, sorted(agent.turn.targets())))
        names = agent.where.name
        if len(seen) == 1:  # the turn's start: w19 is the only stone to move, G19 its only hop
            assert sorted(map(names, agent.turn.movable())) == ["w19"]
            post_click(*agent.where.centre(next(iter(agent.turn.movable()))))
        elif len(seen) == 2:
            assert [names(c) for c in agent.turn.targets()] == ["G19"]
            post_click(*agent.where.centre(agent.turn.selected))  # reselecting lets go
        elif len(seen) == 3:
            assert agent.turn.selected is None
            pygame.event.post(pygame.event.Event(pygame.QUIT))

    gui.idle = idle
    with pytest.raises(HumanQuit, match="closed the window"):
        gui.select_move(state.game)
    gui.close()


def test_illegal_clicks_are_refused_on_screen():
    gui = GuiAgent("loa", fps=1000)
    state = load_state("loa")
    steps = []
    where = gui.where

    def idle(agent):
        steps.append((agent.turn.message, agent.turn.refused))
        if len(steps) == 1:
            # the window shows exactly the rgb_array picture before any click
            height = agent._picture.shape[0]
            picture = get_spec("loa").render_rgb(state, None, "to move: black")
            assert np.array_equal(agent.window.pixels()[:height], picture)
            post_click(*where.centre(27))  # d4: empty
        elif len(steps) == 2:
            post_click(*where.centre(8))  # a2: a white piece
        elif len(steps) == 3:
            post_click(*where.centre(1))  # b1: black, chosen
        elif len(steps) == 4:
            post_click(*where.centre(1 + 8 * 5))  # b6: not a destination of b1
        elif len(steps) == 5:
            post_click(3, 3)  # the frame around the board
        elif len(steps) == 6:
            post_click(*where.centre(17))  # b3: legal

    gui.idle = idle
    move = gui.select_move(state)
    assert state.move_to_str(move) == "b1-b3"
    messages = [m for m, _ in steps]
    assert messages[1] == "refused: no legal move starts at d4" and steps[1][1]
    assert messages[2] == "refused: no legal move starts at a2"
    assert messages[3].startswith("b1 chosen") and not steps[3][1]
    assert messages[4] == "refused: b1 cannot move to b6"
    assert messages[5] == "refused: that is not a cell of the board"
    gui.close()


def test_refusal_shows_in_the_message_bar():
    gui = GuiAgent("ultima", fps=1000)
    bars = []

    def idle(agent):
        height = agent._picture.shape[0]
        bars.append(agent.window.pixels()[height:height + BAR])
        if len(bars) == 1:
            post_click(*agent.where.centre(36))  # e5: empty
        else:
            pygame.event.post(pygame.event.Event(pygame.QUIT))

    gui.idle = idle
    with pytest.raises(HumanQuit):
        gui.select_move(load_state("ultima"))
    reddish = (bars[1][:, :, 0] > 200) & (bars[1][:, :, 1] < 150)
    assert reddish.sum() > 50 and not ((bars[0][:, :, 0] > 200) & (bars[0][:, :, 1] < 150)).any()


def test_play_command_closing_the_window_abandons_the_game(monkeypatch, capsys):
    closes = []

    def close_window(agent):
        closes.append(agent.turn.message)
        pygame.event.post(pygame.event.Event(pygame.QUIT))

    monkeypatch.setattr(GuiAgent, "idle", staticmethod(close_window))
    assert main(["play", "loa", "--agents", "random", "gui", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "game 1 abandoned: white (gui) closed the window" in out
    assert closes == ["click a piece to move"]


def test_gui_takes_no_parameter():
    from boardzoo.agents.base import UnknownAgentError
    with pytest.raises(UnknownAgentError, match="no parameter"):
        make_agent("gui:1", "loa")
