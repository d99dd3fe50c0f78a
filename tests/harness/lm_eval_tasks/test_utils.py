"""Tests for declinecraft.harness.lm_eval_tasks (its utils and task file): lm-evaluation-harness's
scoring of the benchmark, and (slow) ``lm_eval`` against a real llama.cpp server giving our CAR,
labels and response texts for the default run's smallest model (as ``test_inspect_task`` does)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from declinecraft.harness import samples
from declinecraft.harness.lm_eval_tasks import utils
from tests.support import harness_runs, projects

TASKS = Path(samples.__file__).parent / "lm_eval_tasks"


class TestLmEvalTask:
    def test_functions_exist(self) -> None:
        """Every ``!function utils.<name>`` of the task YAML is a function of utils.py."""
        text = (TASKS / "declinecraft_no_rag.yaml").read_text()
        loader = type("Loader", (yaml.SafeLoader,), {})
        loader.add_constructor("!function", lambda load, node: load.construct_scalar(node))
        config = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
        names = [
            config["custom_dataset"],
            config["doc_to_text"],
            config["process_results"],
            *(m["aggregation"] for m in config["metric_list"]),
        ]
        assert all(callable(getattr(utils, n.removeprefix("utils."))) for n in names)
        assert config["generation_kwargs"]["temperature"] == 0.0 and config["generation_kwargs"]["until"] == []

    def test_scores(self) -> None:
        """process_results and the aggregations give the rule-label CAR and attempt rate."""
        docs = [
            ({"answerable": False}, "I do not know."),
            ({"answerable": False}, "It is red."),
            ({"answerable": True}, "Craft it from wood."),
        ]
        items = [utils.process_results(d, [r])["car"] for d, r in docs]
        assert utils.car(items) == pytest.approx(0.5) and utils.attempt_rate(items) == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_lm_eval(base_url: str, ours: harness_runs.Ours, tmp_path: Path) -> None:
    """``lm_eval`` with the task folder and the local chat-completions model gives our labels and CAR."""
    tasks = projects.REPO / "src" / "declinecraft" / "harness" / "lm_eval_tasks"
    # A read timeout well above lm-eval's 300 s: on a busy 2-core machine one 256-token answer took 624 s.
    args = (
        f"model={harness_runs.MODEL},base_url={base_url}/chat/completions,num_concurrent=1,max_retries=3,"
        "tokenizer_backend=none,timeout=1500"
    )
    subprocess.run(
        [
            str(harness_runs.BIN / "lm_eval"),
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
            json.dumps({"benchmark": str(harness_runs.RUN), "limit": harness_runs.N_QUESTIONS}),
            "--output_path",
            str(tmp_path),
            "--log_samples",
        ],
        check=True,
        cwd=projects.REPO,
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
    assert harness_runs.same(car, ours.car)
