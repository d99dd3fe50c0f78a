"""Tests for declinecraft.core.number_format: the paper's one number formatter and its tie rule."""

from __future__ import annotations

import math

import pytest

from declinecraft.core import number_format
from declinecraft.core.number_format import compare, fmt, printed, same


class TestFmt:
    @pytest.mark.parametrize(
        ("value", "kind", "text"),
        [
            (0.5642, "pct", "56.4"),
            (-0.1, "pts", "\\textminus 10.0"),
            (0.032, "pts", "+3.2"),
            (0.6, "rho", "+0.60"),
            (-0.41, "rho", "\\textminus 0.41"),
            (0.0004, "p", "<0.001"),
            (0.004, "p", "0.004"),
            (0.04, "p", "0.04"),
            (3404, "int", "3{,}404"),
            (0.618, "kappa", "0.62"),
            (-0.12, "num", "\\textminus 0.12"),
            ("qwen3-8b", "text", "qwen3-8b"),
        ],
    )
    def test_kinds(self, value: float | str, kind: str, text: str) -> None:
        """Each kind prints as the paper prints it, a minus as \\textminus."""
        assert fmt(value, kind) == text

    @pytest.mark.parametrize("value", [None, math.nan])
    def test_missing(self, value: float | None) -> None:
        """None and NaN print n/a, whatever the kind."""
        assert fmt(value, "pct") == fmt(value, "text") == "n/a"

    def test_unknown_kind(self) -> None:
        """An unknown kind is an error naming it."""
        with pytest.raises(ValueError, match="'percent'"):
            fmt(0.5, "percent")

    def test_thousands(self) -> None:
        """Counts group thousands with {,}."""
        assert number_format.thousands(1234567) == "1{,}234{,}567"


class TestSame:
    def test_print_alike(self) -> None:
        """Two rates that print alike are the same; a printed tenth of a point apart is not."""
        assert same(0.5641, 0.5644, "pct") and not same(0.5641, 0.5651, "pct")

    def test_signed_zero(self) -> None:
        """+0.0 and \\textminus 0.0 points are the same number."""
        assert fmt(0.0001, "pts") != fmt(-0.0001, "pts") and same(0.0001, -0.0001, "pts")

    def test_missing_never_same(self) -> None:
        """An n/a number is the same as nothing."""
        assert not same(None, None, "pct") and printed(None, "pct") is None

    def test_p_is_not_compared(self) -> None:
        """p values print in steps, not at one precision: they are not compared by printing."""
        with pytest.raises(ValueError, match="'p'"):
            printed(0.01, "p")


class TestCompare:
    WORDS = ("higher than", "lower than", "the same as")

    @pytest.mark.parametrize(
        ("a", "b", "word"),
        [(0.30, 0.20, "higher than"), (0.20, 0.30, "lower than"), (0.2004, 0.2001, "the same as")],
    )
    def test_words(self, a: float, b: float, word: str) -> None:
        """Above, below, or printing alike."""
        assert compare(a, b, "pct", self.WORDS) == word

    def test_below_half_a_point_differs(self) -> None:
        """A difference that prints (0.3 points) has a direction: the one rule is printing alike."""
        assert compare(0.203, 0.200, "pct", self.WORDS) == "higher than"

    def test_missing(self) -> None:
        """Either side n/a gives the missing word."""
        assert compare(math.nan, 0.2, "pct", self.WORDS, "not comparable") == "not comparable"


class TestThousands:
    def test_groups(self) -> None:
        """Counts get braced commas between groups of three digits."""
        assert (number_format.thousands(3404), number_format.thousands(999), number_format.thousands(1234567)) == (
            "3{,}404",
            "999",
            "1{,}234{,}567",
        )
