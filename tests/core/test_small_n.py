"""Tests for declinecraft.core.small_n: one threshold decides whether a number is a finding."""

from __future__ import annotations

import pytest

from declinecraft.core import small_n


class TestMinN:
    @pytest.mark.parametrize(("alpha", "sign", "rank"), [(0.05, 6, 5), (0.01, 8, 6)])
    def test_minima(self, alpha: float, sign: int, rank: int) -> None:
        """The claims check's minima: 2 / 2**n and 2 / n! must fall below alpha."""
        assert (small_n.min_n_sign(alpha), small_n.min_n_rank(alpha)) == (sign, rank)


class TestThreshold:
    def test_default_is_claims_minimum(self) -> None:
        """analysis.min_n = 0 gives the claims check's sign-test minimum (6 at alpha 0.05)."""
        assert small_n.threshold(0, 0.05) == small_n.min_n_sign(0.05) == 6

    def test_test_floor(self) -> None:
        """With a test's own minimum, 0 keeps it, and a set min_n may raise it but not lower it."""
        assert small_n.threshold(0, 0.05, floor=5) == 5
        assert small_n.threshold(30, 0.05, floor=5) == 30
        assert small_n.threshold(2, 0.05, floor=5) == 5

    def test_set(self) -> None:
        """A set analysis.min_n replaces the default for plain numbers."""
        assert small_n.threshold(20, 0.05) == 20

    def test_negative(self) -> None:
        """A negative threshold is an error naming the setting."""
        with pytest.raises(ValueError, match=r"analysis\.min_n"):
            small_n.threshold(-1, 0.05)


class TestIsFinding:
    @pytest.mark.parametrize(
        ("n", "finding"), [(5, False), (6, True), (300, True), (0, False), (None, False), (float("nan"), False)]
    )
    def test_rule(self, n: float | None, finding: bool) -> None:
        """At or above the threshold a number is a finding; below it, or with n unknown, it is not."""
        assert small_n.is_finding(n, 6) is finding


class TestCounted:
    @pytest.mark.parametrize(
        ("n", "unit", "text"),
        [
            (1, "families", "1 family"),
            (2, "families", "2 families"),
            (1, "models", "1 model"),
            (0, "models", "0 models"),
            (1, "answers with a score", "1 answer with a score"),
        ],
    )
    def test_plural(self, n: int, unit: str, text: str) -> None:
        """One is singular, any other count plural."""
        assert small_n.counted(n, unit) == text

    @pytest.mark.parametrize(("word", "plural"), [("family", "families"), ("model", "models"), ("day", "days")])
    def test_plural_word(self, word: str, plural: str) -> None:
        """Nouns in -y take -ies after a consonant, others -s."""
        assert small_n.plural(word) == plural


class TestStated:
    def test_below(self) -> None:
        """Below the threshold the number carries its n and the caveat."""
        assert small_n.stated("0.25", 4, 6) == "0.25 (n = 4 questions, not interpretable at this n)"
        assert small_n.stated("75.0%", 1, 6) == "75.0% (n = 1 question, not interpretable at this n)"

    def test_above(self) -> None:
        """At or above the threshold the number is stated as it is."""
        assert small_n.stated("0.25", 6, 6) == "0.25"

    def test_unknown(self) -> None:
        """An unknown n is never a finding."""
        assert small_n.caveat(None) == "n unknown, not interpretable at this n"


class TestComparativeReason:
    @pytest.mark.parametrize(
        ("n", "p", "part"),
        [(4, 0.001, "n = 4 is below"), (None, 0.001, "n = unknown"), (20, None, "no test"), (20, 0.65, "p = 0.65")],
    )
    def test_refused(self, n: int | None, p: float | None, part: str) -> None:
        """Below the small-n rule, without a test, or with p >= alpha: no comparative word, and why."""
        assert part in small_n.comparative_reason(n, 6, p, 0.05)

    def test_allowed(self) -> None:
        """Enough items and p < alpha: a comparative word may be printed."""
        assert small_n.comparative_reason(20, 6, 0.01, 0.05) == ""

    def test_words(self) -> None:
        """Comparative words are found as whole words, in order, any case."""
        assert small_n.comparative_words("Its reliability is Higher, the most of all; lowered") == ["higher", "most"]
