"""Tests for declinecraft.views.evidence.classes: response classes, L5 types, conflict awareness."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views import evidence
from declinecraft.views.evidence import classes
from tests.support import negation_sentences


class TestClasses:
    @pytest.mark.parametrize(
        ("label", "source", "exhausted", "want"),
        [
            ("ABSTAIN", "llm", False, "ABSTAIN"),
            ("DENY", "llm", False, "ANSWER"),
            ("ANSWER", "empty", False, "INVALID"),
            (None, "budget_exhausted", True, "INVALID"),
            (None, "error", False, None),
            (None, "llm", False, None),
        ],
    )
    def test_judge_class(self, label: str | None, source: str, exhausted: bool, want: str | None) -> None:
        """DENY is an answer, an empty or exhausted reply Invalid, a failed or unparsable one unclassified."""
        assert classes.judge_class(label, source, exhausted) == want

    @pytest.mark.parametrize(
        ("cls", "response", "want"),
        [
            ("ABSTAIN", "20 seconds", "abstain"),
            ("INVALID", "", "invalid"),
            (None, "", None),
            ("ANSWER", "Every 20 seconds.", "pick_gold"),
            ("ANSWER", "Every 35 seconds.", "pick_conflict"),
            ("ANSWER", "Either 20 or 35 seconds.", "both_values"),
            ("ANSWER", "Rarely.", "other"),
            ("ANSWER", "The passages contradict each other; I go with 35 seconds.", "conflict_aware"),
            ("ANSWER", "It does not take 20 seconds; it takes 35 seconds.", "pick_conflict"),
            ("ANSWER", "Every 20 seconds rather than 35 seconds.", "pick_gold"),
            ("ANSWER", "Neither 20 nor 35 seconds.", "other"),
        ],
    )
    def test_l5_types(self, cls: str | None, response: str, want: str | None) -> None:
        """Each L5 response gets the first type that applies; a negated value is not adopted."""
        assert evidence.l5_type(cls, response, "20", "35") == want

    def test_agreement(self) -> None:
        """Agreement 3/4 and Cohen's kappa (0.75 - 0.3125) / (1 - 0.3125) over ANSWER/ABSTAIN/INVALID."""
        frame = pl.DataFrame(
            {
                "esb_judge": ["ANSWER", "ABSTAIN", "ANSWER", "INVALID", None],
                "esb_rule": ["ANSWER", "ABSTAIN", "ABSTAIN", "INVALID", "ANSWER"],
                "level": ["L1", "L3", "L3", "L4", "L4"],
                "prompt": ["P1"] * 5,
                "model": ["m"] * 5,
            }
        )
        row = classes.agreement(frame).row(0, named=True)
        assert (row["scope"], row["n"], row["agreement"]) == ("all", 4, 0.75)
        assert row["kappa"] == pytest.approx(0.4375 / 0.6875)


def _cases(table: tuple[tuple[str, bool], ...]) -> list[object]:
    """The table as parameters; a known miss is expected to fail (strictly, so a fix shows)."""
    return [
        pytest.param(text, want, marks=pytest.mark.xfail(strict=True, reason="known miss"))
        if text in negation_sentences.KNOWN_MISSES
        else (text, want)
        for text, want in table
    ]


class TestIsConflictAware:
    @pytest.mark.parametrize(
        ("text", "want"), _cases(negation_sentences.CONFLICT_TABLE + negation_sentences.HELD_OUT_CONFLICT)
    )
    def test_sentence_table(self, text: str, want: bool) -> None:
        """Agreement, negated, hedged and stated conflicts are read by negation scope, not a window."""
        assert evidence.is_conflict_aware(text) is want

    def test_table_size(self) -> None:
        """The table holds at least 40 hand-written sentences, both labels well represented."""
        labels = [want for _, want in negation_sentences.CONFLICT_TABLE]
        assert len(labels) >= 40 and min(labels.count(True), labels.count(False)) >= 15

    def test_l5_type_uses_it(self) -> None:
        """A P3 answer saying the passages agree is evidence picking, not conflict-aware."""
        text = "There is no conflict between the passages. The answer is 20 seconds."
        assert classes.l5_type("ANSWER", text, "20 seconds", "30 seconds") == "pick_gold"
        assert classes.l5_type("ANSWER", "The passages conflict; 30 seconds.", "20 seconds", "30 seconds") == (
            "conflict_aware"
        )
