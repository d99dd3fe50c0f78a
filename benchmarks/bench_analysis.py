"""Benchmark: the whole analysis (stage 07) of a paper-sized synthetic judged table on 2 cores.

40 configurations x 3 conditions x 1,000 questions (120,000 responses, three accuracy judges),
as in the paper. Target: at most 60 s. Also times drawing every figure and the LaTeX tables
(stage 10 without the PDF). Writes outputs/bench/analysis.json. ``--quick`` runs a small table
(6 configurations x 100 questions, 50 resamples) to check that the benchmark works, not to time it.

    .venv/bin/python benchmarks/bench_analysis.py [--quick] [--configs 40] [--questions 1000]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Two cores, as the embedded default targets: set before numpy/polars start their pools.
for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the synthetic tables live in tests/support, beside the tests that use them

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
from tests.support import synthetic  # noqa: E402

from declinecraft.analysis import analyze, paper_tables, results  # noqa: E402
from declinecraft.core import paths  # noqa: E402
from declinecraft.paper import figures, tables  # noqa: E402

#: Sizes of the full benchmark (the paper's) and of ``--quick``.
FULL = {"configs": 40, "questions": 1000, "resamples": 1000}
QUICK = {"configs": 6, "questions": 100, "resamples": 50}
TARGET_SECONDS = 60


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Sizes from the command line; ``--quick`` sets small defaults that explicit sizes override."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the benchmark runs")
    parser.add_argument("--configs", type=int)
    parser.add_argument("--questions", type=int)
    parser.add_argument("--resamples", type=int)
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Time the analysis, then the figures and LaTeX tables, and write the timings as JSON."""
    args = parse_args(argv)
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 2:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])

    start = time.perf_counter()
    judged = synthetic.synthetic_judged(args.configs, args.questions, seed=0)
    facts = synthetic.synthetic_models(args.configs, seed=0)
    built = time.perf_counter() - start

    start = time.perf_counter()
    computed = analyze.analyze(judged, facts, analyze.Design(n_resamples=args.resamples))
    computed["facts"] = facts
    with tempfile.TemporaryDirectory() as tmp:
        for name, table in computed.items():
            results.write_csv(table, Path(tmp) / f"{name}.csv")
        seconds = time.perf_counter() - start

        start = time.perf_counter()
        read_back = results.read_tables(Path(tmp))
        rows = figures.write_figures(read_back, Path(tmp), formats=("pdf", "png"), dpi=200)
        drawn = sum(not r["reason"] for r in rows)
        plt.close("all")
        latex = {n: tables.to_latex(n, t) for n, t in paper_tables.build(read_back).items() if not isinstance(t, str)}
        paper_seconds = time.perf_counter() - start

    out: dict[str, object] = {
        "benchmark": "analysis",
        "quick": args.quick,
        "configurations": args.configs,
        "conditions": 3,
        "questions": args.questions,
        "responses": judged.height,
        "bootstrap_resamples": args.resamples,
        "seconds": round(seconds, 2),
        "target_seconds": TARGET_SECONDS,
        "within_target": seconds <= TARGET_SECONDS,
        "build_synthetic_seconds": round(built, 2),
        "figures_and_tables_seconds": round(paper_seconds, 2),
        "figures_drawn": drawn,
        "latex_tables": len(latex),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
    }
    target = ROOT / "outputs" / "bench" / "analysis.json"
    paths.write_text_atomic(target, json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
