"""Tests for declinecraft.explore.filters: every filter of the explorer on a hand-built run."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from declinecraft import explore


def keys(rows: pl.DataFrame, *cols: str) -> set[tuple[Any, ...]]:
    return set(rows.select(cols).iter_rows())


class TestTransitions:
    def test_sulfur_cube(self, frame: pl.DataFrame) -> None:
        """Abstained single-shot, answered iterative: exactly the planted Sulfur Cube response."""
        rows = explore.transitions(frame)
        assert keys(rows, "question_id", "model", "thinking") == {("q-sulfur", "m1", "off")}
        assert rows["response_to"][0].startswith("The Magma Cube")

    def test_codes_and_any(self, frame: pl.DataFrame) -> None:
        """Codes equal label names; '*' matches any label; '-' matches a missing label."""
        assert explore.transitions(frame, "no_rag", "single", from_label="X", to_label="A").height == 1
        assert explore.transitions(frame, from_label="*", to_label="-").height == 1  # q-copper m2 exhausted
        assert explore.transitions(frame, from_label=None, to_label=None).height == 4 * 3

    def test_bad_label(self, frame: pl.DataFrame) -> None:
        """An unknown label is an error naming it."""
        with pytest.raises(ValueError, match="unknown label 'MAYBE'"):
            explore.transitions(frame, from_label="MAYBE")


class TestThinkingChanges:
    def test_abstain_to_deny(self, frame: pl.DataFrame) -> None:
        """Thinking turns m1's no-RAG abstention on q-copper into a premise denial, and nothing else."""
        rows = explore.thinking_changes(frame)
        assert keys(rows, "question_id", "model", "setting") == {("q-copper", "m1", "no_rag")}

    def test_other_setting(self, frame: pl.DataFrame) -> None:
        """In single-shot RAG, no label changes with thinking."""
        assert (
            explore.thinking_changes(frame, "single", from_label=None, to_label=None)
            .filter(pl.col("label_from") != pl.col("label_to"))
            .height
            == 0
        )


class TestAllFailed:
    def test_spider(self, frame: pl.DataFrame) -> None:
        """Only q-spider is failed by every response, in every setting."""
        rows = explore.all_failed(frame)
        assert set(rows["question_id"]) == {"q-spider"}
        assert set(rows["setting"]) == {"no_rag", "single", "iterative", "single/bm25/k5"}
        assert rows.filter(pl.col("setting") == "single")["n_responses"].item() == 3

    def test_strict_counts_denial(self, frame: pl.DataFrame) -> None:
        """Strict scoring fails DENY too; still no unanswerable question is failed by everyone."""
        assert set(explore.all_failed(frame, strict=True)["question_id"]) == {"q-spider"}


class TestJudgeRuleDisagreements:
    def test_planted(self, frame: pl.DataFrame) -> None:
        """The one response whose rule label differs from the LLM label is found."""
        rows = explore.judge_rule_disagreements(frame)
        assert keys(rows, "question_id", "model", "thinking", "setting", "label", "rule_label") == {
            ("q-panda", "m2", "off", "single", "ANSWER", "ABSTAIN")
        }

    def test_rules_of_record(self, frame: pl.DataFrame) -> None:
        """Where the rules' label is of record (judge.labels_by_rule), the judge's own label is what
        differs: the same response is found by its judge_label."""
        planted = (pl.col("label") != pl.col("rule_label")).fill_null(False)
        ruled = frame.with_columns(judge_label=pl.col("label"), label=pl.col("rule_label").fill_null(pl.col("label")))
        rows = explore.judge_rule_disagreements(ruled)
        assert keys(rows, "question_id", "model", "setting", "label", "judge_label") == {
            ("q-panda", "m2", "single", "ABSTAIN", "ANSWER")
        }
        assert frame.filter(planted).height == 1


class TestJudgeDisagreements:
    def test_spread(self, frame: pl.DataFrame) -> None:
        """Judges 1.0 vs 0.0 give a spread of 1; a higher threshold finds nothing."""
        rows = explore.judge_disagreements(frame)
        assert keys(rows, "question_id", "model", "setting", "spread") == {("q-panda", "m1", "iterative", 1.0)}
        assert explore.judge_disagreements(frame, min_spread=1.5).height == 0

    def test_one_judge(self, frame: pl.DataFrame) -> None:
        """With one judge nothing can disagree."""
        assert explore.judge_disagreements(frame.drop("score_j2")).height == 0


class TestBudgetExhausted:
    def test_planted(self, frame: pl.DataFrame) -> None:
        """The one exhausted response is found with its finish reason."""
        rows = explore.budget_exhausted(frame)
        assert keys(rows, "question_id", "model", "setting", "finish_reason") == {
            ("q-copper", "m2", "iterative", "length")
        }


class TestSearch:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("copper", {"q-copper"}),
            ("MAGMA cube", {"q-sulfur"}),
            ("armadillos", {"q-spider"}),
            ("nothing-like-this", set()),
        ],
    )
    def test_matches(self, frame: pl.DataFrame, text: str, expected: set[str]) -> None:
        """Case-insensitive search over question fields and responses."""
        assert set(explore.search(frame, text)["question_id"]) == expected


class TestCounts:
    def test_flag_counts(self, frame: pl.DataFrame) -> None:
        """One row with each flag's number of rows."""
        counts = explore.flag_counts(frame)
        assert counts.height == 1 and counts.row(0, named=True) == {
            "all_failed": 4,
            "judge_rule": 1,
            "judges": 1,
            "exhausted": 1,
        }

    def test_label_counts(self, frame: pl.DataFrame) -> None:
        """Responses per setting, answerability and label add up to the frame."""
        counts = explore.label_counts(frame)
        assert counts["len"].sum() == frame.height
        no_rag = counts.filter(pl.col("setting") == "no_rag", pl.col("answerable").not_(), pl.col("label") == "ANSWER")
        assert no_rag["len"].item() == 1  # q-sulfur m1 off


class TestScoreColumns:
    def test_names(self, frame: pl.DataFrame) -> None:
        """The per-judge columns, in order."""
        assert explore.score_columns(frame) == ["score_j1", "score_j2"]


class TestSettingOrder:
    def test_order(self) -> None:
        """Main conditions first, then ablations alphabetically."""
        assert explore.setting_order(["single/bm25/k5", "iterative", "single", "no_rag", "single/a/k1"]) == [
            "no_rag",
            "single",
            "iterative",
            "single/a/k1",
            "single/bm25/k5",
        ]
