"""The one agent-spec grammar (agents/agent_spec.py): its syntax, each kind's declared options
and their errors, and every spec that docs/ shows."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

from boardzoo.agents.agent_spec import (
    AgentKind,
    AgentSpec,
    UnknownAgentError,
    kind_of,
    pieces,
    spec_list,
    unquote,
)
from boardzoo.agents.base import AGENT_FACTORIES, LazyFactory, make_agent
from boardzoo.cli import main

REPO = Path(__file__).resolve().parent.parent


def declared(kind: str) -> AgentKind:
    """Return the options kind ``kind`` declares (its module's ``AGENT_KIND``)."""
    factory = AGENT_FACTORIES[kind]
    module = factory.module if isinstance(factory, LazyFactory) else factory.__module__
    try:
        return importlib.import_module(module).AGENT_KIND
    except ImportError as exc:  # an optional extra that this environment lacks
        pytest.skip(f"{kind}: {exc}")


def check(spec: str) -> dict:
    """Parse ``spec`` and check it against its kind's options (nothing is loaded or run)."""
    parsed = AgentSpec.parse(spec)
    return declared(parsed.kind).bind(parsed)


# -- the grammar -------------------------------------------------------------------------------
def test_a_spec_is_kind_value_options_and_flags() -> None:
    spec = AgentSpec.parse(" Checkpoint:Runs/A.pt,SIMS=100,stop=off,name=Bob ")
    assert (spec.text, spec.kind, spec.value) == ("checkpoint:Runs/A.pt,SIMS=100,stop=off,"
                                                  "name=Bob", "checkpoint", "Runs/A.pt")
    assert spec.options == {"sims": "100", "stop": "off", "name": "Bob"} and spec.name == "Bob"
    assert AgentSpec.parse("rllib:d,stochastic,Trust_Code").flags == ("stochastic", "trust_code")
    assert AgentSpec.parse("greedy,name=Al") == AgentSpec("greedy,name=Al", "greedy", None,
                                                          {"name": "Al"})
    # a first piece word=... is an option; a later bare piece that is no word is the value
    assert AgentSpec.parse("alphabeta:t=0.3s").options == {"t": "0.3s"}
    assert AgentSpec.parse("mcts:c=2,100").value == "100"
    # a value with '=' after no word is a value: a path, an engine's argument
    assert AgentSpec.parse("checkpoint:runs/a=b.pt").value == "runs/a=b.pt"
    assert AgentSpec.parse("engine:./eng --x=1").value == "./eng --x=1"


def test_quotes_and_backslashes_protect_commas() -> None:
    assert pieces('a "b,c" \'d,e\',f') == ['a "b,c" \'d,e\'', "f"]
    assert pieces(r"a\,b,c") == [r"a\,b", "c"]
    assert pieces(r'"a\",b",c') == [r'"a\",b"', "c"]  # \" does not close the quote
    assert pieces(r"'a\',b") == [r"'a\'", "b"]  # no escapes inside single quotes
    spec = AgentSpec.parse(r'''engine:'./my eng' "--o=a,b",name="A, B",movetime=1''')
    assert spec.value == '''\'./my eng' "--o=a,b"'''  # as written: the shell splits it later
    assert spec.options == {"name": "A, B", "movetime": "1"}  # option values: unquoted
    assert AgentSpec.parse(r"greedy,name=a\,b\\c").name == r"a,b\c"
    assert unquote(r"C:\runs\best.pt") == r"C:\runs\best.pt"  # other backslashes stay
    assert unquote(r'''"say \"hi\"" 'it''s' ''') == '''say "hi" its '''


def test_empty_values() -> None:
    assert AgentSpec.parse("mcts:").value is None and AgentSpec.parse("mcts: ").value is None
    assert make_agent("mcts:", "loa", 0).simulations == 200  # as plain ``mcts``
    for spec, message in [("greedy,name=", "name= needs a name"),
                          ("mcts:5,c=", "c must be a number >= 0, got ''"),
                          ("mcts:5,,c=1", "an empty option"), ("random,", "an empty option"),
                          ("checkpoint:", "needs a path or game name")]:
        with pytest.raises(UnknownAgentError, match=re.escape(message)):
            make_agent(spec, "loa", 0)


@pytest.mark.parametrize(("spec", "message"), [
    ("mcts:5,c=1,C=2", "c given twice"),
    ("greedy,name=a,name=b", "name given twice"),
    ("sb3:m.zip,stochastic,stochastic", "stochastic given twice"),
    ("mcts:5,6", "two values, '5' and '6'"),
    ("alphabeta:3,depth=4", "depth given twice"),
    ("mcts:100,sims=5", "sims given twice"),
    ("engine:'./unclosed", "no closing quotation (')"),
    ('engine:"./unclosed', 'no closing quotation (")'),
])
def test_the_grammar_refuses(spec: str, message: str) -> None:
    with pytest.raises(UnknownAgentError, match=re.escape(message)):
        check(spec)


def test_a_refused_spec_is_one_line_and_exit_2_on_the_cli(capsys) -> None:
    assert main(["play", "loa", "--agents", "alphabeta:dpeth=3", "random"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["boardzoo: error: agent alphabeta: unknown option 'dpeth'; options: "
                   "depth=D, t=S, eval=hand|learned|FILE, name=NAME"]


# -- each kind's options -------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "message"), [
    ("random:3", "agent 'random' takes no parameter"),
    ("random,c=1", "agent random: unknown option 'c'; options: name=NAME"),
    ("greedy:x", "agent 'greedy' takes no parameter"),
    ("human,depth=2", "agent human: unknown option 'depth'; options: name=NAME"),
    ("mcts:0", "agent mcts: sims must be a whole number >= 1, got '0'"),
    ("mcts:10,q=3", "agent mcts: unknown option 'q'; options: sims=N, c=C, cap=P, name=NAME"),
    ("mcts:10,c=-1", "agent mcts: c must be a number >= 0, got '-1'"),
    ("mcts:10,c=nan", "agent mcts: c must be a number >= 0, got 'nan'"),
    ("mcts:10,cap=1.5", "agent mcts: cap must be a whole number >= 0, got '1.5'"),
    ("mcts:10,c", "agent mcts: c needs a value: c=C"),
    ("alphabeta:0", "agent alphabeta: depth must be a whole number >= 1, got '0'"),
    ("alphabeta:t=fast", "agent alphabeta: t must be a positive time such as 0.5s, 0.5 or "
                         "500ms, at most 86400 seconds (a day), got 'fast'"),
    ("alphabeta:t=2d", "t must be a positive time"),
    ("alphabeta:dpeth=3", "agent alphabeta: unknown option 'dpeth'; options: depth=D, t=S, "
                          "eval=hand|learned|FILE, name=NAME"),
    ("checkpoint:loa,sims=-1", "agent checkpoint: sims must be a whole number >= 0, got '-1'"),
    ("checkpoint:loa,root=x", "agent checkpoint: root must be puct or gumbel, got 'x'"),
    ("checkpoint:loa,m=0", "agent checkpoint: m must be a whole number >= 1, got '0'"),
    ("checkpoint:loa,ptemp=0", "agent checkpoint: ptemp must be a number > 0, got '0'"),
    ("checkpoint:loa,forced=yes", "agent checkpoint: forced must be skip or search, got 'yes'"),
    ("checkpoint:loa,win1=1", "agent checkpoint: win1 must be on or off, got '1'"),
    ("checkpoint:loa,leaf=9", "agent checkpoint: leaf must be a whole number from 0 to 8"),
    ("checkpoint:loa,stop=maybe", "agent checkpoint: stop must be on or off, got 'maybe'"),
    ("checkpoint:loa,depth=3", "agent checkpoint: unknown option 'depth'; options: sims=N, "
                               "root=puct|gumbel, m=N, ptemp=T, forced=skip|search, "
                               "win1=on|off, leaf=D, stop=on|off, batch=N, name=NAME"),
    ("checkpoint:loa,trust_code", "agent checkpoint: unknown option 'trust_code'"),
    ("engine:./e,movetime=0", "agent engine: movetime must be a positive time"),
    ("engine:./e,nodes=0", "agent engine: nodes must be a whole number >= 1, got '0'"),
    ("engine:./e,grace=-1", "agent engine: grace must be a time of 0 or more"),
    ("engine:./e,depth=3", "agent engine: unknown option 'depth'; options: movetime=S, "
                           "nodes=N, timeout=S, grace=S, name=NAME"),
    ('engine:""', "agent engine: command must be a program and its arguments"),
    ("engine:", "agent engine needs a command: engine:COMMAND[,movetime=S][,nodes=N]"),
    ("sb3:m.zip,fast", "agent sb3: unknown option 'fast'; options: stochastic, trust_code, "
                       "name=NAME"),
    ("sb3:m.zip,stochastic=1", "agent sb3: stochastic is a flag: write ,stochastic"),
    ("sb3:,stochastic", "agent sb3 needs a model file: sb3:PATH[,stochastic][,trust_code]"),
    ("openspiel_mcts:4,leaf=nn", "agent openspiel_mcts: leaf must be rollout or eval, got 'nn'"),
    ("openspiel_mcts:4,depth=2", "agent openspiel_mcts: unknown option 'depth'; options: "
                                 "sims=N, leaf=rollout|eval, c=X, name=NAME"),
])
def test_option_errors_name_the_option_and_what_it_allows(spec: str, message: str) -> None:
    with pytest.raises(UnknownAgentError, match=re.escape(message)):
        check(spec)


def test_options_give_typed_values_and_defaults() -> None:
    assert check("mcts") == {"sims": None, "c": 1.0, "cap": None}
    assert check("MCTS:sims=200,c=1.4") == {"sims": 200, "c": 1.4, "cap": None}
    assert check("mcts:20,cap=8") == check("mcts:sims=20,cap=8")
    assert check("alphabeta:t=500ms") == {"depth": None, "t": 0.5, "eval": "hand"}
    assert check("alphabeta:6,t=2s,eval=learned") == {"depth": 6, "t": 2.0, "eval": "learned"}
    assert check("engine:'./my eng' -x,movetime=0.5s,name=E") == {
        "command": ["./my eng", "-x"], "movetime": 0.5, "nodes": None, "timeout": 30.0,
        "grace": 1.0}
    assert check("checkpoint:loa,sims=0,forced=skip,win1=off") == {
        "path": "loa", "sims": 0, "root": None, "m": None, "ptemp": None, "forced": True,
        "win1": False, "leaf": None, "stop": None, "batch": 1}
    assert check("sb3:'my dir/m.zip',trust_code") == {"path": "my dir/m.zip",
                                                       "stochastic": False, "trust_code": True}


def test_rllib_refuses_a_folder_without_trust_code_before_loading_anything() -> None:
    with pytest.raises(UnknownAgentError, match="unpickles"):
        make_agent("rllib:/no/such/folder,stochastic", "loa", 0)
    with pytest.raises(UnknownAgentError, match="unpickles"):
        make_agent("rllib:/no/such/folder,trust_code=yes", "loa", 0)  # an option, not the flag


def test_agent_lists_keep_each_specs_options() -> None:
    assert spec_list('random,mcts:20,c=1.5,checkpoint:loa,sims=0,name="A, B",'
                       "engine:./e --x=1,movetime=1") == [
        "random", "mcts:20,c=1.5", 'checkpoint:loa,sims=0,name="A, B"',
        "engine:./e --x=1,movetime=1"]


# -- every spec docs/ shows -----------------------------------------------------------------------
#: Specs docs/arena.md shows as refused.
REFUSED_IN_DOCS = {"mcts:abc", "alphabeta:0", "greedy:3", "mcts:400,sims=5",
                   "alphabeta:3,depth=4", "mcts:5,,c=1"}
KINDS = "|".join(sorted(AGENT_FACTORIES, key=len, reverse=True))
#: An inline spec: a kind (any case) with a value or options.
INLINE = re.compile(rf"`((?:{KINDS})[:,][^`]+)`", re.I)
#: A placeholder or an elision, not an example (``mcts:N``, ``checkpoint:...,ptemp=T``).
PLACEHOLDER = re.compile(r"[:=,][A-Z]+\b(?!\.)|\.\.\.|\[|\]|#|\\\|")
#: An opening spec (``--openings random:N``), not an agent.
OPENING = re.compile(r"random:\d+")
COMMAND = re.compile(r"boardzoo (?:play|tournament|match|engine) [^`\n]*")


def command_specs(line: str) -> list[str]:
    """Return the agent specs of one ``boardzoo play|tournament|match|engine`` command line."""
    try:
        words = shlex.split(line.rstrip("\\ "), comments=True)
    except ValueError:  # prose around the command, cut by a backtick or a line end
        return []
    specs: list[str] = []
    for k, word in enumerate(words):
        nxt = words[k + 1:]
        if word == "--agents" and words[1] == "play":
            specs += [w for w in nxt[:2] if not w.startswith("-")]
        elif word == "--agents" and nxt:
            specs += spec_list(nxt[0])
        elif word == "--agent" and nxt:
            specs.append(nxt[0])
    if words[1] == "match":
        specs += words[2:4]
    if words[1] == "engine":
        specs += words[2:3]
    return [s for s in specs if s not in ("A", "B", "AGENT", "SPEC") and not PLACEHOLDER.search(s)]


def inline_specs(span: str) -> list[str]:
    """Return the specs of an inline span: one spec, or a list (``random,greedy,mcts:60``,
    ``mcts:20,c=1.5,checkpoint:loa,sims=0``): a piece that starts with a kind starts a spec."""
    specs: list[str] = []
    for piece in pieces(span):
        if not specs or kind_of(piece) in AGENT_FACTORIES:
            specs.append(piece)
        else:
            specs[-1] += "," + piece
    return specs


def docs_specs() -> list[tuple[str, str]]:
    """Return (page, spec) for every spec example in docs/*.md and README.md."""
    found: dict[tuple[str, str], None] = {}
    for page in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]:
        lines = page.read_text().replace("\\\n", " ").splitlines()  # one line per command
        for k, line in enumerate(lines):
            answer = lines[k + 1] if k + 1 < len(lines) else ""
            for command in COMMAND.findall(line):
                if not answer.startswith("boardzoo: error:") and "|" not in command:
                    for spec in command_specs(command):
                        found[page.name, spec] = None
            for span in INLINE.findall(line):
                for spec in inline_specs(span):
                    if not PLACEHOLDER.search(spec) and spec not in REFUSED_IN_DOCS \
                            and not OPENING.fullmatch(spec):
                        found[page.name, spec] = None
    return list(found)


def test_the_docs_show_specs_of_every_common_kind() -> None:
    kinds = {AgentSpec.parse(spec).kind for _, spec in docs_specs()}
    assert {"random", "greedy", "mcts", "alphabeta", "checkpoint", "engine", "sb3", "rllib",
            "openspiel_mcts", "human", "gui"} <= kinds
    assert len(docs_specs()) > 40  # guards the extraction


@pytest.mark.parametrize(("page", "spec"), docs_specs(), ids=[f"{p}:{s}" for p, s in docs_specs()])
def test_every_spec_the_docs_show_parses(page: str, spec: str) -> None:
    check(spec)


@pytest.mark.parametrize("spec", sorted(REFUSED_IN_DOCS))
def test_the_specs_the_docs_call_bad_are_refused(spec: str) -> None:
    with pytest.raises(UnknownAgentError):
        check(spec)
