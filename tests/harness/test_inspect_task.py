"""Tests for declinecraft.harness.inspect_task: ``inspect eval`` against a real llama.cpp server gives
our CAR (slow).

The default run's smallest model under test answers the first questions of the default benchmark
without retrieval through ``inspect eval``; its CAR, attempt rate and per-question rule labels must
equal those of our own responses (``05_answer/responses.parquet``) for the same model, condition
and questions. The response texts must be equal too (the same request, greedy decoding), which
is what makes the check bite when a small model never abstains (CAR 0 everywhere)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support import harness_runs, projects


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_inspect_eval(base_url: str, ours: harness_runs.Ours, tmp_path: Path) -> None:
    """``inspect eval`` of the task gives our labels and our CAR."""
    from inspect_ai.log import read_eval_log

    task = projects.REPO / "src" / "declinecraft" / "harness" / "inspect_task.py"
    subprocess.run(
        [
            str(harness_runs.BIN / "inspect"),
            "eval",
            f"{task}@declinecraft",
            "--model",
            f"llama-cpp-python/{harness_runs.MODEL}",
            "--model-base-url",
            base_url,
            "-T",
            f"benchmark={harness_runs.RUN}",
            "-T",
            f"limit={harness_runs.N_QUESTIONS}",
            "--log-dir",
            str(tmp_path),
            "--display",
            "none",
            "--max-connections",
            "1",
        ],
        check=True,
        cwd=projects.REPO,
        timeout=1500,
    )
    log = read_eval_log(str(next(tmp_path.glob("*.eval"))))
    assert log.status == "success" and log.samples is not None and log.results is not None
    texts = {str(s.id): s.output.completion for s in log.samples}
    labels = {str(s.id): s.scores["rule_labels"].answer or None for s in log.samples if s.scores}
    car = log.results.scores[0].metrics["car"].value
    print(f"inspect: CAR {car} (ours {ours.car}), labels {labels}")
    assert texts == ours.texts
    assert labels == ours.labels
    assert harness_runs.same(car, ours.car)
