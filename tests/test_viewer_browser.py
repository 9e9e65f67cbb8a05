"""The HTML viewer in a real headless browser (Debian's chromium, driven by Selenium), as a
person uses it: load the file, press "next" and the arrow keys, click a move and a game,
and check the board drawn in the page against the rules' positions; then a screenshot.

.ci/run installs chromium and chromedriver; elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from boardzoo.agents.arena.replay import load_games, replay
from boardzoo.cli import main

GAMES = ("loa", "ultima", "whistling")
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER = "chromedriver"


def browser():
    """Return a headless Chromium WebDriver, or skip saying what is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[dev]')")
    binary = next((shutil.which(name) for name in CHROMIUM if shutil.which(name)), None)
    driver_path = shutil.which(CHROMEDRIVER)
    if binary is None or driver_path is None:
        pytest.skip("no chromium/chromedriver on PATH (apt-get install chromium "
                    "chromium-driver; .ci/run does)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service(driver_path))


@pytest.fixture(scope="module")
def driver():
    d = browser()
    yield d
    d.quit()


def board_in_dom(driver) -> tuple[int, str, list[str]]:
    """Return (ply, position text, piece token of every cell) as the page shows them."""
    board = driver.find_element("id", "board")
    cells = len(board.find_elements("css selector", "polygon.cell"))
    pieces = [""] * cells
    for piece in board.find_elements("css selector", "g.piece"):
        pieces[int(piece.get_attribute("data-cell"))] = piece.get_attribute("data-piece")
    return int(board.get_attribute("data-ply")), board.get_attribute("data-position"), pieces


def expected(game, ply: int) -> tuple[int, str, list[str]]:
    """Return (ply, position text, piece tokens) of a replayed game after ``ply`` moves."""
    view = game.spec.board_view()
    return ply, game.states[ply].to_text(), view.pieces(game.action_state(ply))


@pytest.mark.parametrize("name", GAMES)
def test_viewer_steps_through_games_in_a_browser(tmp_path: Path, driver, name: str):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    out = tmp_path / "arena"
    assert main(["tournament", "--game", name, "--agents", "random,greedy", "--seed", "2",
                 "--games-per-pair", "2", "--out", str(out), "--no-progress", "--no-png",
                 "--no-html"]) == 0
    assert main(["report", str(out), "--html", "--no-png"]) == 0
    games = [replay(r) for r in load_games(out)]
    driver.get((out / "report.html").as_uri())
    assert len(driver.find_elements("css selector", "#ratings tr")) == 3  # header + 2 agents
    assert driver.find_element("id", "crosstable").text.count("%") == 2

    # the first game is shown at its start; "next" 3 times, then the right arrow 4 times
    assert board_in_dom(driver) == expected(games[0], 0)
    for _ in range(3):
        driver.find_element("id", "next").click()
    assert board_in_dom(driver) == expected(games[0], 3)
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT * 4).perform()
    assert board_in_dom(driver) == expected(games[0], 7)
    ActionChains(driver).send_keys(Keys.ARROW_LEFT).perform()
    assert board_in_dom(driver) == expected(games[0], 6)
    assert "ply 6 /" in driver.find_element("id", "caption").text

    # the second game from the games list; a click on its 5th move; End shows the result
    driver.find_elements("css selector", "#games tbody tr")[1].click()
    second = games[1]
    assert board_in_dom(driver) == expected(second, 0)
    driver.find_element("css selector", "#moves tr[data-ply='5']").click()
    assert board_in_dom(driver) == expected(second, 5)
    ActionChains(driver).send_keys(Keys.END).perform()
    assert board_in_dom(driver) == expected(second, len(second.moves))
    result = driver.find_element("id", "result").text
    assert second.record["result"] in result and "plies" in result
    assert "thought" in driver.find_element("id", "players").text
    think = driver.find_elements("css selector", "#moves td.t")
    assert len(think) == len(second.moves) and all(t.text.endswith(" s") for t in think)

    shot = np.asarray(Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB"))
    (tmp_path / "page.png").write_bytes(driver.get_screenshot_as_png())
    colours = np.unique(shot.reshape(-1, 3)[::3], axis=0)
    assert len(colours) > 50, "the screenshot is blank or nearly so"
    board = driver.find_element("id", "board").screenshot_as_png
    board_pixels = np.asarray(Image.open(io.BytesIO(board)).convert("RGB")).astype(int)
    assert board_pixels.std() > 20, "the board is drawn in one colour"
    assert board_pixels.shape[0] > 300 and board_pixels.shape[1] > 300
