"""Fuzz every user-facing entry point with inputs mutated from valid ones.

Each case feeds one mutated input to one entry point and classifies the outcome:
``ok`` (accepted), ``clean`` (the documented error: a ``BoardzooError``, or exit
status 2 with exactly one ``boardzoo: error:`` line from the CLI), ``traceback``
(any other exception, or a CLI failure that is not one clean line) or ``hang``
(no answer within ``--timeout`` seconds). A clean campaign has no tracebacks and
no hangs.

Entry points, per game: position text (rules, ``boardzoo legal``/``perft``, the
env's ``reset(options={"position": ...})``), move text (``parse_move``, the env's
``move_str_to_action``); and once: agent specs, YAML configs and ``--set``,
checkpoints with flipped bytes, games.jsonl with torn or foreign lines. Hostile inputs
built to be absurd (issue 23): actions that are not integers (raw, wrapped and vector envs,
per game), absurd config values and YAML alias bombs, model files whose config is absurd or
a list bomb, SB3 zips whose ``:serialized:`` field is a pickle (outcome ``code_run`` if a
loader ran it), games.jsonl lines of deeply nested JSON. Round three (issue 46): counters of
positions and capture counts up to 10,000 digits (per game), ``boardzoo engine``'s server
fed hostile stdin (long lines, bad ``go`` limits, unknown commands; per game), YAML with
duplicate keys, deep nesting or bytes that are not UTF-8, report folders and records with
non-UTF-8 bytes and terminal escapes, and outside engines that flood ``info``/``feature``,
answer a 1 MB move or leave their process group (``engine_flood``: real processes, so
``cases // 100`` of them; a process left 2 s after the game or a record over 200 KB is a traceback).

    python bench/fuzz.py --cases 10000          # per game and entry point
Last line: one JSON object (cases, ok, clean_errors, tracebacks, hangs, code_runs, peak
resident memory of the campaign and of its largest child in MB, per entry point).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from boardzoo.agents import make_agent
from boardzoo.agents.arena.records import read_games
from boardzoo.agents.arena.report import build
from boardzoo.agents.arena.viewer import page_data
from boardzoo.cli import main as cli_main
from boardzoo.envs.aec import BoardGameEnv, make_env
from boardzoo.envs.core.game import BoardzooError
from boardzoo.envs.core.registry import GAMES, get_spec
from boardzoo.training.checkpoint import load
from boardzoo.training.config import apply_overrides, load_config

REPO = Path(__file__).resolve().parent.parent
ALPHABET = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
            " /-:x=,.[]{}\n\t'\"#é€\x00")


class Hang(Exception):
    """A case that did not finish within the time limit."""


def mutate(text: str, rng: random.Random) -> str:
    """Return ``text`` after 1-3 random edits (delete, insert, replace, duplicate, cut, or a
    short random string); mostly one edit, so that many cases stay close to valid."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        i = rng.randrange(len(text) + 1)
        op = rng.choice((0, 0, 1, 1, 2, 2, 2, 3, 4, 5))
        if op == 0 and text:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + rng.choice(ALPHABET) + text[i:]
        elif op == 2 and text:
            text = text[:i] + rng.choice(ALPHABET) + text[i + 1:]
        elif op == 3 and text:
            j = rng.randrange(len(text) + 1)
            a, b = min(i, j), max(i, j)
            text = text[:b] + text[a:b] + text[b:]
        elif op == 4:
            text = text[:i]
        else:
            text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(12)))
    return text


def _positions(game: str, rng: random.Random, n: int = 12) -> list[str]:
    """Return position texts along a few random games of ``game`` (the mutation seeds)."""
    spec = get_spec(game)
    out = []
    state = spec.start()
    for _ in range(n):
        out.append(state.to_text())
        moves = state.legal_moves()
        if not moves:
            state = spec.start()
            continue
        for _ in range(rng.randint(1, 6)):
            moves = state.legal_moves()
            if not moves:
                break
            state = state.apply(rng.choice(list(moves)))
    return out


# -- entry points: each takes (game, rng) and returns a callable that runs one case ---------
def case_position_rules(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    text = mutate(rng.choice(seeds), rng)

    def run() -> None:
        state = get_spec(game).state_cls.from_text(text)
        state.legal_move_strs()
    return run


def case_position_cli(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    text = mutate(rng.choice(seeds), rng)
    argv = (["legal", game, "--position", text] if rng.random() < 0.7
            else ["perft", game, "1", "--position", text])
    return lambda: _cli(argv)


def case_position_env(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    text = mutate(rng.choice(seeds), rng)

    def run() -> None:
        env = BoardGameEnv(game)
        env.reset(options={"position": text})
        env.observe(env.agent_selection)
    return run


def case_move(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    spec = get_spec(game)
    state = spec.state_cls.from_text(rng.choice(seeds))
    moves = state.legal_move_strs() or ["a1-a2"]
    text = mutate(rng.choice(moves), rng)
    use_env = rng.random() < 0.5

    def run() -> None:
        if use_env:
            env = BoardGameEnv(game, position=state.to_text())
            env.reset()
            env.move_str_to_action(text)
        else:
            state.parse_move(text)
    return run


def _cli(argv: list[str]) -> None:
    """Run the CLI in-process; raise unless it exits 0, or 2 with one clean error line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(argv)
        except SystemExit as exc:  # argparse --help and friends
            code = exc.code if isinstance(exc.code, int) else 2
    lines = err.getvalue().strip().splitlines()
    if code == 2 and len(lines) == 1 and lines[0].startswith("boardzoo: error: "):
        raise BoardzooError(lines[0])
    if code != 0:
        raise RuntimeError(f"exit {code}: {err.getvalue()[-500:]}")


SPECS = ["random", "greedy", "mcts:50", "mcts:20,c=1.5", "alphabeta:2", "alphabeta:t=0.5s",
         "checkpoint:loa,sims=0", "openspiel_mcts:10,leaf=eval", "human"]


def case_agent_spec(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    spec = mutate(rng.choice(SPECS), rng)
    return lambda: make_agent(spec, game, 0)


CONFIGS = sorted((REPO / "configs").glob("*.yaml"))


def case_config(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    text = mutate(rng.choice(CONFIGS).read_text(), rng)
    override = mutate(rng.choice(["mcts.simulations=64", "train.lr=1e-3", "iterations=5",
                                  "eval.baselines=[random, greedy]", "model.blocks=2"]), rng)

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "c.yaml"
            path.write_text(text, errors="surrogatepass")
            if rng.random() < 0.5:
                load_config(path)
            else:
                load_config(CONFIGS[0], [override])
                apply_overrides({}, [override])
    return run


def case_checkpoint(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    data = bytearray((REPO / "agents" / "nets" / "loa.pt").read_bytes())
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    if rng.random() < 0.3:
        data = data[: rng.randrange(len(data))]
    spec_game = rng.choice(GAMES)

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "m.pt"
            path.write_bytes(bytes(data))
            load(path)
            make_agent(f"checkpoint:{path},sims=0", spec_game, 0)
    return run


def case_games_file(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    good = {"id": "a|b|0", "game": game, "players": ["random", "greedy"], "scores": [0.0, 1.0],
            "result": "0-1", "moves": [], "seed": 1, "plies": 3, "seconds": 0.1}
    lines = [json.dumps({**good, "id": f"a|b|{i}", "scores": [float(i % 2), 1.0 - i % 2]})
             for i in range(4)]
    k = rng.randrange(len(lines))
    lines[k] = mutate(lines[k], rng)
    text = "\n".join(lines) + ("\n" if rng.random() < 0.7 else "")

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "games.jsonl"
            path.write_text(text, errors="surrogatepass")
            build(read_games(path, repair=rng.random() < 0.5))
    return run


# -- hostile inputs (issue 23): built to be absurd rather than mutated from valid ones --------
ABSURD = ["-1", "100000000000000000000", "1e308", ".inf", "-.inf", ".nan", "1e-400", "0",
          "9" * 5000, "x" * 100_000, "[1, [2, [3]]]", "{a: 1}", "true", "''", "2.5", "-0.0"]


def alias_bomb(levels: int, key: str) -> str:
    """Return a small YAML config whose ``key`` stands for 10^levels items (anchors)."""
    lines = ["game: loa", "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for k in range(1, levels):
        lines.append(f"x{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    section, _, name = key.rpartition(".")
    value = f"*a{levels - 1}"
    lines.append(f"{section}: {{{name}: {value}}}" if section else f"{name}: {value}")
    return "\n".join(lines) + "\n"


def ranged_keys() -> list[str]:
    """Return the config keys that declare a range, sorted."""
    from boardzoo.training.config_schema import KEYS

    return sorted(name for name, k in KEYS.items() if k.range is not None)


def case_absurd_config(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    key = rng.choice(ranged_keys() + ["eval.baselines", "mcts.root", "game"])
    kind = rng.random()

    def run() -> None:
        if kind < 0.5:  # an absurd value through --set
            load_config(CONFIGS[0], [f"{key}={rng.choice(ABSURD)}"])
            return
        with tempfile.TemporaryDirectory() as tmp:  # an alias bomb in a file or a --set
            path = Path(tmp) / "bomb.yaml"
            path.write_text(alias_bomb(rng.randint(1, 9), key))
            if kind < 0.8:
                load_config(path)
            else:
                load_config(CONFIGS[0], [f"{key}=[&a {rng.choice(ABSURD)[:50]}, *a, *a]"])
    return run


def shared_lists(levels: int) -> list:
    """Return a list that stands for 10^levels items but is ``levels`` lists in memory."""
    value: list = [1] * 10
    for _ in range(levels - 1):
        value = [value] * 10
    return value


@functools.cache
def _shipped_loa() -> dict:
    """Return the shipped LOA model file's contents (read once: the cases copy its config)."""
    import torch

    return torch.load(REPO / "agents" / "nets" / "loa.pt", map_location="cpu",
                      weights_only=True)


def case_model_config(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    import torch

    data = _shipped_loa()
    config = {k: dict(v) if isinstance(v, dict) else v for k, v in data["config"].items()}
    key = rng.choice(ranged_keys())
    section, _, name = key.rpartition(".")
    where = config.setdefault(section, {}) if section else config  # older files lack play
    r = rng.random()
    where[name] = (shared_lists(rng.randint(2, 9)) if r < 0.3
                   else rng.choice([10**7, -5, 10**30, float("inf"), float("nan"), "x" * 10**5])
                   if r < 0.9 else {"deep": shared_lists(9)})

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "m.pt"
            torch.save({**data, "config": config}, path)
            make_agent(f"checkpoint:{path},sims=0", "loa", 0)
    return run


class _Marker:
    """Pickles as a call that creates a file: proof that a loader ran code from a model."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


class CodeRun(Exception):
    """A loader ran code that a crafted model file carried."""


def case_sb3_zip(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    import base64
    import pickle
    import zipfile

    field = rng.choice(["policy_class", "observation_space", "action_space", "lr_schedule",
                        "policy_kwargs", "_last_obs"])
    shape = rng.random()

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            marker = Path(tmp) / "ran"
            payload = pickle.dumps(_Marker(marker), protocol=rng.choice([2, 4, 5]))
            if shape < 0.2:  # a cut pickle
                payload = payload[: rng.randrange(len(payload))]
            blob = base64.b64encode(payload).decode()
            if shape > 0.9:
                blob = mutate(blob, rng)
            data = {field: {":type:": "<class 'type'>", ":serialized:": blob},
                    "n_envs": 1, "num_timesteps": 0}
            if 0.2 <= shape < 0.4:  # layer sizes as data: a network too large to build
                data["policy_kwargs"] = {":type:": "<class 'dict'>", ":serialized:": blob,
                                         "net_arch": [10 ** rng.randint(3, 9)] * 8}
            path = Path(tmp) / "evil.zip"
            with zipfile.ZipFile(path, "w") as z:
                z.writestr("data", json.dumps(data))
                z.writestr("_stable_baselines3_version", "2.9.2")
                if rng.random() < 0.5:
                    z.writestr("policy.pth", b"")
            try:
                make_agent(f"sb3:{path}", game, 0)
            finally:
                if marker.exists():
                    raise CodeRun(f"sb3: loading a crafted zip ran its pickle ({field})")
    return run


def case_nested_json(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    depth = rng.choice([10, 100, 900, 5000, 100_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}"), ('[{"b":', "}]")])
    nested = opener * depth + "0" + closer * depth
    good = {"id": "a|b|0", "game": game, "players": ["random", "greedy"], "scores": [0.0, 1.0],
            "result": "0-1", "moves": [], "seed": 1, "plies": 0, "seconds": 0.1,
            "think_seconds": rng.choice([[0.1, 0.2], "x", None, [float("nan"), 1]])}
    line = json.dumps(good)
    if rng.random() < 0.5:
        line = nested  # the whole line
    else:  # inside a field of a record
        field = rng.choice(['"moves": []', '"seconds": 0.1', '"id": "a|b|0"'])
        line = line.replace(field, field.split(":")[0] + ": " + nested)

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "games.jsonl"
            path.write_text(line + "\n")
            records = read_games(path)
            build(records)
            page_data(records)
    return run


ACTIONS = [8.9, 8.0, "8", True, False, None, -1, 10**6, 10**30, [1], {"a": 1}, b"8", 2 + 0j,
           float("nan"), float("inf")]


@functools.cache
def _vector_env(game: str):
    """Return a two-game vector env of ``game`` (made once: each case resets it)."""
    from boardzoo.envs.vector import BoardzooVectorEnv

    return BoardzooVectorEnv(game, 2)


def case_action(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    import numpy as np

    choice = rng.choice(ACTIONS + [np.float32(3.5), np.bool_(True), np.int64(5),
                                   np.array([1, 2]), np.array(7.0), np.array(3)])
    where = rng.choice(["raw", "wrapped", "vector"])

    def run() -> None:
        if where == "vector":
            env = _vector_env(game)
            env.reset(seed=0)
            legal = env.random_actions()
            bad = rng.choice([legal + 0.5, legal.astype(float), [choice, choice],
                              np.array([choice, choice], dtype=object), legal.astype(bool)])
            env.step(bad)
            return
        env = BoardGameEnv(game) if where == "raw" else make_env(game)
        env.reset()
        env.step(choice)
    return run


# -- round three (issue 46): long counters, hostile bytes and YAML, engines and the server -----
def case_long_number(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    """A counter field of a position (or a Whistling capture count) of up to 10,000 digits."""
    fields = rng.choice(seeds).split()
    counters = [k for k, f in enumerate(fields) if f.isdigit()] or [len(fields) - 1]
    k = rng.choice(counters)
    fields[k] = rng.choice("123456789") + "9" * rng.choice([17, 18, 30, 4300, 4301, 10_000])
    text = " ".join(fields)
    where = rng.choice(["rules", "env", "cli", "move"])

    def run() -> None:
        if where == "rules":
            get_spec(game).state_cls.from_text(text)
        elif where == "env":
            BoardGameEnv(game).reset(options={"position": text})
        elif where == "cli":
            _cli(["legal", game, "--position", text])
        else:
            state = get_spec(game).state_cls.from_text(seeds[0])
            state.parse_move(state.legal_move_strs()[0] + ":" + fields[k])
    return run


HOSTILE_YAML = ["game: loa\ngame: ultima\n",
                "game: loa\nmcts:\n  simulations: 8\n  simulations: 9\n",
                "game: loa\nmcts: {c_puct: 1, c_puct: 2}\n",
                "game: loa\nmcts: {simulations: " + "[" * 400 + "]" * 400 + "}\n",
                "game: loa\nx: " + "{a: " * 200 + "1" + "}" * 200 + "\n"]


def case_hostile_yaml(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    """Duplicate keys, deep nesting and bytes that are not UTF-8, in a file or a --set."""
    text = mutate(rng.choice(HOSTILE_YAML), rng) if rng.random() < 0.3 else rng.choice(HOSTILE_YAML)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.4:
        i = rng.randrange(len(data) + 1)
        data = data[:i] + bytes(rng.choice([0xFF, 0xFE, 0xC3, 0x80, 0xED])
                                for _ in range(rng.randint(1, 3))) + data[i:]
    as_set = rng.random() < 0.3

    def run() -> None:
        if as_set:
            load_config(CONFIGS[0], ["mcts.simulations=" + "[" * rng.choice([33, 400, 5000])
                                     + "]" * 400])
            return
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "c.yaml"
            path.write_bytes(data)
            _cli(["train", "--config", str(path), "--out", str(Path(tmp) / "run"),
                  "--set", "iterations=0"])
    return run


def case_path_bytes(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    """Report folders and game files whose names are bytes that are not UTF-8, names with
    terminal escapes in the records."""
    name = "o" + "".join(rng.choice(["\udcff", "\udcfe", "\x1b[2J", "é", "\u202e", "x"])
                         for _ in range(rng.randint(1, 4)))
    player = rng.choice(["random", "random\x1b]0;t\x07", "r\udcff", "\u202egreedy"])
    record = {"id": "a|b|0", "game": "loa", "players": [player, "greedy"], "scores": [0.0, 1.0],
              "result": "0-1", "moves": [], "seed": 1, "plies": 3, "seconds": 0.1}
    argv_kind = rng.choice(["rate", "report", "replay"])

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / name
            folder.mkdir()
            games = folder / "games.jsonl"
            games.write_text(json.dumps(record) + "\n")
            out = str(Path(tmp) / (name + "out"))
            argv = {"rate": ["rate", str(games), "--out", out, "--no-png"],
                    "report": ["report", str(games), "--out", out, "--no-png", "--html"],
                    "replay": ["replay", str(games), "--list"]}[argv_kind]
            _cli(argv)
    return run


HOSTILE_PY = REPO / "tests" / "engines" / "hostile.py"


def case_engine_flood(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    """An outside engine that floods info or feature lines, answers a 1 MB move or starts
    children that leave its process group; each case starts real processes."""
    from boardzoo.agents.arena import Pairing, play_game

    mode = rng.choice(["info", "feature", "longmove", "setsid"])
    spec = f"engine:{sys.executable} {HOSTILE_PY} {mode}"

    def run() -> None:
        record = play_game(game, Pairing("e|r|0", spec, "random", 1), max_plies=2)
        if len(json.dumps(record)) > 200_000:
            raise RuntimeError(f"{mode}: a {len(json.dumps(record)):,}-character record")
        deadline = time.monotonic() + 2.0  # a SIGKILLed process takes a moment to end
        while (left := _marked_processes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if left:
            raise RuntimeError(f"{mode}: {len(left)} process(es) left: {left[:3]}")
    return run


def _marked_processes() -> list[str]:
    """Command lines of live processes carrying this campaign's environment mark."""
    needle = f"BOARDZOO_FUZZ={os.environ.get('BOARDZOO_FUZZ', '-')}".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        try:
            if pid != str(os.getpid()) and needle in Path(f"/proc/{pid}/environ").read_bytes():
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                if stat[0] != "Z":
                    found.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
        except OSError:
            continue
    return found


SERVER_LINES = ["go", "go movetime -1", "go movetime nan", "go movetime inf", "go movetime 1e10",
                "go nodes -5", "go movetime", "newgame seed " + "9" * 5000, "isready", "legal",
                "position startpos moves " + "a1-a2 " * 1000, "position text " + "x" * 10_000,
                "position startpos", "boardzoo 1", "game chess", "quit now"]


def case_server_stdin(game: str, rng: random.Random, seeds: list[str]) -> Callable[[], None]:
    """``boardzoo engine`` (the server) reading hostile stdin: long lines, unknown commands,
    bad limits, long counters, in any order."""
    from boardzoo.agents.engine.server import MAX_LINE, serve

    lines = [f"game {game}"]
    for _ in range(rng.randint(1, 8)):
        pick = rng.random()
        if pick < 0.15:
            lines.append("x" * rng.choice([300, 100_000, MAX_LINE + 10]))
        elif pick < 0.3:
            fields = rng.choice(seeds).split()
            fields[-1] = "9" * rng.choice([20, 5000])
            lines.append("position text " + " ".join(fields))
        elif pick < 0.45:
            lines.append(mutate(rng.choice(SERVER_LINES), rng))
        else:
            lines.append(rng.choice(SERVER_LINES))
    text = "\n".join(lines) + "\n"

    def run() -> None:
        out = io.StringIO()
        serve("random", [game], io.StringIO(text), out)
        for line in out.getvalue().splitlines():
            if len(line) > 1000:
                raise RuntimeError(f"server answered a {len(line):,}-character line")
    return run


PER_GAME = {"position_rules": case_position_rules, "position_cli": case_position_cli,
            "position_env": case_position_env, "move": case_move, "action": case_action,
            "long_number": case_long_number, "server_stdin": case_server_stdin}
ONCE = {"agent_spec": case_agent_spec, "config": case_config, "checkpoint": case_checkpoint,
        "games_file": case_games_file, "absurd_config": case_absurd_config,
        "model_config": case_model_config, "sb3_zip": case_sb3_zip,
        "nested_json": case_nested_json, "hostile_yaml": case_hostile_yaml,
        "path_bytes": case_path_bytes, "engine_flood": case_engine_flood}
#: Entry points whose cases start processes (seconds each): they run cases // SLOW_SHARE.
SLOW = {"engine_flood"}
SLOW_SHARE = 100


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise Hang


def classify(run: Callable[[], None], timeout: float) -> tuple[str, str]:
    """Run one case; return (outcome, detail)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        run()
        return "ok", ""
    except Hang:
        return "hang", ""
    except CodeRun as exc:  # worse than a traceback: a file from elsewhere ran code
        return "code_run", str(exc)
    except BoardzooError:
        return "clean", ""
    except Exception:  # the thing this campaign looks for
        return "traceback", traceback.format_exc(limit=3)[-800:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _compile(game: str, text: str) -> None:
    """Run the game's compiled perft once before the timed cases: a JIT's first compile (up
    to a minute on a cold numba cache) is not a hang of the code under test."""
    spec = get_spec(game)
    state = spec.state_cls.from_text(text)
    (spec.perft or type(state).perft)(state, 1)  # no game sets spec.perft: ask the state
    state.legal_moves()


def campaign(cases: int, seed: int = 0, timeout: float = 10.0,
             games: list[str] | None = None) -> Iterator[tuple[str, str, str]]:
    """Yield (entry point, outcome, detail) for ``cases`` cases per game and entry point."""
    rng = random.Random(seed)
    for game in games or list(GAMES):
        seeds = _positions(game, random.Random(seed))
        _compile(game, seeds[0])
        for name, make in {**PER_GAME, **ONCE}.items():
            if name in ONCE and game != (games or list(GAMES))[0]:
                continue
            for _ in range(max(1, cases // SLOW_SHARE) if name in SLOW else cases):
                outcome, detail = classify(make(game, rng, seeds), timeout)
                yield f"{game}:{name}" if name in PER_GAME else name, outcome, detail


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory of this process and of its largest finished child (MB; Linux
    reports KB)."""
    scale = 1 / 1024 if sys.platform.startswith("linux") else 1 / 1024 / 1024
    return {who: round(resource.getrusage(flag).ru_maxrss * scale, 1)
            for who, flag in (("self", resource.RUSAGE_SELF),
                              ("children", resource.RUSAGE_CHILDREN))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=1000, help="cases per game and entry point")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds before a case hangs")
    ap.add_argument("--games", default=",".join(GAMES))
    args = ap.parse_args()
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.suppress_output()  # the wrapped env's "illegal move" note, once per case
    os.environ.setdefault("BOARDZOO_FUZZ", str(os.getpid()))  # marks the engines' processes
    t0 = time.perf_counter()
    totals: Counter[str] = Counter()
    per: dict[str, Counter[str]] = {}
    for entry, outcome, detail in campaign(args.cases, args.seed, args.timeout,
                                           args.games.split(",")):
        totals[outcome] += 1
        per.setdefault(entry, Counter())[outcome] += 1
        if outcome in ("traceback", "hang", "code_run"):
            print(f"{entry}: {outcome}\n{detail}", file=sys.stderr)
    print(json.dumps({"cases": sum(totals.values()), "ok": totals["ok"],
                      "clean_errors": totals["clean"], "tracebacks": totals["traceback"],
                      "hangs": totals["hang"], "code_runs": totals["code_run"],
                      "seconds": round(time.perf_counter() - t0, 1),
                      "peak_rss_mb": peak_rss_mb(),
                      "per_entry_point": {k: dict(v) for k, v in per.items()}}))


if __name__ == "__main__":
    main()
