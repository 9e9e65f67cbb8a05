"""``boardzoo train`` and ``boardzoo plot`` (registered by the CLI; heavy imports stay inside
the handlers so other subcommands start fast)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from boardzoo.envs.core.game import BoardzooError

from . import configfiles

if TYPE_CHECKING:
    from .config import Config


def check_baselines(cfg: Config) -> None:
    """Build each ``eval.baselines`` agent once, so that a spec that cannot play (a missing
    file or engine, an sb3 model without ``trust_code``) stops the run before its first
    game rather than at its first evaluation."""
    from boardzoo.agents.base import check_spec

    from .config import ConfigError

    for spec in cfg.eval.baselines:
        try:
            check_spec(spec, cfg.game)
        except BoardzooError as exc:
            raise ConfigError(f"eval.baselines: {exc}") from None


def cmd_train(args: argparse.Namespace) -> int:
    """Run (or resume) a self-play training run."""
    from .config import ConfigError, check_extras, load_config

    overrides = list(args.set or [])
    config_path = args.config
    out = Path(args.out) if args.out else None
    source = config_path
    if config_path is None:
        if not (args.resume and out is not None):
            raise ConfigError("train needs --config FILE or NAME (or --resume --out RUN to "
                              "continue a run with the config it was started with)")
        config_path = source = str(out / "config.yaml")
    else:
        path, shipped = configfiles.resolve_config(config_path)
        config_path = str(path)
        if shipped:
            source = f"the shipped config {args.config}"
    # a run's own config.yaml may come from an older boardzoo: its keys are migrated
    cfg = load_config(config_path, overrides, saved=args.config is None)
    if args.init_from and args.resume:
        raise ConfigError("--init-from starts a new run; a resumed run continues from its "
                          "checkpoint (drop --init-from)")
    if out is None:
        out = Path("runs") / Path(config_path).stem
    for note in check_extras(cfg):  # before anything is created
        print(f"note: {note}", flush=True)
    check_baselines(cfg)
    import torch

    from .trainer import Trainer

    if cfg.threads > 0:  # this command owns the process: it sets torch's threads
        torch.set_num_threads(cfg.threads)

    trainer = Trainer(cfg, out, resume=args.resume, progress=not args.quiet, echo=not args.quiet,
                      config_source=source + "".join(f" --set {o}" for o in overrides),
                      init_from=args.init_from)
    set_keys = {o.split("=", 1)[0].strip() for o in overrides}
    unasked = ([c for c in trainer.resume_changes if c.split(" ", 1)[0] not in set_keys]
               if args.resume and args.config is not None else [])
    if unasked:  # e.g. the --set options the run was started with, which FILE lacks
        print(f"note: --config {args.config} changes the run's settings beyond this command's "
              f"--set ({', '.join(unasked)}); to keep the run's own, resume with --resume "
              f"--out {out} alone (and --set for a change)", flush=True)
    print(f"training {cfg.game} into {out}/ ({cfg.iterations} iterations"
          + (f", at most {cfg.time_limit_minutes:g} min" if cfg.time_limit_minutes else "")
          + (f", resuming after iteration {trainer.iteration}" if args.resume else "") + ")",
          flush=True)
    summary = trainer.run()
    print(f"done: {summary['iteration']} iterations in {summary['elapsed_s'] / 60:.1f} min; "
          f"best network: {out}/best.pt (iteration {summary['best_iteration']}); "
          f"curves: boardzoo plot {out}")
    print(f"play it: boardzoo play {cfg.game} --agents checkpoint:{out}/best.pt random")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """Draw a run's learning curves to PNG."""
    from .plot import plot_run

    path = plot_run(args.run, args.output)
    print(path)
    return 0


#: Config keys ``boardzoo export --set`` may change: how the search plays, never the weights'
#: shapes or what training did.
EXPORT_KEYS = ("play.root", "play.gumbel_m", "play.policy_temperature", "play.skip_forced",
               "play.win_in_one", "play.leaf_depth", "play.stop_early")


def cmd_export(args: argparse.Namespace) -> int:
    """Write a run's network as a model file, optionally with other play-time settings."""
    from boardzoo.envs.core.game import echo
    from boardzoo.envs.core.registry import action_game

    from .agent import load_net
    from .checkpoint import model_file, save_atomic
    from .config import (
        ConfigError,
        apply_overrides,
        from_saved,
        old_key_message,
        parse_override,
        refused_keys,
    )

    overrides = list(args.set or [])
    for text in overrides:
        key = ".".join(parse_override(text)[0])
        message = old_key_message(key)
        if message:
            raise ConfigError(f"export --set {text!r}: {message}")
        if key not in EXPORT_KEYS:
            raise ConfigError(f"export --set {echo(text)}: only {', '.join(EXPORT_KEYS)} can "
                              f"change "
                              f"(the rest describes the trained weights)")
    net, cfg, data = load_net(args.source)
    cfg = from_saved(apply_overrides(cfg.to_dict(), overrides))  # validated
    useless = refused_keys(cfg, [".".join(parse_override(text)[0]) for text in overrides])
    if useless:
        raise ConfigError(f"export: {useless}")
    game = action_game(cfg.game)
    note = args.note if args.note is not None else data.get("note", "")
    save_atomic(model_file(cfg.game, cfg.to_dict(), game.observation_shape, game.num_actions,
                           net.state_dict(), note), args.output)
    print(f"{args.output}: {cfg.game} network" + "".join(f", {o}" for o in overrides))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("train", help="AlphaZero-style self-play training")
    p.add_argument("--config", metavar="FILE|NAME",
                   help="YAML config file, or a shipped config's name: loa, ultima, whistling, "
                        "tiny (boardzoo config list); a file that exists wins")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out (default runs/<config name>)")
    p.add_argument("--out", metavar="DIR", help="run folder (default runs/<config name>)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append",
                   help="override a config value, e.g. --set mcts.simulations=64 (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-iteration lines")
    p.add_argument("--init-from", metavar="MODEL",
                   help="start a new run from this model file's weights (a run's best.pt, "
                        "boardzoo distill's output); its model config must match")
    p.set_defaults(func=cmd_train)

    configfiles.register(subparsers)
    _register_distill(subparsers)
    _register_fit_eval(subparsers)

    p = subparsers.add_parser("plot", help="draw a training run's learning curves to PNG")
    p.add_argument("run", metavar="RUN", help="run folder (e.g. runs/loa)")
    p.add_argument("--output", "-o", metavar="PNG", help="output file (default RUN/curves.png)")
    p.set_defaults(func=cmd_plot)

    p = subparsers.add_parser("export", help="write a run's network as a model file "
                                             "(optionally with other play-time settings)")
    p.add_argument("source", metavar="SRC", help="best.pt, model.pt or checkpoint.pt of a run")
    p.add_argument("output", metavar="OUT", help="model file to write (checkpoint:OUT plays it)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append",
                   help="a play-time setting: " + ", ".join(EXPORT_KEYS) + " (repeatable)")
    p.add_argument("--note", help="text kept in the file (default: the source's note)")
    p.set_defaults(func=cmd_export)


def _register_distill(subparsers: argparse._SubParsersAction) -> None:
    ap = subparsers.add_parser("distill", help="teach a fresh network the static evaluation's "
                                               "play before self-play (a warm start)")
    ap.add_argument("--config", required=True, help="training config (YAML)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, repeatable")
    ap.add_argument("--positions", type=int, default=2000, help="teacher positions")
    ap.add_argument("--steps", type=int, default=400, help="gradient steps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperature", type=float, default=0.25,
                    help="teacher softmax temperature, evaluation units (0: argmax)")
    ap.add_argument("--epsilon", type=float, default=0.1, help="random move probability")
    ap.add_argument("--opening", type=int, default=4, help="random actions at each start")
    ap.add_argument("--keep", type=float, default=1.0,
                    help="probability of keeping each position (below 1: more games)")
    ap.add_argument("--value", choices=("eval", "search", "outcome"), default="eval",
                    help="value target: tanh(evaluation / scale), tanh(alpha-beta value / "
                    "scale) of a --depth search, or the game's result")
    ap.add_argument("--depth", type=int, default=1,
                    help="search depth in turns of --value search (default 1)")
    ap.add_argument("--init-from", metavar="MODEL",
                    help="start from this model file's weights (its model may differ from "
                    "the config's in model.value only)")
    ap.add_argument("--keep-policy", action="store_true",
                    help="policy targets = the starting network's own policy (with "
                    "--init-from: only the value is taught)")
    ap.add_argument("--out", required=True, help="model file to write")
    ap.set_defaults(func=cmd_distill)


def _register_fit_eval(subparsers: argparse._SubParsersAction) -> None:
    ap = subparsers.add_parser("fit-eval", help="fit a learned evaluation for the compiled "
                               "alpha-beta (alphabeta:...,eval=FILE) to a network's value, "
                               "or learn one from self-play alone (--selfplay)")
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", metavar="MODEL",
                        help="the network: a model file or run checkpoint, or loa for the "
                        "shipped one")
    source.add_argument("--selfplay", type=int, metavar="GENERATIONS",
                        help="no network: learn a linear evaluation of counts from the results "
                        "of GENERATIONS of its own games (needs --game)")
    ap.add_argument("--out", required=True, metavar="FILE", help="evaluation file to write (.npz)")
    ap.add_argument("--positions", type=int,
                    help="positions to fit on (default 400000; each in its 8 symmetric images)")
    ap.add_argument("--hidden", type=int, help="hidden units (default 64)")
    ap.add_argument("--epochs", type=int, help="passes over the positions (default 6)")
    ap.add_argument("--random-moves", type=float,
                    help="probability of a random move in the games played (default 0.3; "
                    "--selfplay 0.15)")
    ap.add_argument("--game", help="--selfplay: the game (ultima)")
    ap.add_argument("--games", type=int,
                    help="--selfplay: games a generation (default 5000)")
    ap.add_argument("--per-game", type=int,
                    help="--selfplay: positions kept of each game (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.set_defaults(func=cmd_fit_eval)


def cmd_fit_eval(args: argparse.Namespace) -> int:
    """Run ``boardzoo fit-eval`` (torch loads only here)."""
    from .eval_fit import cmd_fit_eval as run

    return run(args)


def cmd_distill(args: argparse.Namespace) -> int:
    """Run ``boardzoo distill`` (torch and the teacher load only here)."""
    from .distill import cmd_distill as run

    return run(args)
