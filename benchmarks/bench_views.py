"""Benchmark: a cached rerun of both views (stages 08 and 09) on a tiny project with a real model.

The slow tests (``tests/views/know2guess/test_stage.py``, ``tests/views/evidence/test_stage.py``) check that a
rerun sends no call; this times it. Each view runs once (SmolLM2-135M in every role, calls
cached), then again; the rerun's seconds go to outputs/bench/views.json. Target: under 10 s per
view's model-call steps (Know2Guess: decisions + grading; evidence: answers) on 2 cores.
``--quick`` skips the evidence view.

    .venv/bin/python benchmarks/bench_views.py [--quick]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tiny projects live with the tests (tests/support)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402

from tests.support import esb_run, projects, small_model_runs  # noqa: E402

from declinecraft.core import paths  # noqa: E402

TARGET_SECONDS = 10.0


def know2guess_rerun(tmp: Path) -> float:
    """Seconds of the Know2Guess view's model-call steps on a cached rerun."""
    from declinecraft.evaluation import answer_stage, judge_stage
    from declinecraft.views.know2guess import stage

    cfg = small_model_runs.tiny_project(tmp, ROOT)
    answer_stage.run(cfg)
    judge_stage.run(cfg)
    stage.run(cfg)
    again = stage.run(cfg)
    return float(again.manifest["seconds"]["decisions"] + again.manifest["seconds"]["grading"])


def evidence_rerun(tmp: Path) -> float:
    """Seconds of the evidence view's answer step on a cached rerun."""
    from declinecraft.views.evidence import stage

    root = projects.copy_project(tmp / "project")
    small = {"max_tokens": "24", "conflict_max_tokens": "24", "prompts": "[P1, P2]"}
    cfg = esb_run.make_run(root, small, tested="smollm2-135m", generator="smollm2-135m", judge="smollm2-135m")
    stage.run(cfg, search=esb_run.FakeSearch())
    again = stage.run(cfg, search=esb_run.FakeSearch())
    return float(again.manifest["seconds"]["answers"])


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Time both reruns and write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the Know2Guess view only")
    args = parser.parse_args(argv)
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DECLINECRAFT_CACHE"] = str(Path(tmp) / "cache")
        seconds["know2guess"] = round(know2guess_rerun(Path(tmp) / "k2g"), 2)
        if not args.quick:
            seconds["evidence"] = round(evidence_rerun(Path(tmp) / "esb"), 2)
    out: dict[str, object] = {
        "benchmark": "views",
        "quick": args.quick,
        "rerun_seconds": seconds,
        "target_seconds": TARGET_SECONDS,
        "within_target": all(s < TARGET_SECONDS for s in seconds.values()),
        "python": platform.python_version(),
    }
    paths.write_text_atomic(ROOT / "outputs" / "bench" / "views.json", json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
