"""Facts of sampled Whistling positions, as tests/data/whistling_facts.txt records them.

The file was written by ``python tests/whistling_facts.py`` from the Python rules engine
(``rules.py`` over ``movegen.py``/``chains.py``/``chain_layers.py``, commit 7c0f0b0) before
the compiled kernel replaced it; tests/test_whistling_kernel.py recomputes the facts on the
kernel (through ``State`` and the env's actions) and compares.

Per position :func:`facts` is what every consumer reads: the text, the outcome and draw
reason, N (spec 8) and the number of legal turns; every legal turn in ``legal_moves()``
order (the order seeded agents pick from) with the position after it, and the canonical
notation order of ``iter_legal_move_strs()`` (both only up to ``LIST_CAP`` turns); the env's
hop mask at the turn's start and along two chains (the first and the last legal hop each
time) with the board after each hop; the evaluation and the value prior (the float32 of
evaluation / 3 that training's knowledge feeds the network), bit for bit. The twenty-stone
worst positions of bench/whistling_chains.py record their count, N, result and evaluation
(``WALK_CAP``).
"""

from __future__ import annotations

import hashlib
import itertools
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from boardzoo.envs.whistling.actions import HopState, WhistlingActions
from boardzoo.envs.whistling.evaluation import whistling_eval
from boardzoo.envs.whistling.hexgrid import BIT, NUM_CELLS
from boardzoo.envs.whistling.rules import State

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from whistling_chains import scattered  # noqa: E402

DATA = Path(__file__).parent / "data" / "whistling_facts.txt"
A = WhistlingActions()
#: Positions with more legal turns than this record the count and hops, not the list.
LIST_CAP = 400
#: Positions with more legal turns than this record no walk along a chain either (the
#: twenty-stone positions: their hops are searched over millions of chain nodes).
WALK_CAP = 10**6
#: The twenty-stone positions of bench/whistling_chains.py (seconds each, not minutes).
WORST_SEEDS = (1, 2, 3, 4)


def chain_walk(state: State, pick: int) -> tuple:
    """Return the hop masks and boards along one turn from ``state``, taking the legal hop
    at index ``pick`` (0 or -1) each time, up to the turn's end."""
    hs, out = HopState(state), []
    while True:
        legal = A.legal_actions(hs)
        if not legal:
            return tuple(out)
        hs, turn = A.apply_action(hs, legal[pick])
        out.append((tuple(legal), A.board(hs), turn))
        if turn is not None:
            return tuple(out)


def facts(state: State) -> tuple:
    """Return what the rules, the env and the evaluation say of one position."""
    state = State(*state.stones, state.side, state.quiet, state.ply)  # caches die with it
    count, n = state.legal_count(), state.max_capture()
    value = whistling_eval(state)
    head = (state.to_text(), state.result(), state.draw_reason(), n, count,
            float.hex(value), float.hex(float(np.float32(value / 3.0))))
    if count > WALK_CAP:
        return head
    if count > LIST_CAP:
        return (*head, chain_walk(state, 0), chain_walk(state, -1))
    turns = tuple((state.move_to_str(t), state.play(t).key()) for t in state.legal_moves())
    return (*head, turns, tuple(state.iter_legal_move_strs()),
            chain_walk(state, 0), chain_walk(state, -1))


def fact_hash(state: State) -> str:
    """Return the first 8 hex digits of the sha256 of :func:`facts` (the recorded form)."""
    return hashlib.sha256(repr(facts(state)).encode()).hexdigest()[:8]


def sparse_state(rng: random.Random) -> State:
    """Return a random position of a few stones per side (chain-capture rich), quiet
    counters around the draw rule, sometimes a side without stones (elimination)."""
    cells = rng.sample(range(NUM_CELLS), rng.randint(2, 16))
    cut = rng.randint(0 if rng.random() < 0.05 else 1, len(cells) - 1)
    return State(sum(BIT[c] for c in cells[:cut]), sum(BIT[c] for c in cells[cut:]),
                 rng.randint(0, 1), rng.choice([0, 0, 0, 5, 38, 39, 40, 41]))


def played_positions(seed: int) -> Iterator[State]:
    """Yield the turn-start positions of seeded random games (whole turns picked from
    ``legal_moves()``), each game's finished position included, without end."""
    rng = random.Random(seed)
    while True:
        state = State.start()
        while not state.is_terminal():
            yield State(*state.stones, state.side, state.quiet, state.ply)  # nothing cached
            state = state.play(rng.choice(state.legal_moves()))
        yield state


def iter_sampled_positions() -> Iterator[State]:
    """Yield the sampled positions without end: the worst twenty-stone ones, then played and
    random ones alternately (so a longer sample begins with a shorter one)."""
    for seed in WORST_SEEDS:
        yield State.from_text(scattered(seed, 20))
    played, rng, i = played_positions(seed=1), random.Random(2), len(WORST_SEEDS)
    while True:
        yield next(played) if i % 2 else sparse_state(rng)
        i += 1


def sampled_positions(n: int) -> list[State]:
    """Return the first ``n`` sampled positions (:func:`iter_sampled_positions`)."""
    return list(itertools.islice(iter_sampled_positions(), n))


def record(n_listed: int, hashes_file: str) -> None:
    """Write tests/data/whistling_facts.txt from the hashes in ``hashes_file`` (one a line,
    as :func:`stream` wrote them): the digest of them all and the first ``n_listed``."""
    hashes = Path(hashes_file).read_text().split()
    n = len(hashes)
    digest = hashlib.sha256("\n".join(hashes).encode()).hexdigest()
    header = (
        "# Facts of tests/whistling_facts.py's sampled Whistling positions as the Python rules\n"
        "# engine (rules.py, movegen.py, chains.py, chain_layers.py at commit 7c0f0b0) gave\n"
        "# them, before the compiled kernel replaced it: per position the first 8 hex digits\n"
        f"# of sha256(repr(facts(state))) for the first {n_listed:,} positions, and the sha256\n"
        f"# of the first {n:,} such lines joined by newlines.\n")
    DATA.write_text(header + f"digest-{n} {digest}\n" + "\n".join(hashes[:n_listed]) + "\n")


def stream(start: int, stop: int) -> None:
    """Print the hashes of sampled positions ``start`` to ``stop`` - 1, one a line, as they
    come (the ones before ``start`` are generated, not hashed: chunks can run side by side,
    each in a process of its own, whose memory the old engine's caches do not outgrow)."""
    for s in itertools.islice(iter_sampled_positions(), start, stop):
        print(fact_hash(s), flush=True)


def recorded() -> tuple[int, str, list[str]]:
    """Return (positions in the digest, the digest, the listed hashes) of the record."""
    lines = [line for line in DATA.read_text().splitlines() if line and not line[0] == "#"]
    name, digest = lines[0].split()
    return int(name.split("-")[1]), digest, lines[1:]


if __name__ == "__main__":
    # with the old engine's checkout: stream START STOP > chunk.txt, chunk by chunk; then
    # record 5000 all.txt (the chunks concatenated in order). The 100,000-position record
    # ran as four chunks of 25,000, two at a time, 17-21 CPU-minutes each.
    if sys.argv[1] == "stream":
        stream(int(sys.argv[2]), int(sys.argv[3]))
    else:
        record(int(sys.argv[2]), sys.argv[3])
