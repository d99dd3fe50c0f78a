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


class TestCollectorDirection:
    def test_comparative_needs_a_significant_test(self) -> None:
        """ "higher" only with p < alpha; p >= alpha or no test gets no comparative word, and a
        shift below the small-n rule is not comparable at this n."""
        c = collector.Collector(min_n=6)
        shift = c.add("Shift", "a shift", lambda: 0.167, "pts", n=lambda: 36)
        assert c.direction("Shift", shift, p=0.01, alpha=0.05) == "higher"
        assert c.direction("Shift", shift, p=0.65, alpha=0.05) == collector.NOT_SIGNIFICANT
        assert c.direction("Shift", shift) == collector.NOT_TESTED
        small = c.add("Small", "a shift", lambda: 0.167, "pts", n=lambda: 4)
        assert c.direction("Small", small, p=0.01, alpha=0.05) == collector.NOT_AT_THIS_N
