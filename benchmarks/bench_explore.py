"""Benchmark: the explorer on 2 cores. Targets: ``explore.load`` of a paper-sized run (1,000 questions x
40 configurations x 3 conditions = 120,000 responses, with response texts, thinking traces, retrieved
chunk ids and iterative rounds) in at most 5 s; that run's explorer (first page and one file per
question) opening in Chromium in at most 2 s, and any question's responses shown within 1 s of
asking (five questions measured); a filter over every question and configuration.
``--quick`` (CI) loads a run of 4 configurations x 100 questions instead. ``--params`` times an
explorer a run has written (``outputs/<run>/explorer/``, for example the simulated run's) instead
of a synthetic one: load, filters and Chromium, nothing written. Writes outputs/bench/explore.json
(``explore-<run>.json`` with ``--params``).

    .venv/bin/python benchmarks/bench_explore.py [--quick] [--configs 40] [--questions 1000]
    .venv/bin/python benchmarks/bench_explore.py --params outputs/simulate/simulation/simulate.yaml
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


def in_chromium(page: Path, work: Path, fragment: str = "") -> dict[str, float]:
    """Chromium --dump-dom of ``page#fragment``: wall seconds (browser start included), the page's
    own time from navigation start to its first render (``ready``), the time its last filter took
    (``render``) and, for a question opened by ``#open=``, from asking for its file to its responses
    shown (``open``)."""
    start = time.monotonic()
    uri = f"{page.as_uri()}#{fragment}" if fragment else page.as_uri()
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={work / f'profile-{time.monotonic_ns()}'}", "--dump-dom", uri],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.monotonic() - start
    found = {}
    for key in ("ready", "render", "open"):
        match = re.search(rf'data-{key}-ms="([0-9.]+)"', done.stdout)
        found[f"{key}_seconds"] = round(float(match.group(1)) / 1000, 3) if match else float("nan")
    return {"wall_seconds": round(wall, 3), **found}


def in_browser(page: Path, frame: pl.DataFrame, work: Path) -> dict[str, object]:
    """The explorer ``page`` in Chromium: its first view, a filter over every question and
    configuration, and five questions' responses opened (or a note when Chromium is absent)."""
    if not CHROMIUM.exists():
        return {"html_open_seconds": None, "html_note": f"{CHROMIUM} absent: open times not measured"}
    first = in_chromium(page, work)
    filtered = in_chromium(page, work, "flag=judges&transition=A-X")
    ids = frame["question_id"].unique().sort().to_list()
    opened = [in_chromium(page, work, f"open={ids[i]}") for i in range(0, len(ids), max(1, len(ids) // 5))]
    return {
        "html_open_seconds": first["ready_seconds"],
        "html_open_wall_seconds": first["wall_seconds"],
        "filter_all_render_seconds": filtered["render_seconds"],
        "question_open_seconds": [o["open_seconds"] for o in opened],
        "question_open_wall_seconds": [o["wall_seconds"] for o in opened],
    }


def sizes(page: Path) -> dict[str, int]:
    """The explorer's first page and its question files, in bytes."""
    shards = [p.stat().st_size for p in (page.parent / "questions").glob("*.js")]
    return {
        "html_bytes": page.stat().st_size,
        "question_files": len(shards),
        "question_file_bytes_total": sum(shards),
        "question_file_bytes_max": max(shards, default=0),
    }


def written(params: Path, out: dict[str, object]) -> Path:
    """Time the explorer a run has written (``--params``): load, filters, the page in Chromium."""
    cfg = config.load(params)
    start = time.perf_counter()
    frame = explore.load(cfg)
    out.update(
        run=cfg.run,
        rows=frame.height,
        questions=frame["question_id"].n_unique(),
        load_seconds=round(time.perf_counter() - start, 3),
    )
    page = cfg.run_dir() / "explorer" / "index.html"
    if not page.is_file():
        raise SystemExit(f"{page}: no explorer written for this run (make all PARAMS={params})")
    out.update(sizes(page))
    with tempfile.TemporaryDirectory() as tmp:
        out.update(in_browser(page, frame, Path(tmp)))
    return paths.outputs_dir(ROOT) / "bench" / f"explore-{cfg.run}.json"


def main() -> None:
    """Time loading, filtering, one question's view and the report; write outputs/bench/explore.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run, for CI (4 configurations x 100 questions)")
    parser.add_argument("--configs", type=int, default=None, help="configurations (default 40, quick 4)")
    parser.add_argument("--questions", type=int, default=None, help="questions (default 1000, quick 100)")
    parser.add_argument("--params", type=Path, default=None, help="time this run's written explorer instead")
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
    target = paths.outputs_dir(ROOT) / "bench" / "explore.json"
    if args.params is not None:
        target = written(args.params, out)
    else:
        synthetic(n_configs, n_questions, out)
    out["targets"] = {"load_seconds": 5.0, "html_open_seconds": 2.0, "question_open_seconds": 1.0}
    paths.write_text_atomic(target, json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


def synthetic(n_configs: int, n_questions: int, out: dict[str, object]) -> None:
    """Time a synthetic paper-sized run's explorer: load, filters, one question, the page written and opened."""
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

        start = time.perf_counter()
        page = explore.write_report(cfg, out=Path(tmp) / "paper-explorer" / "index.html")
        out.update(html_write_seconds=round(time.perf_counter() - start, 3), **sizes(page))
        out.update(in_browser(page, frame, Path(tmp)))


if __name__ == "__main__":
    main()
