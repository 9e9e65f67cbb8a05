"""An arena whose numbers can be trusted (issue 45): ids that cannot collide, case-insensitive
kinds, openings played from both sides, repeated games flagged and not counted, pentanomial
statistics and the SPRT checked against figures computed by hand."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import pytest

from boardzoo.agents.arena import (
    GAMES_FILE,
    ArenaError,
    append_game,
    game_id,
    report,
    run_tournament,
    schedule,
)
from boardzoo.agents.arena.commands import SprtWatch
from boardzoo.agents.arena.openings import OpeningError, book, suite_path
from boardzoo.agents.arena.pairs import Sprt, llr_logistic, pentanomial, score_stats, trinomial
from boardzoo.cli import main
from boardzoo.envs.core.registry import load_state

#: Two agents that play the same moves from the same position whatever their seeds (the
#: network's most likely move, and a 2-simulation search over it).
DETERMINISTIC = ["checkpoint:loa,sims=0", "checkpoint:loa,sims=2"]
QUICK = ["--no-progress", "--no-png", "--no-html"]


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


# -- identity -------------------------------------------------------------------------------
def test_ids_of_specs_with_bars_never_collide() -> None:
    # "a|b" against "c" and "a" against "b|c" were both "a|b|c|0" before
    assert game_id("a|b", "c", 0) != game_id("a", "b|c", 0)
    assert game_id("a%7Cb", "c", 0) != game_id("a|b", "c", 0)  # the escape is escaped too
    assert game_id("mcts:20", "random", 3) == "mcts:20|random|3"  # plain specs: old ids
    plan = list(schedule(["engine:x|y", "engine:x", "y|engine:x"], 4))
    assert len({p.id for p in plan}) == len(plan) == 12
    assert len({p.seed for p in plan}) == len(plan)


def test_upper_case_kinds_and_bars_give_a_correct_report(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t"
    code = main(["tournament", "--game", "loa", "--agents", "RANDOM,Greedy", "--agent",
                 "MCTS:2,c=1.5", "--games-per-pair", "2", "--max-plies", "6",
                 "--out", str(out), *QUICK])
    assert code == 0
    rep = json.loads((out / "report.json").read_text())
    assert sorted(row["agent"] for row in rep["ranking"]) == ["greedy", "mcts:2,c=1.5",
                                                              "random"]
    assert rep["games"] == 6 and all(row["games"] == 4 for row in rep["ranking"])
    assert "MCTS" not in capsys.readouterr().out


def test_rate_reads_upper_case_players_as_the_same_agent(tmp_path: Path) -> None:
    path = tmp_path / GAMES_FILE
    for k, (a, b) in enumerate([("MCTS:20", "random"), ("random", "mcts:20")]):
        append_game(path, {"id": f"g{k}", "game": "loa", "players": [a, b], "scores": [1, 0],
                           "moves": [f"m{k}"], "plies": 1})
    rep = report.build(json.loads(f"[{','.join(path.read_text().split())}]"))
    assert {row["agent"]: row["games"] for row in rep["ranking"]} == {"mcts:20": 2, "random": 2}


def test_resume_refuses_a_game_listed_twice(tmp_path: Path, capsys) -> None:
    argv = ["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair",
            "2", "--max-plies", "8", "--out", str(tmp_path), *QUICK]
    assert main(argv) == 0
    games = tmp_path / GAMES_FILE
    first = games.read_text().splitlines()[0]
    games.write_text(games.read_text() + first + "\n")
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 2
    line = one_line(capsys.readouterr().err)
    assert "twice (lines 1 and 3)" in line


def test_resume_says_how_many_games_are_missing(tmp_path: Path, capsys) -> None:
    run_tournament("loa", ["random", "greedy"], 4, tmp_path, max_plies=4, progress=False,
                   stop_after=1)
    capsys.readouterr()
    records = run_tournament("loa", ["random", "greedy"], 4, tmp_path, max_plies=4,
                             progress=False, resume=True)
    assert len(records) == 4
    assert "1 of 4 games were played; playing the 3 missing" in capsys.readouterr().err


def test_an_absurd_schedule_is_refused_before_it_is_built() -> None:
    tracemalloc.start()
    with pytest.raises(ArenaError, match="at most 1,000,000"):
        next(schedule(["random", "greedy"], 10**9))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10_000_000
    plan = schedule(["random", "greedy"], 500_000)  # a large one is generated lazily
    assert next(plan).id == "random|greedy|0"


# -- openings -------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["loa", "ultima", "whistling"])
def test_shipped_suites_are_legal_distinct_and_documented(game: str) -> None:
    text = suite_path(game).read_text()
    assert "Made by: python bench/make_openings.py" in text
    lines = book("suite", game)
    n = lines.capacity()
    assert n is not None and n >= 50
    seen = set()
    for i in range(n):
        state = load_state(game)
        for move in lines[i].moves:  # each move parses as legal where it is played
            state = state.apply(state.parse_move(move))
        assert not state.is_terminal()
        seen.add(lines[i].moves)
    assert len(seen) == n


def test_random_openings_are_legal_distinct_and_seeded() -> None:
    lines = book("random:2", "loa", seed=3)
    drawn = [lines[i].moves for i in range(40)]
    assert len(set(drawn)) == 40 and all(len(m) == 2 for m in drawn)
    for moves in drawn:
        state = load_state("loa")
        for move in moves:
            assert move in state.legal_move_strs()
            state = state.apply(state.parse_move(move))
    assert [book("random:2", "loa", seed=3)[i].moves for i in range(40)] == drawn
    assert book("random:2", "loa", seed=4)[0].moves != drawn[0]


def test_random_openings_that_run_out_say_so() -> None:
    lines = book("random:1", "loa")  # LOA has 36 first moves
    assert len({lines[i].moves for i in range(60)}) == 36
    assert "only 36 distinct openings" in lines.note(60)


def test_opening_files_hold_positions_or_moves(tmp_path: Path) -> None:
    start = load_state("loa")
    after = start.apply(start.parse_move("b1-b3"))
    path = tmp_path / "book.txt"
    path.write_text(f"# two openings\nb1-b3 a2-c2\n\n{after.to_text()}\n")
    lines = book(str(path), "loa")
    assert lines[0].moves == ("b1-b3", "a2-c2") and lines[0].position is None
    assert lines[1].position == after.to_text() and lines[1].moves == ()
    assert lines[2] == lines[0]  # the file ran out: it starts over, and says so
    assert "has 2 openings for 3 game pairs" in lines.note(3)
    path.write_text("b1-b3 b1-b3\n")
    with pytest.raises(OpeningError, match="book.txt:1"):
        book(str(path), "loa")


@pytest.mark.parametrize("spec", ["random:x", "random:-1", "random:41", "nofile.txt", ""])
def test_bad_opening_specs_are_one_line(tmp_path: Path, capsys, spec: str) -> None:
    code = main(["tournament", "--game", "loa", "--agents", "random,greedy", "--openings",
                 spec, "--out", str(tmp_path / "t"), *QUICK])
    if spec == "":  # empty: the default suite
        assert code == 0
        return
    assert code == 2 and one_line(capsys.readouterr().err).startswith("boardzoo: error: ")
    assert not (tmp_path / "t").exists()


def test_game_pairs_play_one_opening_from_both_sides(tmp_path: Path) -> None:
    records = run_tournament("loa", DETERMINISTIC, 6, tmp_path, progress=False,
                             openings="random:2", seed=1)
    by_pair: dict[int, list[dict]] = {}
    for r in records:
        by_pair.setdefault(r["pair"], []).append(r)
    assert sorted(by_pair) == [0, 1, 2]
    openings = set()
    for pair in by_pair.values():
        a, b = pair
        assert a["players"] == b["players"][::-1]  # colours swapped
        assert a["moves"][:2] == b["moves"][:2] and a["opening"] == b["opening"]
        openings.add(tuple(a["moves"][:2]))
    assert len(openings) == 3
    # two deterministic agents, random:2 openings: no game repeats another
    assert report.repeats(records) == {}
    assert len({tuple(r["moves"]) for r in records}) == 6


# -- repeated games -------------------------------------------------------------------------
def test_repeated_games_are_flagged_and_not_counted(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t"
    code = main(["tournament", "--game", "loa", "--agents", ",".join(DETERMINISTIC),
                 "--games-per-pair", "6", "--openings", "none", "--out", str(out), *QUICK])
    assert code == 0
    captured = capsys.readouterr()
    assert "openings repeat" in captured.err
    rep = json.loads((out / "report.json").read_text())
    # colours alternate from one start: game g repeats game g % 2 move for move
    assert rep["games"] == 6 and rep["distinct_games"] == 2
    assert [r["same_as"] for r in rep["repeated"]] == [f"{DETERMINISTIC[0]}|{DETERMINISTIC[1]}"
                                                       f"|{g % 2}" for g in range(2, 6)]
    assert all(row["games"] == 2 for row in rep["ranking"])
    assert "REPEATED: 4 game(s)" in captured.out and "6 games, 2 distinct" in captured.out
    # the interval is the one of the two distinct games: repeats do not shrink it
    records = [json.loads(line) for line in (out / GAMES_FILE).read_text().splitlines()]
    alone = report.build(records[:2])
    assert [row["ci95"] for row in rep["ranking"]] == [row["ci95"] for row in alone["ranking"]]


# -- statistics over pairs ------------------------------------------------------------------
def test_pentanomial_figures_match_a_hand_computed_example() -> None:
    # Pairs scoring 0, 1/2, 1, 3/2, 2 points counted 1, 2, 3, 2, 2 (N = 10 pairs); per pair
    # the score is points / 2 = 0, .25, .5, .75, 1:
    #   mu  = (0*1 + .25*2 + .5*3 + .75*2 + 1*2) / 10 = 5.5 / 10 = 0.55
    #   var = (1*.55^2 + 2*.30^2 + 3*.05^2 + 2*.20^2 + 2*.45^2) / 10
    #       = (.3025 + .18 + .0075 + .08 + .405) / 10 = 0.0975
    #   95% half-width = 1.96 * sqrt(.0975 / 10) = 1.96 * 0.098742 = 0.19353
    #   Elo = -400 log10(1 / .55 - 1) = -400 log10(0.818182) = 34.86
    #   interval ends: -400 log10(1 / .35647 - 1) = -102.6, -400 log10(1 / .74353 - 1) = 184.9
    stats = score_stats([1, 2, 3, 2, 2])
    assert stats["score"] == pytest.approx(0.55)
    assert stats["score_ci95"] == pytest.approx(0.19353, abs=1e-5)
    assert stats["elo"] == pytest.approx(34.86, abs=0.01)
    assert stats["elo_ci95"] == pytest.approx([-102.6, 184.9], abs=0.1)


def test_pentanomial_and_trinomial_counts_from_records() -> None:
    def rec(pair: int, players: list[str], scores: list[float]) -> dict:
        return {"players": players, "scores": scores, "pair": pair}

    records = [rec(0, ["a", "b"], [1, 0]), rec(0, ["b", "a"], [0, 1]),      # a: 2 points
               rec(1, ["a", "b"], [0.5, 0.5]), rec(1, ["b", "a"], [1, 0]),  # a: 1/2
               rec(2, ["a", "b"], [1, 0]), rec(2, ["b", "a"], [1, 0]),      # a: 1
               rec(3, ["a", "b"], [1, 0])]                                   # no partner
    assert pentanomial(records, "a", "b") == [0, 1, 1, 0, 1]
    assert pentanomial(records, "b", "a") == [1, 0, 1, 1, 0]
    assert trinomial(records, "a", "b") == [2, 1, 4]  # L, D, W


# -- SPRT -----------------------------------------------------------------------------------
def test_sprt_bounds_and_llr_by_hand() -> None:
    test = Sprt.parse("elo0=0,elo1=50,alpha=0.05,beta=0.05")
    # Wald: log(beta / (1 - alpha)) = log(.05 / .95) = -2.944439, and +2.944439
    assert test.bounds == pytest.approx((-2.944439, 2.944439), abs=1e-6)
    # Wins and losses only: the ML distribution with expectation s puts s on a win, so the
    # GLR is the binomial SPRT's  W log(s1 / s0) + L log((1 - s1) / (1 - s0)),
    # s0 = 1/2, s1 = 1 / (1 + 10^(-50/400)) = 0.571463; 30 wins, 20 losses:
    #   30 log(1.142926) + 20 log(0.857074) = 30 * 0.133592 - 20 * 0.154231
    #   = 4.007755 - 3.084626 = 0.923130 (the regularized empty draw count moves it by 1e-5)
    assert llr_logistic(0, 50, [20, 0, 30]) == pytest.approx(0.923130, abs=1e-4)
    # fishtest's published approximation (GSPRT_approximation.pdf, LLR_alt2):
    # N (s1 - s0)(2 mu - s0 - s1) / (2 var) on pentanomial counts is close to the exact GLR
    counts = [3, 10, 30, 12, 5]
    n = sum(counts)
    mu = sum(c * i / 4 for i, c in enumerate(counts)) / n
    var = sum(c * (i / 4 - mu) ** 2 for i, c in enumerate(counts)) / n
    s0, s1 = 0.5, 1 / (1 + 10 ** (-10 / 400))
    approx = n * (s1 - s0) * (2 * mu - s0 - s1) / var / 2
    assert llr_logistic(0, 10, counts) == pytest.approx(approx, rel=0.01)


def test_sprt_stops_at_the_first_pair_past_a_bound(capsys) -> None:
    test = Sprt.parse("elo0=0,elo1=50")
    watch = SprtWatch(test, ["a", "b"])
    finished: dict[str, dict] = {}
    stopped_at = None
    for k in range(100):  # a wins every pair 2-0: pentanomial [0, 0, 0, 0, k]
        for g, players in enumerate((["a", "b"], ["b", "a"])):
            rec = {"id": f"{k}.{g}", "players": players, "pair": k,
                   "scores": [1, 0] if players[0] == "a" else [0, 1]}
            finished[rec["id"]] = rec
            if watch(rec, finished):
                stopped_at = k + 1
                break
        if stopped_at:
            break
    # Each 2-0 pair adds the same LLR jump (all mass on "2 points"), so the test stops at the
    # first k with k * jump >= log(19) = 2.944; the jump is the LLR of one such pair
    jump = llr_logistic(0, 50, [0, 0, 0, 0, 1])
    assert stopped_at == math.ceil(2.944439 / jump) if jump > 0 else False
    assert watch.verdict == "H1"
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == stopped_at and lines[-1].startswith(f"SPRT {stopped_at} pairs")
    assert "[-2.944, 2.944]" in lines[-1]


def test_sprt_match_on_the_cli_stops_and_says_which(tmp_path: Path, capsys) -> None:
    code = main(["match", "random", "alphabeta:1", "--game", "loa", "--sprt",
                 "elo0=0,elo1=200", "--openings", "random:2", "--out", str(tmp_path), *QUICK])
    assert code == 0
    out = capsys.readouterr().out
    assert "SPRT: H1 accepted" in out or "SPRT: H0 accepted" in out
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["sprt"]["verdict"] in ("H0", "H1") and rep["sprt"]["trace"]
    assert abs(rep["sprt"]["llr"]) >= 2.944


@pytest.mark.parametrize("bad", ["elo1=0", "alpha=0.7", "x=1", "elo0=nan", "elo0"])
def test_bad_sprt_specs_are_one_line(tmp_path: Path, capsys, bad: str) -> None:
    code = main(["match", "random", "greedy", "--game", "loa", "--sprt", bad,
                 "--out", str(tmp_path / "m"), *QUICK])
    assert code == 2 and "--sprt" in one_line(capsys.readouterr().err)


def test_sprt_needs_two_agents(tmp_path: Path, capsys) -> None:
    code = main(["tournament", "--game", "loa", "--agents", "random,greedy,alphabeta:1",
                 "--sprt", "elo1=10", "--out", str(tmp_path / "t"), *QUICK])
    assert code == 2 and "two agents" in one_line(capsys.readouterr().err)


# -- threads --------------------------------------------------------------------------------
def test_torch_using_calls_run_on_one_thread_and_give_the_callers_setting_back() -> None:
    import torch

    from boardzoo.agents import make_agent
    from boardzoo.envs.core.batched import BatchedEnv
    from boardzoo.envs.core.threads import torch_threads
    from boardzoo.envs.vector import BoardzooVectorEnv

    caller = torch.get_num_threads()
    seen: list[int] = []
    try:
        torch.set_num_threads(3)
        agent = make_agent("checkpoint:loa,sims=0", "loa", 1)
        inner = agent.select_action
        agent.select_action = lambda s: (seen.append(torch.get_num_threads()), inner(s))[1]
        agent.select_move(load_state("loa"))
        assert seen and set(seen) == {1} and torch.get_num_threads() == 3
        env = BatchedEnv("loa", 4)
        step = env.game.step_inplace
        env.game.step_inplace = lambda b, a: (seen.append(-torch.get_num_threads()),
                                              step(b, a))[1]
        env.step(env.random_actions())
        assert seen[-1] == -1 and torch.get_num_threads() == 3
        vec = BoardzooVectorEnv("loa", 2, check_actions=False)
        vec.reset(seed=0)
        vec.env.game.step_inplace = env.game.step_inplace
        vec.step(vec.env.random_actions().numpy())
        assert seen[-1] == -1 and torch.get_num_threads() == 3
        assert BatchedEnv("loa", 2, threads=None).threads is None  # the caller's count
        with pytest.raises(RuntimeError), torch_threads(2):  # restored after an error too
            raise RuntimeError
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(caller)


# -- display names --------------------------------------------------------------------------
def test_names_show_in_tables_and_records_keep_the_spec(tmp_path: Path, capsys) -> None:
    from boardzoo.agents import make_agent

    agent = make_agent("mcts:2,NAME=Tiny,c=1.5", "loa", 0)
    assert agent.display_name == "Tiny" and agent.spec == "mcts:2,NAME=Tiny,c=1.5"
    engine = Path(__file__).resolve().parent / "engines" / "first_legal.sh"
    out = tmp_path / "t"
    code = main(["tournament", "--game", "loa", "--agent", f"engine:{engine}", "--agent",
                 "greedy,name=Greedy One", "--games-per-pair", "2", "--max-plies", "6",
                 "--out", str(out), *QUICK])
    assert code == 0
    table = capsys.readouterr().out
    assert "| first-legal.sh |" in table and "| Greedy One |" in table
    assert str(engine) not in table.split("Score of the row")[0]
    records = [json.loads(line) for line in (out / GAMES_FILE).read_text().splitlines()]
    assert {tuple(r["players"]) for r in records} == {
        (f"engine:{engine}", "greedy,name=Greedy One"),
        ("greedy,name=Greedy One", f"engine:{engine}")}
    # two agents that call themselves alike keep their specs: a name must say who is who
    assert report.display_names([{"players": ["a", "b"], "names": ["X", "X"]}]) == {}


def test_play_opens_each_pair_of_games_alike(capsys) -> None:
    assert main(["play", "loa", "--agents", "greedy", "alphabeta:1", "--games", "4", "--seed",
                 "1", "--openings", "random:2", "--show"]) == 0
    shown = [line.split()[1:3] for line in capsys.readouterr().out.splitlines()
             if line.startswith("moves: ")]
    assert len(shown) == 4 and shown[0] == shown[1] and shown[2] == shown[3] != shown[0]
    assert main(["play", "loa", "--openings", "random:2", "--position",
                 load_state("loa").to_text()]) == 2


def test_sprt_does_not_count_a_replayed_pair(capsys) -> None:
    watch = SprtWatch(Sprt.parse("elo1=50"), ["a", "b"])
    finished: dict[str, dict] = {}
    for k in range(2):  # the second pair replays the first move for move
        for g, players in enumerate((["a", "b"], ["b", "a"])):
            rec = {"id": f"{k}.{g}", "players": players, "pair": k, "moves": [f"m{g}"],
                   "scores": [1, 0] if players[0] == "a" else [0, 1]}
            finished[rec["id"]] = rec
            watch(rec, finished)
    assert watch.pairs == 1


def test_specs_with_bars_that_used_to_share_an_id_all_play(tmp_path: Path, capsys) -> None:
    # P|Q and R|S were one id ("engine:E x|mcts:2,name=y|alphabeta:1|g") and one seed:
    # a resumed tournament skipped one of the games and its report disagreed with the file
    # (P's "|mcts:2" is an argument of its engine's command, S's "|alphabeta:1" its name)
    engine = f"engine:{Path(__file__).resolve().parent / 'engines' / 'first_legal.sh'}"
    p, q = f"{engine} x|mcts:2,name=y", "alphabeta:1"
    r, s = f"{engine} x", "mcts:2,name=y|alphabeta:1"
    records = run_tournament("loa", [p, q, r, s], 2, tmp_path, max_plies=4, progress=False,
                             stop_after=7)
    capsys.readouterr()
    records = run_tournament("loa", [p, q, r, s], 2, tmp_path, max_plies=4, progress=False,
                             resume=True)
    assert "7 of 12 games were played; playing the 5 missing" in capsys.readouterr().err
    lines = (tmp_path / GAMES_FILE).read_text().splitlines()
    assert len(records) == len(lines) == 12 == len({r["id"] for r in records})
    assert report.build(records)["games"] == 12
