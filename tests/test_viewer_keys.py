"""report.html: a key for the pieces (Ultima) and the sides (Whistling, LOA), a Whistling
board large enough to read, and long chain moves that do not stretch the move table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_viewer_browser import browser

from boardzoo.agents.arena.viewer import CELL_PIXELS, board_data
from boardzoo.cli import main
from boardzoo.envs.core.registry import get_spec


def board(game: str) -> dict:
    return board_data(get_spec(game).board_view())[0]


def key_of(data: dict) -> dict[str, list[str]]:
    """Return the key as name -> the piece tokens it shows."""
    return {name: [data["glyphs"][ch]["token"] for ch in chars] for name, chars in data["legend"]}


def test_ultima_key_names_every_piece_of_both_sides() -> None:
    key = key_of(board("ultima"))
    # the seven Ultima pieces of the rules (shared/rules/ultima.md), white and black
    for name in ("king", "pawn", "leaper", "chameleon", "withdrawer", "immobilizer",
                 "coordinator"):
        assert len(key[name]) == 2 and key[name][0] == key[name][1].upper(), name
    assert key["frozen"] == ["P~"]


def test_whistling_and_loa_keys_name_the_sides() -> None:
    assert key_of(board("whistling")) == {"x (moves first)": ["x"], "o (moves second)": ["o"]}
    assert key_of(board("loa")) == {"black": ["b"], "white": ["w"]}


def test_whistling_board_is_shown_large_enough() -> None:
    data = board("whistling")
    # neighbouring hexagon centres are side * sqrt(3) apart in the picture (16 * 1.732)
    assert data["display"] * (16 * 3 ** 0.5) / data["width"] >= CELL_PIXELS - 0.5
    assert board("loa")["display"] == board("ultima")["display"] == 480


@pytest.fixture(scope="module")
def driver():
    d = browser()
    yield d
    d.quit()


def page(tmp_path: Path, game: str) -> tuple[Path, list[dict]]:
    out = tmp_path / game
    assert main(["tournament", "--game", game, "--agents", "random,greedy", "--seed", "2",
                 "--games-per-pair", "2", "--out", str(out), "--no-progress", "--no-png"]) == 0
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    return out / "report.html", records


def test_whistling_page_key_board_and_move_table(tmp_path: Path, driver) -> None:
    html, records = page(tmp_path, "whistling")
    driver.get(html.as_uri())
    keys = driver.find_elements("css selector", "#legend .key")
    assert [k.get_attribute("data-tokens") for k in keys] == ["x", "o"]
    assert [k.text for k in keys] == ["x (moves first)", "o (moves second)"]
    assert driver.find_element("id", "board").size["width"] >= 800
    # the 41 column letters along the top: 16+ screen pixels apart, none touching
    xs = driver.execute_script(
        "return [...document.querySelectorAll('#board text')].slice(0, 82).filter("
        "(t, i) => i % 2 === 0).map((t) => { const r = t.getBoundingClientRect(); "
        "return [r.left, r.right]; })")
    gaps = [b[0] - a[1] for a, b in zip(xs, xs[1:], strict=False)]  # between the letters
    centres = [(a + b) / 2 for a, b in xs]
    assert len(xs) == 41 and min(gaps) > 0
    assert min(b - a for a, b in zip(centres, centres[1:], strict=False)) >= 16
    moves = records[0]["moves"]
    assert max(map(len, moves)) > 30  # a long chain is in the first game
    spans = driver.find_elements("css selector", "#moves td.move span")
    assert [s.get_attribute("title") for s in spans] == moves
    assert max(s.size["width"] for s in spans) < 250  # cut, not stretching the table
    assert driver.find_element("id", "moves").size["width"] < 420


def test_ultima_page_shows_the_piece_key(tmp_path: Path, driver) -> None:
    html, _ = page(tmp_path, "ultima")
    driver.get(html.as_uri())
    text = driver.find_element("id", "legend").text
    for name in ("king", "pawn", "leaper", "chameleon", "withdrawer", "immobilizer",
                 "coordinator", "frozen"):
        assert name in text
    first = driver.find_element("css selector", "#legend .key")
    assert first.get_attribute("data-tokens") == "K k"
    assert len(first.find_elements("css selector", "svg circle")) == 2
