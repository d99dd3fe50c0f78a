"""Tests for declinecraft.views.know2guess.macros: the view's paper macros and confidence note."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.views.know2guess import macros


class TestMacros:
    def test_no_tables(self, tmp_path: Path) -> None:
        """A folder without the stage's tables gives n/a for every run number, with the reason; the
        confidence sentence, which the prose appends, is left out."""
        got = macros.macros(tmp_path)
        run = [(n, v, w) for n, v, w in got if not n.startswith("KgPaper") and n != "KgConfidenceNote"]
        assert run and all(v == "n/a" and "n/a:" in w for _, v, w in run)
        assert dict((n, v) for n, v, _ in got)["KgConfidenceNote"] == ""


class TestConfidenceNote:
    def _decisions(self, confidences: list[float | None]) -> pl.DataFrame:
        return pl.DataFrame(
            {"prompt": "standard", "parser": "strict", "state": "ANSWER", "confidence": confidences},
            schema_overrides={"confidence": pl.Float64},
        )

    def test_one_value_says_little(self) -> None:
        """9 of 10 answered replies at 0.5: counted, and ECE is said to measure little."""
        note = macros.confidence_note(self._decisions([0.5] * 9 + [0.9]))
        assert note.startswith(
            " The 10 answered replies state confidences of 2 distinct values; 9 of them (90%) state a confidence of 50"
        )
        assert "not calibration" in note

    def test_varied(self) -> None:
        """Confidences spread over values get the counts only; no answered reply gives ''."""
        note = macros.confidence_note(self._decisions([0.5, 0.6, 0.7, 0.8, 0.9]))
        assert "1 of them (20%)" in note and "not calibration" not in note
        assert macros.confidence_note(self._decisions([None])) == "" and macros.confidence_note(pl.DataFrame()) == ""
        assert macros.confidence_note(self._decisions([0.8])).startswith(
            " The 1 answered reply states confidences of 1 distinct value;"
        )
