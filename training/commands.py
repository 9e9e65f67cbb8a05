"""``boardzoo train`` and ``boardzoo plot`` (registered by the CLI; heavy imports stay inside
the handlers so other subcommands start fast)."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_train(args: argparse.Namespace) -> int:
    """Run (or resume) a self-play training run."""
    from .config import ConfigError, check_extras, load_config

    overrides = list(args.set or [])
    config_path = args.config
    out = Path(args.out) if args.out else None
    if config_path is None:
        if not (args.resume and out is not None):
            raise ConfigError("train needs --config FILE (or --resume --out RUN to continue a "
                              "run with the config it was started with)")
        config_path = str(out / "config.yaml")
    cfg = load_config(config_path, overrides)
    if out is None:
        out = Path("runs") / Path(config_path).stem
    for note in check_extras(cfg):  # before anything is created
        print(f"note: {note}", flush=True)
    from .trainer import Trainer

    trainer = Trainer(cfg, out, resume=args.resume, progress=not args.quiet, echo=not args.quiet,
                      config_source=config_path + "".join(f" --set {o}" for o in overrides))
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


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("train", help="AlphaZero-style self-play training")
    p.add_argument("--config", metavar="FILE", help="YAML config (e.g. configs/loa.yaml)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out (default runs/<config name>)")
    p.add_argument("--out", metavar="DIR", help="run folder (default runs/<config name>)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append",
                   help="override a config value, e.g. --set mcts.simulations=64 (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-iteration lines")
    p.set_defaults(func=cmd_train)

    p = subparsers.add_parser("plot", help="draw a training run's learning curves to PNG")
    p.add_argument("run", metavar="RUN", help="run folder (e.g. runs/loa)")
    p.add_argument("--output", "-o", metavar="PNG", help="output file (default RUN/curves.png)")
    p.set_defaults(func=cmd_plot)
