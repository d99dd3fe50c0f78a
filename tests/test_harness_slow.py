"""inspect_ai and lm-evaluation-harness against a real llama.cpp server give our CAR (slow).

The default run's smallest model under test answers the first questions of the default benchmark
without retrieval, once through ``inspect eval`` and once through ``lm_eval``
(``local-chat-completions``); each harness's CAR, attempt rate and per-question rule labels must
equal those of our own responses (``05_answer/responses.parquet``) for the same model, condition
and questions. The response texts must be equal too (the same request, greedy decoding), which
is what makes the check bite when a small model never abstains (CAR 0 everywhere).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import paths
from declinecraft.core.registry import get_model
from declinecraft.harness import scoring
from declinecraft.llm import serve

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "outputs" / "default"
RESPONSES = RUN / "05_answer" / "responses.parquet"
MODEL = "smollm2-135m"
N_QUESTIONS = 3
BIN = Path(sys.executable).parent

if importlib.util.find_spec("inspect_ai") is None or importlib.util.find_spec("lm_eval") is None:
    pytest.skip(
        "the harness extra (inspect-ai, lm-eval) is not installed: `make setup` installs it", allow_module_level=True
    )
if not RESPONSES.is_file():
    pytest.skip(f"needs the default run's answers ({RESPONSES}): run `make all` first", allow_module_level=True)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """A llama.cpp server of the model, started and stopped by the project's own machinery."""
    spec = get_model(ROOT / "params" / "models.yaml", MODEL)
    with serve.serve(spec, paths.cache_dir(ROOT), reuse=False) as server:
        yield server.base_url


@dataclass(frozen=True)
class Ours:
    """Our no-retrieval responses of the model to the first questions, by question id."""

    texts: dict[str, str]
    labels: dict[str, str | None]
    car: float


@pytest.fixture(scope="module")
def ours() -> Ours:
    """Our responses, rule labels and CAR for the model without retrieval on the first questions."""
    frame = pl.read_parquet(RESPONSES).filter(
        pl.col("model") == MODEL,
        pl.col("condition") == "no_rag",
        pl.col("thinking") == "off",
        pl.col("prompt_variant") == "default",
    )
    frame = frame.sort("question_id").head(N_QUESTIONS)
    outcomes = {
        r["question_id"]: scoring.outcome(r["response"], r["finish_reason"], answerable=r["answerable"])
        for r in frame.to_dicts()
    }
    return Ours(
        {r["question_id"]: r["response"] for r in frame.to_dicts()},
        {i: o.label for i, o in outcomes.items()},
        scoring.rates(outcomes.values())["car"].rate,
    )


def same(a: float, b: float) -> bool:
    """Equal rates, NaN (no unanswerable question) equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


def test_inspect_eval(base_url: str, ours: Ours, tmp_path: Path) -> None:
    """``inspect eval`` of the task gives our labels and our CAR."""
    from inspect_ai.log import read_eval_log

    task = ROOT / "src" / "declinecraft" / "harness" / "inspect_task.py"
    subprocess.run(
        [
            str(BIN / "inspect"),
            "eval",
            f"{task}@declinecraft",
            "--model",
            f"llama-cpp-python/{MODEL}",
            "--model-base-url",
            base_url,
            "-T",
            f"benchmark={RUN}",
            "-T",
            f"limit={N_QUESTIONS}",
            "--log-dir",
            str(tmp_path),
            "--display",
            "none",
            "--max-connections",
            "1",
        ],
        check=True,
        cwd=ROOT,
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
    assert same(car, ours.car)


def test_lm_eval(base_url: str, ours: Ours, tmp_path: Path) -> None:
    """``lm_eval`` with the task folder and the local chat-completions model gives our labels and CAR."""
    tasks = ROOT / "src" / "declinecraft" / "harness" / "lm_eval_tasks"
    # A read timeout well above lm-eval's 300 s: on a busy 2-core machine one 256-token answer took 624 s.
    args = (
        f"model={MODEL},base_url={base_url}/chat/completions,num_concurrent=1,max_retries=3,"
        "tokenizer_backend=none,timeout=1500"
    )
    subprocess.run(
        [
            str(BIN / "lm_eval"),
            "--model",
            "local-chat-completions",
            "--model_args",
            args,
            "--tasks",
            "declinecraft_no_rag",
            "--include_path",
            str(tasks),
            "--apply_chat_template",
            "--metadata",
            json.dumps({"benchmark": str(RUN), "limit": N_QUESTIONS}),
            "--output_path",
            str(tmp_path),
            "--log_samples",
        ],
        check=True,
        cwd=ROOT,
        timeout=1500,
        env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
    )
    results = json.loads(next(tmp_path.rglob("results_*.json")).read_text())["results"]["declinecraft_no_rag"]
    samples = [json.loads(line) for f in tmp_path.rglob("samples_*.jsonl") for line in f.read_text().splitlines()]
    texts = {s["doc"]["id"]: s["resps"][0][0] for s in samples}
    labels = {s["doc"]["id"]: s["car"][1] for s in samples}
    car = results["car,none"]
    print(f"lm_eval: CAR {car} (ours {ours.car}), labels {labels}")
    assert texts == ours.texts
    assert labels == ours.labels
    assert same(car, ours.car)
