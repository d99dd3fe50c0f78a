"""Tests for declinecraft.harness.samples: the benchmark's questions and prompts for outside harnesses."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import prompts
from declinecraft.harness import samples


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
