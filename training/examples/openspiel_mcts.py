"""OpenSpiel's MCTSBot against a boardzoo agent, played by OpenSpiel's own ``evaluate_bots``.

Needs the extra: ``pip install "boardzoo[openspiel]"``. Run for instance

    python -m boardzoo.training.examples.openspiel_mcts --game loa --opponent alphabeta:1

``--leaf rollout`` is OpenSpiel's RandomRolloutEvaluator (slow in Python: a random LOA
game to the end per simulation); ``--leaf eval`` scores leaves with boardzoo's evaluation.
"""

from __future__ import annotations

import argparse

import numpy as np
from open_spiel.python.algorithms import evaluate_bots, mcts

from boardzoo.agents import openspiel_bots
from boardzoo.agents.base import make_agent
from boardzoo.envs import openspiel


def main(argv: list[str] | None = None) -> dict:
    """Play the games and return the MCTS bot's wins, draws and losses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="loa", choices=["loa", "ultima", "whistling"])
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--leaf", default="eval", choices=["eval", "rollout"])
    parser.add_argument("--opponent", default="random", help="boardzoo agent spec")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    game = openspiel.load(args.game)  # the same as pyspiel.load_game("python_boardzoo_<game>")
    rng = np.random.RandomState(args.seed)
    evaluator = (openspiel_bots.HeuristicEvaluator(args.game) if args.leaf == "eval"
                 else mcts.RandomRolloutEvaluator(1, rng))
    bot = mcts.MCTSBot(game, 2.0, args.simulations, evaluator, random_state=rng)
    opponent = openspiel_bots.AgentBot(make_agent(args.opponent, args.game, args.seed))
    tally = {"wins": 0, "draws": 0, "losses": 0}
    for g in range(args.games):
        mcts_side = g % 2  # alternate who moves first
        bots = [bot, opponent] if mcts_side == 0 else [opponent, bot]
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rng)
        score = returns[mcts_side]
        tally["wins" if score > 0 else "losses" if score < 0 else "draws"] += 1
        print(f"game {g + 1}: MCTS ({state.game_state.player_names[mcts_side]}) vs "
              f"{args.opponent}: returns {returns}, {len(state.history())} actions, "
              f"final position {state}")
    print(f"MCTS({args.simulations}, {args.leaf}) vs {args.opponent} on {args.game}: {tally}")
    return tally


if __name__ == "__main__":
    main()
