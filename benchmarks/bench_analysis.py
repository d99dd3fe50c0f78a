"""Benchmark: the whole analysis (stage 07) of a paper-sized synthetic judged table on 2 cores.

40 configurations x 3 conditions x 1,000 questions (120,000 responses, three accuracy judges),
as in the paper. Target: at most 60 s. Also times drawing every figure and the LaTeX tables
(stage 08 without the PDF). Writes outputs/bench/analysis.json.

    .venv/bin/python benchmarks/bench_analysis.py [--configs 40] [--questions 1000]
"""

from __future__ import annotations

import os

# Two cores, as the embedded default targets: set before numpy/polars start their pools.
for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

from declinecraft.analysis import analyze as analysis  # noqa: E402
from declinecraft.core import paths
from declinecraft.paper import figures as plots
from declinecraft.paper import tables as report_tables
from tests.support import synthetic

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=40)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 2:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])

    start = time.perf_counter()
    judged = synthetic.synthetic_judged(args.configs, args.questions, seed=0)
    facts = synthetic.synthetic_models(args.configs, seed=0)
    built = time.perf_counter() - start

    start = time.perf_counter()
    tables = analysis.analyze(judged, facts, analysis.Design(n_resamples=args.resamples))
    tables["facts"] = facts
    with tempfile.TemporaryDirectory() as tmp:
        for name, table in tables.items():
            analysis.write_csv(table, Path(tmp) / f"{name}.csv")
        seconds = time.perf_counter() - start

        start = time.perf_counter()
        results = analysis.read_tables(Path(tmp))
        drawn = 0
        for spec in plots.figures():
            if not spec.lacks(results):
                plots.save(spec.draw(results), Path(tmp), spec.stem, ("pdf", "png"), dpi=200)
                drawn += 1
        plt.close("all")
        latex = {n: report_tables.to_latex(n, t) for n, t in report_tables.build(results).items() if not isinstance(t, str)}
        paper_seconds = time.perf_counter() - start

    out = {
        "benchmark": "analysis",
        "configurations": args.configs,
        "conditions": 3,
        "questions": args.questions,
        "responses": judged.height,
        "bootstrap_resamples": args.resamples,
        "seconds": round(seconds, 2),
        "target_seconds": 60,
        "within_target": seconds <= 60,
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


if __name__ == "__main__":
    main()
