"""A pygame window that shows pictures of positions (``render_mode="human"``, the ``gui`` agent).

pygame is the optional extra ``gui`` (``pip install 'boardzoo[gui]'``) and is imported
only when a window is wanted. The window only shows RGB arrays (the ``rgb_array``
pictures, possibly with marks drawn on them) and hands back its events; what a click
means is the caller's business. Run headless with ``SDL_VIDEODRIVER=dummy``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

from .core.game import BoardzooError

INSTALL_HINT = "pip install 'boardzoo[gui]'"


class GuiUnavailable(BoardzooError, DependencyNotInstalled):
    """pygame, the optional extra ``gui``, is not installed."""


def import_pygame() -> Any:
    """Return the pygame module, or raise GuiUnavailable naming the extra to install."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout to the game
    try:
        import pygame
    except ImportError:
        raise GuiUnavailable(f"a game window needs pygame, the optional extra 'gui': "
                             f"{INSTALL_HINT}") from None
    return pygame


class Window:
    """One pygame window showing RGB frames; ``closed`` turns True when its user closes it."""

    def __init__(self, title: str, fps: float = 30.0) -> None:
        """Prepare a window titled ``title`` whose :meth:`tick` holds it to ``fps`` frames/s;
        it opens on the first :meth:`show`."""
        self.pygame = import_pygame()  # fail now, not at the first frame
        self.title = title
        self.fps = fps
        self.closed = False
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: np.ndarray) -> None:
        """Draw the RGB uint8 array ``frame`` (height x width x 3) in the window, resizing it."""
        if self.closed:
            return
        pg = self.pygame
        height, width = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (width, height):
            pg.display.init()
            self._screen = pg.display.set_mode((width, height))
            pg.display.set_caption(self.title)
            self._clock = self._clock or pg.time.Clock()
        image = pg.image.frombuffer(np.ascontiguousarray(frame[:, :, :3]).tobytes(),
                                    (width, height), "RGB")
        self._screen.blit(image, (0, 0))
        pg.display.flip()

    def events(self) -> list[Any]:
        """Return the pending events; a window-close event closes the window (``closed``)."""
        if self._screen is None:
            return []
        events = self.pygame.event.get()
        if any(e.type == self.pygame.QUIT for e in events):
            self.close()
            self.closed = True
        return events

    def tick(self) -> None:
        """Wait until one frame time (1 / fps) has passed since the previous tick."""
        if self._clock is not None and not self.closed:
            self._clock.tick(self.fps)

    def pixels(self) -> np.ndarray:
        """Return what the window shows now as an RGB uint8 array (height x width x 3)."""
        if self._screen is None:
            raise RuntimeError("the window is not open")
        return self.pygame.surfarray.array3d(self._screen).transpose(1, 0, 2).copy()

    @property
    def is_open(self) -> bool:
        """True while the window is on screen."""
        return self._screen is not None

    def close(self) -> None:
        """Close the window (a later :meth:`show` opens it again unless its user closed it)."""
        if self._screen is not None:
            self._screen = None
            self.pygame.display.quit()
