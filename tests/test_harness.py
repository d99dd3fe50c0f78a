"""The benchmark in outside harnesses: questions, prompts, labels and rates (declinecraft.harness)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from declinecraft.core import prompts
from declinecraft.harness import samples, scoring
from declinecraft.harness.lm_eval_tasks import utils

TASKS = Path(samples.__file__).parent / "lm_eval_tasks"


def benchmark_frame() -> pl.DataFrame:
    """Three questions, ids out of order: one answerable, two not."""
    return pl.DataFrame(
        {
            "id": ["u1", "a1", "u2"],
            "answerable": [False, True, False],
            "scenario": ["You mine.", "You craft.", "You swim."],
            "asked_question": ["What is X?", "What is Y?", "What is Z?"],
            "question": ["You mine. What is X?", "You craft. What is Y?", "You swim. What is Z?"],
        }
    )


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    """A run folder holding only ``04_verify/benchmark.parquet``."""
    (tmp_path / "04_verify").mkdir()
    benchmark_frame().write_parquet(tmp_path / "04_verify" / "benchmark.parquet")
    return tmp_path


class TestReadQuestions:
    def test_run_folder(self, run_dir: Path) -> None:
        """A run folder gives its questions by id, the query being scenario and question."""
        got = samples.read_questions(run_dir)
        assert [q.id for q in got] == ["a1", "u1", "u2"]
        assert got[0] == samples.Question("a1", True, "You craft. What is Y?")

    def test_minimal_release(self, tmp_path: Path) -> None:
        """A minimal release's question is joined to its scenario, as the import does."""
        path = tmp_path / "bench.jsonl"
        path.write_text(
            json.dumps(
                {
                    "id": "q",
                    "answerable": False,
                    "scenario": "You fly.",
                    "question": "Why?",
                    "fact": "f",
                    "target_page": "Elytra",
                }
            )
            + "\n"
        )
        assert samples.read_questions(path) == [samples.Question("q", False, "You fly. Why?")]

    @pytest.mark.parametrize(("ids", "limit", "want"), [(("u2", "a1"), 0, ["a1", "u2"]), ((), 2, ["a1", "u1"])])
    def test_selection(self, run_dir: Path, ids: tuple[str, ...], limit: int, want: list[str]) -> None:
        """``ids`` keeps those questions, ``limit`` the first ones by id."""
        assert [q.id for q in samples.read_questions(run_dir, ids=ids, limit=limit)] == want

    def test_unknown_id(self, run_dir: Path) -> None:
        """An id the benchmark lacks is named."""
        with pytest.raises(ValueError, match="no question 'zz'"):
            samples.read_questions(run_dir, ids=["zz"])

    def test_missing(self, tmp_path: Path) -> None:
        """A folder without a benchmark says what it needs."""
        with pytest.raises(FileNotFoundError, match="04_verify/benchmark.parquet"):
            samples.read_questions(tmp_path)


class TestPrompt:
    def test_no_rag(self) -> None:
        """Without retrieval, the message is the answer stage's J.2 template with the question."""
        want = prompts.load("answer_no_context").render(question="Q?")
        assert samples.prompt("Q?", "no_rag") == want

    def test_single(self) -> None:
        """Single-shot RAG fills the context template."""
        text = samples.prompt("Q?", "single", "[1] Page (url)\nbody")
        assert text == prompts.load("answer_with_context").render(context="[1] Page (url)\nbody", question="Q?")

    @pytest.mark.parametrize(
        ("condition", "context", "message"),
        [("iterative", None, "condition must be"), ("single", None, "needs a context")],
    )
    def test_refuses(self, condition: str, context: str | None, message: str) -> None:
        """Iterative RAG is not offered; single-shot RAG needs a context."""
        with pytest.raises(ValueError, match=message):
            samples.prompt("Q?", condition, context)


class TestOutcome:
    def test_labels(self) -> None:
        """Refusals abstain, plain answers answer; thinking is removed first."""
        assert scoring.outcome("<think>I do not know</think>Use a saddle.", "stop", answerable=True).label == "ANSWER"
        assert scoring.outcome("I do not know the answer.", "stop", answerable=False).label == "ABSTAIN"

    def test_exhausted(self) -> None:
        """A cut-off response with no final answer has no label and counts as exhausted."""
        o = scoring.outcome("<think>still thinking", "length", answerable=False)
        assert o.label is None and o.budget_exhausted


class TestRates:
    def test_counts(self) -> None:
        """CAR counts ABSTAIN on unanswerable questions; exhausted and unlabelled responses are left out."""
        out = [
            scoring.Outcome(False, "ABSTAIN", False, ""),
            scoring.Outcome(False, "DENY", False, ""),
            scoring.Outcome(False, None, True, ""),
            scoring.Outcome(False, None, False, ""),
            scoring.Outcome(True, "DENY", False, ""),
            scoring.Outcome(True, "ABSTAIN", False, ""),
        ]
        got = scoring.rates(out)
        assert (got["car"].k, got["car"].n) == (1, 2)
        assert got["attempt_rate"].rate == pytest.approx(0.5)


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
