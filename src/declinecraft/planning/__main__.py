"""``python -m declinecraft.planning PARAMS [--gpus 8xH100-80GB] [--probe] [--out DIR]``: plan a run.

Prints the plan and writes ``outputs/<run>/plan.csv`` and ``plan.json`` (or into ``--out``).
Nothing is sent unless ``--probe`` asks each hosted endpoint and the wiki once whether it answers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from declinecraft.core.config import ConfigError, check_models, load
from declinecraft.planning import plan, report


def main(argv: list[str]) -> int:
    """Parse the arguments, build, print and write the plan; 1 on a bad params file or machine."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.planning", description=__doc__.splitlines()[0])
    parser.add_argument("params", help="the params file (params/<run>.yaml)")
    parser.add_argument("--gpus", default=plan.DEFAULT_MACHINE, help="the GPU machine, <n>x<name>-<memory>GB")
    parser.add_argument(
        "--probe", action="store_true", help="ask hosted endpoints and the wiki once whether they answer"
    )
    parser.add_argument(
        "--gpu-usd-per-hour", type=float, default=0.0, help="price of a GPU-hour for self-hosted models"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for plan.csv and plan.json (default outputs/<run>/)"
    )
    args = parser.parse_args(argv)
    try:
        cfg = load(args.params)
        check_models(cfg)
        reported = cfg.root / "params" / "paper_reported.yaml"
        built = plan.build(
            cfg,
            machine=args.gpus,
            probe=args.probe,
            gpu_usd_per_hour=args.gpu_usd_per_hour,
            reported=reported if cfg.run == "paper" else None,
        )
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report.render(built))
    written = plan.write(built, args.out or cfg.run_dir())
    print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
