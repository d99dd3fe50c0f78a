"""Benchmark: the explorer on 2 cores. Targets: ``explore.load`` of a paper-sized run (1,000 questions x
40 configurations x 3 conditions = 120,000 responses, with response texts, thinking traces, retrieved
chunk ids and iterative rounds) in at most 5 s; the default run's HTML report open in Chromium in at
most 2 s (a synthetic run of the default run's size stands in until ``make all`` has made it).
``--quick`` (CI) loads a run of 4 configurations x 100 questions instead. Writes
outputs/bench/explore.json.

    .venv/bin/python benchmarks/bench_explore.py [--quick] [--configs 40] [--questions 1000]
"""

from __future__ import annotations

import os

# Two cores, as the embedded default targets: set before numpy/polars start their pools.
for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import polars as pl  # noqa: E402

from declinecraft import explore  # noqa: E402
from declinecraft.core import config, paths  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the synthetic tables live with the tests (tests/support)

from tests.support import explorer_run  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def open_seconds(page: Path, work: Path) -> dict[str, float]:
    """Chromium --dump-dom of the page: wall seconds (browser start included) and the page's own
    time from navigation start to its first render."""
    start = time.monotonic()
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={work / 'profile'}", "--dump-dom", page.as_uri()],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.monotonic() - start
    ready = re.search(r'data-ready-ms="([0-9.]+)"', done.stdout)
    return {
        "wall_seconds": round(wall, 3),
        "ready_seconds": round(float(ready.group(1)) / 1000, 3) if ready else float("nan"),
    }


def main() -> None:
    """Time loading, filtering, one question's view and the report; write outputs/bench/explore.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run, for CI (4 configurations x 100 questions)")
    parser.add_argument("--configs", type=int, default=None, help="configurations (default 40, quick 4)")
    parser.add_argument("--questions", type=int, default=None, help="questions (default 1000, quick 100)")
    args = parser.parse_args()
    n_configs = args.configs if args.configs is not None else (4 if args.quick else 40)
    n_questions = args.questions if args.questions is not None else (100 if args.quick else 1000)
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 2:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    out: dict[str, object] = {
        "cpus": 2,
        "python": platform.python_version(),
        "polars": pl.__version__,
        "quick": args.quick,
    }
    with tempfile.TemporaryDirectory() as tmp:
        cfg = explorer_run.paper_sized_project(Path(tmp) / "paper", n_configs=n_configs, n_questions=n_questions)
        start = time.perf_counter()
        frame = explore.load(cfg)
        out.update(
            rows=frame.height,
            questions=n_questions,
            configurations=n_configs,
            load_seconds=round(time.perf_counter() - start, 3),
        )
        start = time.perf_counter()
        counts = {name: fn(frame).height for name, (_, fn) in explore.FLAGS.items()}
        counts["transitions"] = explore.transitions(frame).height
        out.update(filter_seconds=round(time.perf_counter() - start, 3), filter_rows=counts)
        start = time.perf_counter()
        str(explore.show(frame["question_id"][0], frame)._repr_html_())
        out["show_seconds"] = round(time.perf_counter() - start, 3)

        default = config.load(ROOT / "params" / "default.yaml")
        if (default.stage_dir("judge") / "judged.parquet").is_file():
            source, run = "outputs/default", default
        else:  # the default run's size: 10 questions, one model, three conditions
            source, run = (
                "synthetic run of the default run's size (default run not built)",
                explorer_run.paper_sized_project(Path(tmp) / "small", n_configs=1, n_questions=10),
            )
        start = time.perf_counter()
        page = explore.write_report(run, out=Path(tmp) / "index.html")
        out.update(
            html_source=source, html_write_seconds=round(time.perf_counter() - start, 3), html_bytes=page.stat().st_size
        )
        if CHROMIUM.exists():
            opened = open_seconds(page, Path(tmp))
            out.update(html_open_seconds=opened["ready_seconds"], html_open_wall_seconds=opened["wall_seconds"])
        else:
            out["html_open_seconds"] = None
            out["html_note"] = "/usr/bin/chromium absent: open time not measured"
    out["targets"] = {"load_seconds": 5.0, "html_open_seconds": 2.0}
    target = paths.outputs_dir(ROOT) / "bench" / "explore.json"
    paths.write_text_atomic(target, json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
