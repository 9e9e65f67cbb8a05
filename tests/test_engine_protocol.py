"""The engine protocol's codec (agents/engine/protocol.py): every message kind formats to the
line docs/arena.md shows and parses back from it; malformed lines are errors that name the
line; the client and the server spell no protocol word themselves; `go nodes` in the server.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from boardzoo.agents.base import make_agent
from boardzoo.agents.engine import protocol
from boardzoo.agents.engine.protocol import (
    ANSWERS,
    COMMANDS,
    BestMove,
    Error,
    Feature,
    Game,
    Games,
    Go,
    Hello,
    Id,
    Info,
    IsReady,
    Legal,
    Limits,
    NewGame,
    Ok,
    Position,
    ProtocolError,
    ProtocolVersion,
    Quit,
    ReadyOk,
    parse_answer,
    parse_command,
)
from boardzoo.agents.engine.server import serve
from boardzoo.envs.core.registry import load_state

ENGINE = Path(protocol.__file__).resolve().parent
LOA_START = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 0"

#: Each message with the line docs/arena.md shows for it (its transcripts and table).
COMMAND_LINES = [
    (Hello(), "boardzoo 1"),
    (Game("loa"), "game loa"),
    (NewGame(7), "newgame seed 7"),
    (NewGame(), "newgame"),
    (IsReady(), "isready"),
    (Position(None, ("b1-b3", "h3-f1")), "position startpos moves b1-b3 h3-f1"),
    (Position(), "position startpos"),
    (Position(LOA_START), f"position text {LOA_START}"),
    (Position(LOA_START, ("b1-b3",)), f"position text {LOA_START} moves b1-b3"),
    (Legal(("G15-A15", "G15-A21", "G15-A9")), "legal G15-A15 G15-A21 G15-A9"),
    (Go(Limits(movetime=0.5)), "go movetime 0.5"),
    (Go(), "go"),
    (Go(Limits(nodes=400)), "go nodes 400"),
    (Go(Limits(1.5, 400)), "go movetime 1.5 nodes 400"),
    (Quit(), "quit"),
]
ANSWER_LINES = [
    (Id("name", "boardzoo alphabeta:2"), "id name boardzoo alphabeta:2"),
    (Id("author", "boardzoo"), "id author boardzoo"),
    (ProtocolVersion("1"), "protocol 1"),
    (Games(("loa", "ultima", "whistling")), "games loa ultima whistling"),
    (Feature(("legal",)), "feature legal"),
    (Ok(), "ok"),
    (ReadyOk(), "readyok"),
    (Info((("depth", "2"), ("score", "0.3636"), ("nodes", "127"), ("time", "0.015"))),
     "info depth 2 score 0.3636 nodes 127 time 0.015"),
    (Info((("depth", "3"), ("pv", "b1-b3 h2-f2"))), "info depth 3 pv b1-b3 h2-f2"),
    (BestMove("c1xa3"), "bestmove c1xa3"),
    (BestMove("w19-G19:D20-o1:r2s3"), "bestmove w19-G19:D20-o1:r2s3"),
    (Error("illegal move 'b1-b2'"), "error illegal move 'b1-b2'"),
]


def _id(case: tuple) -> str:
    return case[1][:30]


@pytest.mark.parametrize("case", COMMAND_LINES, ids=_id)
def test_each_command_formats_to_its_documented_line_and_parses_back(case) -> None:
    message, line = case
    assert message.format() == line
    assert parse_command(line) == message
    assert parse_command(f"  {line}  \n") == message  # a line's end and outer blanks


@pytest.mark.parametrize("case", ANSWER_LINES, ids=_id)
def test_each_answer_formats_to_its_documented_line_and_parses_back(case) -> None:
    message, line = case
    assert message.format() == line
    assert parse_answer(line) == message


def test_the_cases_cover_every_message_kind() -> None:
    assert {type(m) for m, _ in COMMAND_LINES} == set(COMMANDS.values())
    assert {type(m) for m, _ in ANSWER_LINES} == set(ANSWERS.values())
    assert sorted(COMMANDS) == ["boardzoo", "game", "go", "isready", "legal", "newgame",
                                "position", "quit"]
    assert sorted(ANSWERS) == ["bestmove", "error", "feature", "games", "id", "info", "ok",
                               "protocol", "readyok"]


def test_info_values_are_numbers_where_json_holds_them() -> None:
    info = parse_answer("info depth 3 score -0.25 big 1e999 long " + "9" * 31 + " x")
    assert info.values() == {"depth": 3, "score": -0.25, "big": "1e999", "long": "9" * 31}
    assert Error("two\nlines  here").format() == "error two lines here"


@pytest.mark.parametrize(("line", "message"), [
    ("fly", "unknown command 'fly'"),
    ("go movetime", "go takes 'movetime S' and/or 'nodes N', got 'movetime'"),
    ("go depth 3", "go: unknown limit 'depth'; use movetime, nodes"),
    ("go movetime soon", "go: movetime must be a number, got 'soon'"),
    ("go movetime -1", "go: movetime must be a positive number, got '-1'"),
    ("go movetime nan", "go: movetime must be a positive number, got 'nan'"),
    ("go movetime 1e10", "go: movetime must be at most 86400 seconds"),
    ("go nodes 0", "go: nodes must be a positive number, got '0'"),
    ("go nodes 2.5", "go: nodes must be a whole number, got 2.5"),
    ("newgame 5", "newgame takes 'seed N', got '5'"),
    ("newgame seed five", "newgame takes 'seed N', got 'seed five'"),
    ("position", "position takes 'startpos' or 'text TEXT'"),
    ("position middlegame", "got 'middlegame'"),
    ("position startpos extra", "got 'startpos extra'"),
    ("position text", "position takes 'startpos' or 'text TEXT'"),
])
def test_a_malformed_command_is_an_error_naming_the_line(line: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(message)) as caught:
        parse_command(line)
    assert caught.value.line == line


@pytest.mark.parametrize(("line", "message"), [
    ("bestmove", "'bestmove' without a move"),
    ("bestmove   ", "'bestmove' without a move"),
    ("id", "id takes 'KEY VALUE'"),
])
def test_a_malformed_answer_is_an_error_naming_the_line(line: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(message)) as caught:
        parse_answer(line)
    assert caught.value.line == line


def test_unknown_answers_and_blank_commands_are_nothing() -> None:
    assert parse_answer("copyprotection ok") is None  # future lines are ignored
    assert parse_answer("bestmovex a1") is None and parse_answer("") is None
    assert parse_command("   \n") is None


def _literals_naming_protocol_words(path: Path) -> list[str]:
    """String literals (docstrings aside) of ``path`` that are, or start with, a message's
    first word."""
    words = set(COMMANDS) | set(ANSWERS)
    found = []
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type != tokenize.STRING or tok.string.lstrip("rbfuRBFU")[:3] in ('"""', "'''"):
                continue
            body = tok.string.lstrip("rbfuRBFU")[1:-1]  # inside its quotes
            if body.split(" ", 1)[0].rstrip("{") in words:
                found.append(f"{path.name}: {tok.string}")
    return found


def test_client_server_and_process_spell_no_message_word() -> None:
    """Only the codec knows how a message is spelled (the server's default engine name,
    ``boardzoo AGENT``, and its ``id author boardzoo`` value are names, not messages)."""
    found = [f for name in ("client.py", "server.py", "process.py")
             for f in _literals_naming_protocol_words(ENGINE / name)]
    assert found == ['server.py: f"boardzoo {spec}"', 'server.py: "boardzoo"']


def _served(spec: str, commands: str) -> list[str]:
    out = io.StringIO()
    serve(spec, ["loa"], io.StringIO(commands), out)
    return out.getvalue().splitlines()


def test_go_nodes_sets_an_mcts_agents_simulations_for_that_move() -> None:
    out = _served("mcts:30", "newgame seed 1\nposition startpos\ngo nodes 7\n"
                  "position startpos moves b1-b3\ngo\n")
    assert out[0].startswith("info nodes 7 time ") and out[1].startswith("bestmove ")
    assert out[2].startswith("info nodes 30 time ")  # the spec's count again
    too_many = _served("mcts:30", "position startpos\ngo nodes 1000001\n")
    assert too_many == ["error go: nodes must be at most 1,000,000, got 1,000,001"]


def test_go_nodes_sets_a_network_agents_simulations_for_that_move() -> None:
    agent = make_agent("checkpoint:loa,sims=20,stop=off", "loa", seed=1)
    state = load_state("loa")
    assert agent.set_node_limit(3)
    agent.select_move(state)
    assert agent.stats()["evaluations"] == 3  # the root and two more leaves: 3 simulations
    assert agent.stats()["simulations"] == 3
    assert agent.set_node_limit(None) and agent.simulations == 20
    out = _served("checkpoint:loa,sims=20,stop=off", "position startpos\ngo nodes 3\n")
    assert out[0].startswith("info ") and " nodes 3 time " in out[0]  # simulations as nodes
    assert out[-1].startswith("bestmove ")
    raw = _served("checkpoint:loa,sims=0", "position startpos\ngo nodes 3\n")
    assert raw == ["error go: checkpoint:loa,sims=0 has no node or simulation budget; its "
                   "spec sets the search size: send go without nodes"]


def test_go_nodes_is_refused_by_an_agent_without_a_budget() -> None:
    out = _served("alphabeta:1", "position startpos\ngo nodes 7\ngo\n")
    assert out[0] == ("error go: alphabeta:1 has no node or simulation budget; its spec sets "
                      "the search size: send go without nodes")
    assert out[1].startswith("info depth 1 ") and out[2].startswith("bestmove ")
