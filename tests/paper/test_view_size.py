"""Tests for declinecraft.paper.view_size: a view too small to test anything says so once."""

from __future__ import annotations

from pathlib import Path

from declinecraft.core import catalogue
from declinecraft.paper import view_size
from declinecraft.paper.latex import escape


def _values(answerable: str, unanswerable: str) -> list[tuple[str, str, str]]:
    return [
        ("KgAnswerable", answerable, ""),
        ("KgUnanswerable", unanswerable, ""),
        ("EsbAnswerable", "1{,}000", ""),
        ("EsbUnanswerable", "n/a", ""),
    ]


class TestMacros:
    def test_too_small(self) -> None:
        """2 answerable and 4 unanswerable questions under a rule of 6: not testable, and one sentence
        with the counts, the rule and the view's folder and first table."""
        out = dict((name, value) for name, value, _ in view_size.macros(_values("2", "4"), 6, Path("outputs/default")))
        assert out["KgTestable"] == "0"
        folder = escape(f"outputs/default/{catalogue.K2G_SUMMARY.relative().rpartition('/')[0]}/")
        assert out["KgSizeSentence"] == (
            "At this size the view can test nothing: its 6 questions (2 answerable, 4 unanswerable) "
            "are fewer than the 6 of each kind that the small-$n$ rule asks for, so none of its numbers is read "
            f"here; every one is in the view's tables (\\texttt{{{folder}}}, "
            "\\texttt{know2guess\\_summary.csv} first) and Figures~K1--K4."
        )

    def test_large_enough_or_absent(self) -> None:
        """Enough questions of each kind, or counts the run lacks (n/a): testable, no sentence."""
        out = dict((name, value) for name, value, _ in view_size.macros(_values("6", "9"), 6, Path("outputs/x")))
        assert (out["KgTestable"], out["KgSizeSentence"]) == ("1", "")
        assert (out["EsbTestable"], out["EsbSizeSentence"]) == ("1", "")
