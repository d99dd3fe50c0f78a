"""Tests for declinecraft.views.know2guess.collector: how the section's numbers print."""

from __future__ import annotations

from declinecraft.views.know2guess import collector


class TestPrinting:
    def test_direction_follows_printed_precision(self) -> None:
        """A shift that prints as 0.0 points reads "the same"; the sign decides otherwise."""
        assert [collector.direction(v) for v in (0.0004, -0.0004, 0.0006, -0.001)] == [
            "the same",
            "the same",
            "higher",
            "lower",
        ]
        assert collector.direction(float("nan")) == "not comparable"
        assert collector.fmt(-0.0123, "pts") == "\\textminus 1.2" and collector.fmt(1234, "int") == "1{,}234"
