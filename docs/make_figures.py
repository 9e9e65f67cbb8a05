"""Draw the pictures of the docs with the envs' own ``rgb_array`` renderers.

Run ``python docs/make_figures.py`` (writes ``docs/images/*.png``) or ``--out DIR``.
The mid-game positions replay fixed move lists, so the pictures never change unless
the rules or the renderers do. The move lists are the opening of seeded games that
``boardzoo play GAME --agents greedy greedy --seed S`` reproduces (seed in each figure).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from boardzoo.envs import loa_v0, ultima_v0, whistling_v0

DEFAULT_OUT = Path(__file__).resolve().parent / "images"
GAP = 16  # pixels between the two halves of a before/after picture
GAP_COLOUR = (255, 255, 255)

# `boardzoo play loa --agents greedy greedy --seed 1`: Black's 17th move b4xb7 captures
# White's straggler and joins Black's last piece to its group.
LOA_GAME = (
    "b1-h1 h7-g6 h1-g2 g6xg2 c1xa3 a2-d2 d1-b3 a7-b7 g1-f2 a4-c6 e1xh4 c6xc8 f2-f5 h6xf8 "
    "f1-f4 f8xf5 f4-c7 h5-g4 g8-e6 a5-c3 e8-d7 a6-c6 h4-f6 c3xc7 f6xc6 c7-f4 d8-c7 f5-f3 "
    "b3-d5 h3-e3 a3-b4 d2-g5 b4xb7"
).split()
# `boardzoo play ultima --agents greedy greedy --seed 8`: ply 32, Black's long leaper
# a1a5 jumps White's pawns on a2 and a4.
ULTIMA_GAME = (
    "f2f6 c7c3 g2g5 d7d5 f1f5 e7e4 b2b4 h7h3 b4c4xc3 h8h6 d2d3 d8b6 a1d4 h6g6 d4c5 c8c6 "
    "e1h4 h3f3 g1g3 f3e3 h4f4 e4e6xf6 c4e4xe3 b8e5 c1e3 g7h7 e4a4 h7h4 f4g4 e5a1 c2c1"
).split()
ULTIMA_CAPTURE = "a1a5xa2xa4"
# `boardzoo play whistling --agents greedy greedy --seed 0`: ply 16, O's four-hop chain
# captures 8 stones; the picture stops after its second hop.
WHISTLING_GAME = (
    "j16-y1 F6-E7 J14-x2:E7 G7-M13 I15-M11:M13 e7-d8 i15-c9 d8:c9 h16-j16 h6-j4 u3-t4 "
    "G5-i5:t4 s3-H18 u19-i19 H18-t18:w19-H4:H6"
).split()
WHISTLING_CHAIN = "i19-o13:j16i17-M13:H14-C3:M11-i3:r2t2v2x2"
WHISTLING_HOPS_SHOWN = 2


def _replay(module: object, moves: Sequence[str]) -> object:
    """Return a raw ``rgb_array`` env after playing ``moves`` (whole turns) from the start."""
    env = module.raw_env(render_mode="rgb_array")  # type: ignore[attr-defined]
    env.reset(seed=0)
    for text in moves:
        _play_hops(env, _hops(text))
    return env


def _hops(turn: str) -> list[str]:
    """Split a move into the texts of its actions (one per Whistling hop, else the move)."""
    if turn.count("-") < 2:  # a move of LOA/Ultima, or a one-hop Whistling turn
        return [turn]
    parts = turn.split("-")
    return [f"{a.split(':')[0]}-{b}" for a, b in zip(parts, parts[1:], strict=False)]


def _play_hops(env: object, hops: Sequence[str]) -> None:
    """Play action texts in the env; an illegal one raises the env's MoveError."""
    for hop in hops:
        env.step(env.move_str_to_action(hop))  # type: ignore[attr-defined]


def _side_by_side(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Return two pictures next to each other, separated by a white gap."""
    height = max(left.shape[0], right.shape[0])
    out = np.full((height, left.shape[1] + GAP + right.shape[1], 3), GAP_COLOUR, np.uint8)
    out[: left.shape[0], : left.shape[1]] = left
    out[: right.shape[0], left.shape[1] + GAP:] = right
    return out


def loa_start() -> np.ndarray:
    """LOA start position."""
    return _replay(loa_v0, []).render()  # type: ignore[attr-defined]


def loa_connection() -> np.ndarray:
    """LOA: the capture that connects all of Black's pieces (game over, Black wins)."""
    return _replay(loa_v0, LOA_GAME).render()  # type: ignore[attr-defined]


def ultima_start() -> np.ndarray:
    """Ultima start position (Abbott's array)."""
    return _replay(ultima_v0, []).render()  # type: ignore[attr-defined]


def ultima_capture() -> np.ndarray:
    """Ultima: before and after a long leaper's double capture."""
    env = _replay(ultima_v0, ULTIMA_GAME)
    before = env.render()  # type: ignore[attr-defined]
    _play_hops(env, [ULTIMA_CAPTURE])
    return _side_by_side(before, env.render())  # type: ignore[attr-defined]


def whistling_start() -> np.ndarray:
    """Whistling start position."""
    return _replay(whistling_v0, []).render()  # type: ignore[attr-defined]


def whistling_chain() -> np.ndarray:
    """Whistling: a capture chain after two of its hops, and after the whole turn."""
    env = _replay(whistling_v0, WHISTLING_GAME)
    hops = _hops(WHISTLING_CHAIN)
    _play_hops(env, hops[:WHISTLING_HOPS_SHOWN])
    middle = env.render()  # type: ignore[attr-defined]
    _play_hops(env, hops[WHISTLING_HOPS_SHOWN:])
    return _side_by_side(middle, env.render())  # type: ignore[attr-defined]


FIGURES: dict[str, Callable[[], np.ndarray]] = {
    "loa_start": loa_start,
    "loa_connection": loa_connection,
    "ultima_start": ultima_start,
    "ultima_capture": ultima_capture,
    "whistling_start": whistling_start,
    "whistling_chain": whistling_chain,
}


def save_png(picture: np.ndarray, path: Path) -> None:
    """Write an RGB array as a lossless PNG (flat board colours compress to 15-40 KB)."""
    Image.fromarray(picture, "RGB").save(path, optimize=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Write every figure (or the named ones) into the output folder; print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"figures to draw (default: all): {', '.join(FIGURES)}")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(FIGURES))
    if unknown:
        parser.error(f"unknown figure {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names or FIGURES:
        path = args.out / f"{name}.png"
        save_png(FIGURES[name](), path)
        print(f"{path}: {path.stat().st_size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
