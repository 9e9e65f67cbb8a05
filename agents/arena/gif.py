"""Animated GIFs of replayed games: one frame per position, the env's own ``rgb_array`` picture.

A GIF has at most 256 colours per palette; all frames here share one (so a frame stores
only what changed). When the pictures together have at most 256 colours the palette is
exactly theirs and every frame reads back equal to its picture; when they have more
(Ultima's antialiased piece letters) :func:`shared_palette` is a median cut of them
without dithering, and a frame reads back equal to ``to_palette(picture, palette)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from .replay import FRAME_MS, LAST_FRAME_HOLD, Replay

MAX_COLOURS = 256
SAMPLE_FRAMES = 8  # frames a median cut looks at: enough for the colours, not all the pixels


def _packed(picture: np.ndarray) -> np.ndarray:
    """Return each pixel as one 24-bit integer (why: np.unique on ints is fast)."""
    p = picture.astype(np.uint32)
    return (p[..., 0] << 16) | (p[..., 1] << 8) | p[..., 2]


def shared_palette(frames: Sequence[np.ndarray]) -> np.ndarray:
    """Return the palette (n <= 256, 3) of ``frames``: their exact colours if at most 256,
    else a median cut (no dithering) of a sample of them."""
    colours = np.unique(np.concatenate([np.unique(_packed(f)) for f in frames]))
    if len(colours) <= MAX_COLOURS:
        return np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], 1).astype(np.uint8)
    step = max(1, len(frames) // SAMPLE_FRAMES)
    sample = Image.fromarray(np.concatenate(list(frames[::step]), axis=0), "RGB")
    cut = sample.quantize(MAX_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    return np.asarray(cut.getpalette()[: 3 * MAX_COLOURS], np.uint8).reshape(-1, 3)


def to_palette(picture: np.ndarray, palette: np.ndarray) -> Image.Image:
    """Return ``picture`` (H, W, 3 uint8) as a palette image of the nearest ``palette`` colours.

    The mapping is done here (why: Pillow's own palette lookup rounds colours, so even a
    colour that is in the palette may come out as a neighbour)."""
    colours, inverse = np.unique(_packed(picture).ravel(), return_inverse=True)
    rgb = np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], 1).astype(np.int32)
    dist = ((rgb[:, None, :] - palette[None, :, :].astype(np.int32)) ** 2).sum(2)
    index = dist.argmin(1).astype(np.uint8)[inverse].reshape(picture.shape[:2])
    image = Image.fromarray(index, "P")
    image.putpalette(palette.tobytes())
    return image


def write_gif(frames: Sequence[np.ndarray], path: str | Path, frame_ms: int = FRAME_MS) -> Path:
    """Write ``frames`` as a looping GIF (the last frame held longer); return the path."""
    if not frames:
        raise ValueError("a GIF needs at least one frame")
    palette = shared_palette(frames)
    images = [to_palette(f, palette) for f in frames]
    durations = [frame_ms] * (len(images) - 1) + [frame_ms * LAST_FRAME_HOLD]
    path = Path(path)
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0)
    return path


def replay_gif(game: Replay, path: str | Path, frame_ms: int = FRAME_MS) -> Path:
    """Write the GIF of a replayed game, one frame per position from the start; return it."""
    frames = [game.frame(ply) for ply in range(len(game.states))]
    return write_gif(frames, path, frame_ms)


def read_frames(path: str | Path) -> list[np.ndarray]:
    """Return every frame of a GIF as an RGB array (as a viewer shows it)."""
    out = []
    with Image.open(path) as image:
        for i in range(getattr(image, "n_frames", 1)):
            image.seek(i)
            out.append(np.asarray(image.convert("RGB")))
    return out
