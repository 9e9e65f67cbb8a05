"""The docs stay true: links resolve, pictures exist and can be redrawn, the pages' env
snippets print what the pages say, and the CLI and config references cover every option."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from boardzoo.cli import build_parser
from boardzoo.envs import loa_v0, ultima_v0, whistling_v0
from boardzoo.training import config as training_config

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [REPO / "README.md"]
IMAGES = DOCS / "images"
MAX_IMAGE_BYTES = 150 * 1024
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ENVS = {"loa": loa_v0, "ultima": ultima_v0, "whistling": whistling_v0}
FIGURES = {  # picture -> (game, number of boards side by side)
    "loa_start": ("loa", 1), "loa_connection": ("loa", 1),
    "ultima_start": ("ultima", 1), "ultima_capture": ("ultima", 2),
    "whistling_start": ("whistling", 1), "whistling_chain": ("whistling", 2),
}
GAP = 16  # pixels between the boards of a two-board picture (docs/make_figures.py)

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """Return Markdown without fenced code blocks and code spans (links there are text)."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """Return GitHub's anchor for a heading: lowercase, punctuation dropped, spaces -> '-'."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Return the anchors of every heading of a Markdown page."""
    text = _FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def links(page: Path) -> list[str]:
    """Return the targets of every link and image of a page, outside code."""
    return _LINK.findall(prose(page.read_text()))


def relative_links() -> list[tuple[Path, str]]:
    """Return (page, target) for every link that is not a URL."""
    return [(p, t) for p in PAGES for t in links(p)
            if not re.match(r"[a-z]+:", t)]


def test_pages_have_links_to_check() -> None:
    # guards the regexes: the docs index alone links every page
    targets = {t for p, t in relative_links() if p.name == "README.md" and p.parent == DOCS}
    assert {"loa.md", "ultima.md", "whistling.md", "cli.md", "training.md"} <= targets


@pytest.mark.parametrize(("page", "target"), relative_links(),
                         ids=[f"{p.relative_to(REPO)}->{t}" for p, t in relative_links()])
def test_relative_link_points_to_an_existing_file_in_the_repo(page: Path, target: str) -> None:
    path_part, _, fragment = target.partition("#")
    dest = (page.parent / path_part).resolve() if path_part else page
    assert dest.is_file(), f"{page.name}: link {target!r} -> {dest} does not exist"
    assert REPO in dest.parents, f"{page.name}: link {target!r} leaves the repository"
    if fragment and dest.suffix == ".md":
        assert fragment in anchors(dest), f"{page.name}: no heading #{fragment} in {dest.name}"


def test_slug_matches_github_for_punctuated_headings() -> None:
    assert slug("Playing a trained network: `checkpoint:...`") == \
        "playing-a-trained-network-checkpoint"
    assert slug("Symmetries (`training/symmetry.py`, `train.augment`)") == \
        "symmetries-trainingsymmetrypy-trainaugment"


def test_every_picture_exists_is_small_and_is_used() -> None:
    used = {(p.parent / t).resolve() for p, t in relative_links() if t.endswith(".png")}
    committed = set(IMAGES.glob("*.png"))
    assert {p.stem for p in committed} == set(FIGURES), "docs/images differs from the figures"
    assert committed <= used, f"pictures no page shows: {sorted(committed - used)}"
    for path in committed:
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE), path
        assert len(data) < MAX_IMAGE_BYTES, f"{path.name} is {len(data)} bytes"
        Image.open(path).verify()


def start_render(game: str) -> np.ndarray:
    """Return the env's own picture of the start position."""
    env = ENVS[game].raw_env(render_mode="rgb_array")
    env.reset(seed=0)
    return env.render()


def test_make_figures_redraws_every_picture(tmp_path: Path) -> None:
    out = tmp_path / "images"
    run = subprocess.run([sys.executable, str(DOCS / "make_figures.py"), "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert {p.stem for p in out.glob("*.png")} == set(FIGURES)
    for name, (game, boards) in FIGURES.items():
        data = (out / f"{name}.png").read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) < MAX_IMAGE_BYTES, name
        picture = np.asarray(Image.open(out / f"{name}.png").convert("RGB"))
        start = start_render(game)
        height, width = start.shape[:2]
        assert picture.shape == (height, boards * width + (boards - 1) * GAP, 3), name
        if name.endswith("_start"):
            assert np.array_equal(picture, start), f"{name} is not the env's own picture"
        else:  # a mid-game position: not the start board, in either half
            assert not np.array_equal(picture[:, :width], start), name


def test_make_figures_rejects_an_unknown_figure(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location("make_figures", DOCS / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--out", str(tmp_path), "chess_start"])
    assert exit_info.value.code == 2
    assert "unknown figure chess_start" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("game", list(ENVS))
def test_env_snippet_prints_what_the_page_shows(game: str) -> None:
    text = (DOCS / f"{game}.md").read_text()
    section = text[text.index("## Using the env"):]
    match = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", section, re.S)
    assert match, f"docs/{game}.md: no snippet followed by its output"
    code, shown = match.groups()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"docs/{game}.md", "exec"), {"__name__": "__docs__"})
    assert printed.getvalue() == shown


def cli_sections() -> dict[str, str]:
    """Return the text of each '## name' section of docs/cli.md."""
    text = (DOCS / "cli.md").read_text()
    parts = re.split(r"^## (\S+)\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_cli_page_documents_every_subcommand_and_option() -> None:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    sections = cli_sections()
    assert len(sub.choices) >= 7
    for name, subparser in sub.choices.items():
        assert name in sections, f"docs/cli.md has no '## {name}' section"
        for action in subparser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert option in sections[name], f"docs/cli.md '## {name}' lacks {option}"


def test_training_config_table_is_the_schemas_reference_table() -> None:
    """docs/training.md's config reference is written from the keys' declarations; rewrite it
    with ``python -c "from boardzoo.training.config_schema import reference_table as t;
    print(t())"``."""
    from boardzoo.training.config_schema import reference_table

    text = (DOCS / "training.md").read_text()
    start = text.index("| key | default | allowed | meaning | only with |")
    end = text.index("\n\n", start) + 1
    assert text[start:end] == reference_table()


def test_config_table_rows_show_every_key_with_its_default() -> None:
    """Each row of the table names a key of the config and its default, read back as YAML
    (independent of the schema's own walk over its keys)."""
    text = (DOCS / "training.md").read_text()
    table = text[text.index("| key | default | allowed"):text.index("## Speed on a CPU")]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5:
            rows[cells[0].strip("`")] = cells[1]
    expected = {}
    for name, value in training_config.Config().to_dict().items():
        if isinstance(value, dict):
            expected.update({f"{name}.{sub}": v for sub, v in value.items()})
        else:
            expected[name] = value
    assert set(rows) == set(expected)
    for key, default in expected.items():
        assert yaml.safe_load(rows[key]) == default, key


def test_config_keys_without_effect_are_marked_in_the_config_table() -> None:
    """Every key that some settings make useless (and so refused) has an "only with" note."""
    from boardzoo.training.config import no_effect

    text = (DOCS / "training.md").read_text()
    table = text[text.index("| key | default | allowed"):text.index("## Speed on a CPU")]
    marked = set()
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[4]:
            marked.add(cells[0].strip("`"))
    useless: set[str] = set()
    for sets in (["mcts.root=gumbel"], ["mcts.root=puct", "play.root=puct"],
                 ["model.value=static", "model.policy_head=bilinear", "eval.vs_best=false"],
                 ["game=whistling"], ["game=loa"]):
        cfg = training_config.load_config(None, ["game=ultima", *sets])
        useless |= set(no_effect(cfg))
    assert useless <= marked, f"not marked in training.md: {sorted(useless - marked)}"


# --- the README as a front door, and every output the pages show that is cheap to rerun ---

README = REPO / "README.md"
MAX_README_LINES = 150
PACK_CONFIGS = "/tmp/pack_v/lib/python3.11/site-packages/boardzoo/configs"  # docs/cli.md


def fenced_after(text: str, marker: str) -> str:
    """Return the first fenced block after ``marker`` in ``text``, without its fences."""
    match = re.search(re.escape(marker) + r".*?^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    assert match, f"no fenced block after {marker!r}"
    return match.group(1)


def markdown_table(text: str, header: str) -> list[str]:
    """Return the rows (header and separator included) of the table starting at ``header``."""
    start = text.index(header)
    rows = []
    for line in text[start:].splitlines():
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_readme_is_a_short_front_door() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_README_LINES
    for section in ("## Install", "## Two commands for a fresh machine", "## Using an environment",
                    "## Training", "## The shipped networks", "## Tournaments",
                    "## Outside engines"):
        assert f"\n{section}\n" in text, section


def test_readme_refers_to_docs_only_by_links() -> None:
    """Every doc the README names is a link (a path in backticks or bare text is not)."""
    text = _LINK.sub("", _FENCE.sub("", README.read_text()))
    pages = {p.name for p in DOCS.glob("*.md")}
    named = re.findall(r"[\w/.-]+\.md\b", text)  # report.md, an output file, is no doc
    assert not [n for n in named if n.startswith("docs/") or Path(n).name in pages]
    assert len(links(README)) >= 10


def test_readme_keeps_the_two_commands_that_ci_reads() -> None:
    text = README.read_text()
    for marker, tail in (("<!-- main-command -->", "boardzoo train --config configs/loa.yaml"),
                         ("<!-- test-command -->", "pytest -n auto")):
        assert text.count(marker) == 1
        (command,) = fenced_after(text, marker).splitlines()
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && "
                                  "pip install torch==2.13.0 && pip install -e ")
        assert command.endswith(tail)


def test_readme_sample_run_prints_what_train_prints(monkeypatch, capsys) -> None:
    """The sample output's first and last lines are what `boardzoo train --config
    configs/loa.yaml` prints around the run (the run itself replaced by its summary)."""
    import torch

    from boardzoo.cli import main
    from boardzoo.training import trainer

    sample = fenced_after(README.read_text(), "The first trains").splitlines()
    done = re.match(r"done: (\d+) iterations in ([\d.]+) min; .*\(iteration (\d+)\)", sample[-2])
    assert done, sample[-2]

    class Run:  # stands in for the 20-iteration run: what it returns, nothing written
        iteration = 0

        def __init__(self, *args, **kwargs) -> None:
            pass

        def run(self) -> dict:
            return {"iteration": int(done[1]), "elapsed_s": float(done[2]) * 60,
                    "best_iteration": int(done[3])}

    monkeypatch.setattr(trainer, "Trainer", Run)
    monkeypatch.chdir(REPO)
    threads = torch.get_num_threads()
    try:
        assert main(["train", "--config", "configs/loa.yaml"]) == 0
    finally:
        torch.set_num_threads(threads)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == sample[0]
    assert printed[-2:] == sample[-2:]
    iterations = training_config.load_config(str(REPO / "configs" / "loa.yaml"), []).iterations
    assert sample[-4].startswith(f"iter {iterations}/{iterations}: ")


def test_readme_env_example_plays_a_game() -> None:
    code = fenced_after(README.read_text(), "## Using an environment")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {"__name__": "__docs__"})
    assert "wins" in printed.getvalue() or "draw" in printed.getvalue()


def test_readme_network_table_is_the_one_training_results_opens_with() -> None:
    header = "| game | config | vs greedy | vs alphabeta:2 | vs alphabeta:3 | CPU-hours | s/move |"
    results = (DOCS / "training_results.md").read_text()
    rows = markdown_table(README.read_text(), header)
    assert len(rows) == 2 + 3
    assert rows == markdown_table(results, header)
    assert results.index(header) < results.index("## Contents") < results.index("## LOA")


def test_training_results_contents_lists_every_section() -> None:
    page = DOCS / "training_results.md"
    text = page.read_text()
    contents = text[text.index("## Contents"):].split("\n## ", 2)[0]
    listed = set(_LINK.findall(contents))
    headings = set(re.findall(r"^#{2,3} (.+)$", _FENCE.sub("", text), re.M)) - {"Contents"}
    assert listed == {f"#{slug(h)}" for h in headings}


def test_docs_index_links_every_page() -> None:
    linked = set(links(DOCS / "README.md"))
    assert {p.name for p in DOCS.glob("*.md")} - {"README.md"} <= linked


def test_cli_config_list_sample_is_the_real_output(capsys) -> None:
    from boardzoo.cli import main
    from boardzoo.training.configfiles import configs_dir, shipped_names

    section = cli_sections()["config"]
    shown = fenced_after(section, "Output from a wheel").split("$ ")[1:]
    listing = next(s for s in shown if s.startswith("boardzoo config list\n"))
    assert main(["config", "list"]) == 0
    real = capsys.readouterr().out.replace(str(configs_dir()), PACK_CONFIGS)
    assert listing.split("\n", 1)[1] == real
    names = re.search(r"^\| `NAME` \| a shipped config: (.*) \|$", section, re.M).group(1)
    assert re.findall(r"`([^`]+)`", names) == shipped_names()


def masked_times(text: str) -> str:
    """Return Markdown output with the s/move and max s cells of its rating rows masked."""
    return re.sub(r"^(\| \d+ \| [^|]+ \| -?\d+ \| ±\d+ \|) [\d.—]+ \| [\d.—]+ \|", r"\1 T | T |",
                  text, flags=re.M)


def shown_commands(block: str) -> list[tuple[str, str]]:
    """Return (command, output) for each `$ command` of a shown terminal session."""
    return [tuple((part + "\n").split("\n", 1)) for part in block.split("\n$ ")]


def test_cli_tournament_rate_and_replay_samples_are_the_real_output(tmp_path, capsys) -> None:
    """docs/cli.md's sessions of tournament, rate and replay print what the commands print
    (the timing columns aside); /tmp in them is a fresh folder here."""
    from boardzoo.cli import main

    sections = cli_sections()
    sessions = [fenced_after(sections["tournament"], "then where it wrote them:"),
                fenced_after(sections["rate"], "([arena.md](arena.md#tournaments))."),
                fenced_after(sections["replay"], "| `--list` |")]
    checked = 0
    for block in sessions:
        assert block.startswith("$ ")
        for command, shown in shown_commands(block[2:].rstrip("\n")):
            command, _, piped = command.partition(" | ")
            silent = command.endswith(" > /dev/null")
            command = command.removesuffix(" > /dev/null")
            argv = shlex.split(command.replace("/tmp/", f"{tmp_path}/"))
            assert argv[0] == "boardzoo"
            capsys.readouterr()
            main(argv[1:])
            out, err = capsys.readouterr()
            real = (out + err).replace(f"{tmp_path}/", "/tmp/")
            if piped:
                assert piped.startswith("head -")
                real = "".join(real.splitlines(keepends=True)[:int(piped[6:])])
            if not silent:
                assert masked_times(real) == masked_times(shown), command
                checked += 1
    assert checked >= 5


def test_performance_page_says_what_every_bench_script_needs() -> None:
    text = (DOCS / "performance.md").read_text()
    table = "\n".join(markdown_table(text, "| script | needs |"))
    for script in sorted((REPO / "bench").glob("*.py")):
        assert f"`{script.name}`" in table, f"docs/performance.md: {script.name} not listed"
