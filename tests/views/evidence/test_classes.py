"""Tests for declinecraft.views.evidence.classes: response classes, L5 types, conflict awareness."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views import evidence
from declinecraft.views.evidence import classes


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
        ],
    )
    def test_l5_types(self, cls: str | None, response: str, want: str | None) -> None:
        """Each L5 response gets the first type that applies."""
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


class TestIsConflictAware:
    @pytest.mark.parametrize(
        "text",
        [
            "The passages conflict: one says 20 seconds, the other 30. I go with 20 seconds.",
            "Passage [2] contradicts passage [1]; the answer is 20 seconds.",
            "There is a discrepancy between the sources. It drops 3 ingots.",
            "The passages do not agree on the value, but passage [1] says 20 seconds.",
            "The values are not consistent. Answer: 20 seconds.",
            "There is no conflict in passage [1], but another passage says 30 seconds.",
            "It is 20 seconds, although the passages disagree.",
        ],
    )
    def test_disagreement(self, text: str) -> None:
        """A response that says its passages disagree is conflict-aware."""
        assert evidence.is_conflict_aware(text)

    @pytest.mark.parametrize(
        "text",
        [
            "There is no conflict between the passages. The golem presses a button every 20 seconds.",
            "The passages do not contradict each other; the answer is 20 seconds.",
            "No two passages differ on this: 20 seconds.",
            "The sources don't seem to be in any conflict. It drops 3 copper ingots.",
            "Sufficiency: sufficient, without contradiction. Answer: Coal.",
            "The passages agree: 20 seconds.",
            "",
        ],
    )
    def test_agreement_or_negation(self, text: str) -> None:
        """A negated cue ("no conflict", "do not contradict") or plain agreement is not conflict-aware."""
        assert not evidence.is_conflict_aware(text)

    def test_l5_type_uses_it(self) -> None:
        """A P3 answer saying the passages agree is evidence picking, not conflict-aware."""
        text = "There is no conflict between the passages. The answer is 20 seconds."
        assert classes.l5_type("ANSWER", text, "20 seconds", "30 seconds") == "pick_gold"
        assert classes.l5_type("ANSWER", "The passages conflict; 30 seconds.", "20 seconds", "30 seconds") == (
            "conflict_aware"
        )
