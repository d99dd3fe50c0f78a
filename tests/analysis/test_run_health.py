"""Tests for declinecraft.analysis.run_health: the run-health counts on hand-built outputs (tests/support/health.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import run_health
from declinecraft.core import config
from tests.support import health


class TestAnswerCalls:
    def test_counts_answers_and_reflections(self) -> None:
        """m-b: 6 answers + 2 reflections = 8 calls, 2 failed; m-a: 8 calls, none failed."""
        found = run_health.answer_calls(health.responses())
        assert health.row(found, "failed_calls", "m-b") == (2, 8)
        assert health.row(found, "failed_calls", "m-a") == (0, 8)


class TestTruncation:
    def test_per_model_and_condition(self) -> None:
        """m-a's no-RAG replies: 1 of 2 cut; m-b's single-shot: the failed call is not a reply (0 of 1)."""
        found = run_health.truncation(health.responses())
        assert health.row(found, "truncated", "m-a", condition="no_rag") == (1, 2)
        assert health.row(found, "truncated", "m-b", condition="single") == (0, 1)
        assert found["rate"].to_list().count(0.5) == 1


class TestRounds:
    def test_distribution(self) -> None:
        """m-b used one further round on 1 of 2 iterative answers; m-a none on 2 of 2."""
        found = run_health.rounds_used(health.responses())
        assert health.row(found, "further_rounds", "m-b", detail="1") == (1, 2)
        assert health.row(found, "further_rounds", "m-b", detail="0") == (1, 2)
        assert health.row(found, "further_rounds", "m-a", detail="0") == (2, 2)

    def test_unusable_reflections(self) -> None:
        """A failed reflection is unusable (m-b: 1 of 2); no_follow_ups and insufficient are not."""
        found = run_health.reflection_health(health.responses())
        assert health.row(found, "reflection_unusable", "m-b") == (1, 2)
        assert health.row(found, "reflection_unusable", "m-a") == (0, 2)


class TestJudges:
    def test_parse_failures(self) -> None:
        """j-small: 1 of 2 scores re-asked and still unparsable; rule-scored rows are no calls."""
        found = run_health.parse_health(health.scores(), "score")
        assert health.row(found, "score_unparsable", "j-small") == (1, 2)
        assert health.row(found, "score_reasked", "j-small") == (1, 2)
        assert health.row(found, "score_unparsable", "j-big") == (0, 2)

    def test_calls_count_reasks(self) -> None:
        """j-big: 11 label calls + 1 re-ask + 2 score calls = 14; j-small: 2 + 1 re-ask = 3."""
        found = run_health.judge_calls([(health.labels(), "judge"), (health.scores(), "judge")], "06_judge")
        assert health.row(found, "failed_calls", "j-big") == (0, 14)
        assert health.row(found, "failed_calls", "j-small") == (0, 3)


class TestMergeCalls:
    def test_one_row_per_stage_and_model(self) -> None:
        """A model that answers and judges in one stage gets one failed_calls row with both counts."""
        both = pl.concat(
            [
                run_health.answer_calls(health.responses(), "09_evidence"),
                run_health.judge_calls([(health.labels().with_columns(judge=pl.lit("m-b")), "judge")], "09_evidence"),
            ]
        )
        merged = run_health.merge_calls(both)
        assert health.row(merged, "failed_calls", "m-b") == (2, 8 + 12)


@pytest.fixture()
def cfg(tmp_path: Path) -> config.RunConfig:
    """A run with hand-built answer and judge outputs and no views run."""
    return health.write_run(tmp_path)


class TestVerifier:
    def test_no_per_half_for_the_benchmark_generator(self, cfg) -> None:  # noqa: ANN001
        """NO rejects an answerable draft and keeps an unanswerable one; unparsable answers and
        another generator's drafts are not counted."""
        found = run_health.verifier_health(cfg)
        assert health.row(found, "verifier_no_answerable", "v") == (7, 9)
        assert health.row(found, "verifier_no_unanswerable", "v") == (4, 5)
        assert set(found["stage"]) == {"04_verify"}

    def test_missing_audit_is_a_note(self, cfg) -> None:  # noqa: ANN001
        """Without the audit one row names it; an imported benchmark's row says it was verified elsewhere."""
        audit = cfg.stage_dir("verify") / "audit_verifier.csv"
        audit.unlink()
        (note,) = run_health.verifier_health(cfg).to_dicts()
        assert note["measure"] == "missing" and "audit_verifier.csv is missing" in note["detail"]
        (cfg.stage_dir("verify") / "import.json").write_text("{}")
        (note,) = run_health.verifier_health(cfg).to_dicts()
        assert "imported" in note["detail"]


class TestCollect:
    def test_missing_input_is_a_note(self, cfg) -> None:  # noqa: ANN001
        """Without references.parquet the rest is counted and one row says what is missing."""
        found = run_health.collect(cfg, health.main_grid())
        notes = found.filter(pl.col("measure") == "missing")
        assert notes.height == 1 and "references.parquet is missing" in notes["detail"][0]
        assert health.row(found, "failed_calls", "m-b", stage="05_answer") == (2, 8)
        assert health.row(found, "accuracy_questions", "m-b") == (0, 1)
