"""Tests for declinecraft.evaluation.judge_stage: the stage's helpers (the whole stage: test_judge.TestRunStage)."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.core import artifacts
from declinecraft.evaluation import judge_stage


class TestReferenceQuestions:
    def test_answerable_and_leakage(self) -> None:
        """Answerable questions, and unanswerable ones answered without retrieval with the scenario."""
        bench = pl.DataFrame({"id": ["a0", "u0", "u1"], "answerable": [True, False, False]})
        responses = pl.DataFrame(
            {
                "question_id": ["a0", "u0", "u1"],
                "answerable": [True, False, False],
                "condition": ["single", "no_rag", "single"],
                "scenario": [True, True, True],
                "prompt_variant": ["default"] * 3,
            }
        )
        assert judge_stage.reference_questions(bench, responses)["id"].to_list() == ["a0", "u0"]


class TestReadPages:
    def test_missing(self, project) -> None:  # noqa: ANN001
        """Missing corpus pages are an error naming the file."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="pages_pre.parquet"):
            artifacts.read_pages(cfg)


class TestReadResponses:
    def test_missing(self, project) -> None:  # noqa: ANN001
        """Missing responses are an error naming the file and the stage to run."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="responses.parquet: run 05_answer"):
            artifacts.read_responses(cfg)
