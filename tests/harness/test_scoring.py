"""Tests for declinecraft.harness.scoring: outcomes and rates as the harnesses score them."""

from __future__ import annotations

import pytest

from declinecraft.harness import scoring


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
