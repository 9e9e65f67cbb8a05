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
checkpoints with flipped bytes, games.jsonl with torn or foreign lines.

    python bench/fuzz.py --cases 10000          # per game and entry point
Last line: one JSON object (cases, ok, clean_errors, tracebacks, hangs, per entry point).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from boardzoo.agents import make_agent
from boardzoo.agents.arena import read_games
from boardzoo.agents.report import build
from boardzoo.cli import main as cli_main
from boardzoo.envs.aec import BoardGameEnv
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


PER_GAME = {"position_rules": case_position_rules, "position_cli": case_position_cli,
            "position_env": case_position_env, "move": case_move}
ONCE = {"agent_spec": case_agent_spec, "config": case_config, "checkpoint": case_checkpoint,
        "games_file": case_games_file}


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
    except BoardzooError:
        return "clean", ""
    except Exception:  # the thing this campaign looks for
        return "traceback", traceback.format_exc(limit=3)[-800:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def campaign(cases: int, seed: int = 0, timeout: float = 10.0,
             games: list[str] | None = None) -> Iterator[tuple[str, str, str]]:
    """Yield (entry point, outcome, detail) for ``cases`` cases per game and entry point."""
    rng = random.Random(seed)
    for game in games or list(GAMES):
        seeds = _positions(game, random.Random(seed))
        for name, make in {**PER_GAME, **ONCE}.items():
            if name in ONCE and game != (games or list(GAMES))[0]:
                continue
            for _ in range(cases):
                outcome, detail = classify(make(game, rng, seeds), timeout)
                yield f"{game}:{name}" if name in PER_GAME else name, outcome, detail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=1000, help="cases per game and entry point")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds before a case hangs")
    ap.add_argument("--games", default=",".join(GAMES))
    args = ap.parse_args()
    t0 = time.perf_counter()
    totals: Counter[str] = Counter()
    per: dict[str, Counter[str]] = {}
    for entry, outcome, detail in campaign(args.cases, args.seed, args.timeout,
                                           args.games.split(",")):
        totals[outcome] += 1
        per.setdefault(entry, Counter())[outcome] += 1
        if outcome in ("traceback", "hang"):
            print(f"{entry}: {outcome}\n{detail}", file=sys.stderr)
    print(json.dumps({"cases": sum(totals.values()), "ok": totals["ok"],
                      "clean_errors": totals["clean"], "tracebacks": totals["traceback"],
                      "hangs": totals["hang"], "seconds": round(time.perf_counter() - t0, 1),
                      "per_entry_point": {k: dict(v) for k, v in per.items()}}))


if __name__ == "__main__":
    main()
