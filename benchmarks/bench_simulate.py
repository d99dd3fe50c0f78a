"""The paper's whole design on the simulated cluster (``make simulate``), timed: wall time, calls
sent against the plan, the most endpoints busy at once, peak memory and disk.

    .venv/bin/python benchmarks/bench_simulate.py [--quick] [--scale N]

Runs ``python -m declinecraft.simulation --scale N`` at the repository root (default: the paper's
size; ``--quick``, ``make bench QUICK=1``: 1/100 of it) and copies its ``report.json`` with the
largest resident memory of any process the run started (``getrusage`` of the children) into
``outputs/bench/simulate.json``. The run's own outputs stay in ``outputs/simulate*/``, stamped
SIMULATED: none of its numbers is a result, only its costs are.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

from declinecraft.core import paths
from declinecraft.simulation import command

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1/100 of the paper's size")
    parser.add_argument("--scale", type=int, default=None, help="run 1/SCALE of the paper's size (default 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "simulate.json")
    args = parser.parse_args(argv)
    scale = args.scale or (100 if args.quick else 1)
    done = subprocess.run([sys.executable, "-m", "declinecraft.simulation", "--scale", str(scale)], cwd=ROOT)
    folder = ROOT / "outputs" / command.run_name(scale) / "simulation"
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    report.pop("cluster", None)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    report["scale"] = scale
    args.out.parent.mkdir(parents=True, exist_ok=True)
    paths.write_text_atomic(args.out, json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "models"}, indent=2))
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
