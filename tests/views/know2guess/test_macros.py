"""Tests for declinecraft.views.know2guess.macros: the view's paper macros and confidence note."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from matplotlib.figure import Figure

from declinecraft.views import know2guess
from declinecraft.views.know2guess import macros, plots


class TestMacros:
    def test_no_tables(self, tmp_path: Path) -> None:
        """A folder without the stage's tables gives n/a for every run number, with the reason; the
        confidence sentence, which the prose appends, is left out."""
        got = macros.macros(tmp_path)
        run = [(n, v, w) for n, v, w in got if not n.startswith("KgPaper") and n != "KgConfidenceNote"]
        assert run and all(v == "n/a" and "n/a:" in w for _, v, w in run)
        assert dict((n, v) for n, v, _ in got)["KgConfidenceNote"] == ""

    def test_lambda_plot_draws_the_table(self) -> None:
        """The R_lambda figure plots the table's values. Know2Guess §4.4: R = (correct + lam * abstained)
        / (n_ans + lam * n_unans); by hand, 3 answerable (2 correct) and 1 unanswerable (abstained):
        R_0.5 = 2.5 / 3.5, R_1.5 = 3.5 / 4.5, and reliability_from_counts agrees."""
        lams = [0.5, 1.5]
        rows = [
            {
                "model": "m",
                "thinking": "off",
                "prompt": "standard",
                "parser": "strict",
                "condition": "no_rag",
                "lam": lam,
                "reliability": know2guess.reliability_from_counts(2, 3, 1, 1, lam),
            }
            for lam in lams
        ]
        fig = plots.plot_reliability_vs_lambda(pl.DataFrame(rows))
        line = fig.axes[0].get_lines()[0]
        assert list(line.get_xdata()) == lams and list(line.get_ydata()) == pytest.approx([2.5 / 3.5, 3.5 / 4.5])

    @pytest.mark.parametrize("draw", [spec[0] for spec in plots.FIGURES.values()])
    def test_empty_figure(self, draw) -> None:  # noqa: ANN001
        """An empty table still gives a figure (saying there is nothing to show)."""
        assert isinstance(draw(pl.DataFrame()), Figure)


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
