"""Tests for declinecraft.views.know2guess.plots: what each figure draws, read back from its artists
and checked against values computed by hand from Know2Guess's definitions (seed 003, §4.4, §6.7)."""

from __future__ import annotations

import polars as pl
import pytest
from matplotlib.figure import Figure

from declinecraft.paper import figure_check
from declinecraft.views import know2guess
from declinecraft.views.know2guess import plots, reliability
from tests.support import view_size

KEY = {"model": "m", "thinking": "off", "condition": "no_rag"}


def bar_spans(fig: Figure, ax_index: int = 0) -> list[tuple[float, float]]:
    """(left, width) of every horizontal bar of an axes, in drawing order."""
    return [(p.get_x(), p.get_width()) for p in fig.axes[ax_index].patches]


class TestReliabilityVsLambda:
    def test_draws_the_table(self) -> None:
        """The R_lambda figure plots the table's values. Know2Guess §4.4: R = (correct + lam * abstained)
        / (n_ans + lam * n_unans); by hand, 3 answerable (2 correct) and 1 unanswerable (abstained):
        R_0.5 = 2.5 / 3.5, R_1.5 = 3.5 / 4.5, and reliability_from_counts agrees."""
        lams = [0.5, 1.5]
        rows = [
            {
                **KEY,
                "prompt": "standard",
                "parser": "strict",
                "lam": lam,
                "reliability": know2guess.reliability_from_counts(2, 3, 1, 1, lam),
            }
            for lam in lams
        ]
        fig = plots.plot_reliability_vs_lambda(pl.DataFrame(rows))
        line = fig.axes[0].get_lines()[0]
        assert list(line.get_xdata()) == lams and list(line.get_ydata()) == pytest.approx([2.5 / 3.5, 3.5 / 4.5])

    def test_headline_only(self) -> None:
        """Only the standard prompt read by the strict parser is drawn: a compact-prompt row and a
        normalized-parser row of the same configuration add no line."""
        rows = [
            {**KEY, "prompt": prompt, "parser": parser, "lam": 1.0, "reliability": value}
            for prompt, parser, value in (
                ("standard", "strict", 0.4),
                ("compact", "strict", 0.9),
                ("standard", "normalized", 0.8),
            )
        ]
        fig = plots.plot_reliability_vs_lambda(pl.DataFrame(rows))
        assert [list(line.get_ydata()) for line in fig.axes[0].get_lines()] == [[0.4]]


class TestReliabilityDiagram:
    def test_bins(self) -> None:
        """One point per non-empty bin at (mean confidence, accuracy). By hand: answered items at
        0.95 (right), 0.95 (wrong) and 0.15 (wrong) fill bins (0.1, 0.2] and (0.9, 1.0]: points
        (0.15, 0) and (0.95, 0.5); the diagonal is drawn first."""
        table = reliability.calibration_bins([0.95, 0.95, 0.15], [1, 0, 0]).with_columns(
            prompt=pl.lit("standard"), parser=pl.lit("strict"), **{k: pl.lit(v) for k, v in KEY.items()}
        )
        fig = plots.plot_reliability_diagram(table)
        diagonal, line = fig.axes[0].get_lines()
        assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
        assert list(line.get_xdata()) == pytest.approx([0.15, 0.95]) and list(line.get_ydata()) == [0.0, 0.5]

    def test_one_confidence(self) -> None:
        """Every answered reply states 0.5: the panel says so in words, with the count and the share
        correct (1 of 4 answered), in place of a curve of one point."""
        table = reliability.calibration_bins([0.5, 0.5, 0.5, 0.5], [1, 0, 0, 0]).with_columns(
            prompt=pl.lit("standard"), parser=pl.lit("strict"), **{k: pl.lit(v) for k, v in KEY.items()}
        )
        ax = plots.plot_reliability_diagram(table).axes[0]
        assert not ax.axison and not ax.get_lines()
        assert [t.get_text() for t in ax.texts] == [
            "No retrieval: one stated confidence in this run,\n0.50, on all 4 answered replies (25% correct),\n"
            "so no calibration curve is drawn"
        ]


class TestOutcomeProfile:
    def test_shares(self) -> None:
        """Each segment is its count over n, stacked left to right in SEGMENTS order, refusals and
        parse errors their own. By hand (model m of tests/support/k2g_run.py, 7 scored items):
        correct 1, wrong 1, unnecessary 1, productive 1, missed 1, refusal 1, parse error 1 ->
        widths 1/7 each, starting at 0, 1/7, ..., 6/7."""
        row = {
            **KEY,
            "prompt": "standard",
            "parser": "strict",
            "correct": 1.0,
            "wrong": 1.0,
            "unnecessary_abstention": 1,
            "productive_abstention": 1,
            "missed_abstention": 1,
            "refusal": 1,
            "parse_error": 1,
            "n": 7,
        }
        fig = plots.plot_outcome_profile(pl.DataFrame([row]))
        lefts, widths = zip(*bar_spans(fig), strict=True)
        assert widths == pytest.approx((1 / 7,) * 7)
        assert lefts == pytest.approx(tuple(i / 7 for i in range(7)))
        assert [t.get_text() for t in fig.legends[0].get_texts()] == [name for _, name, _ in plots.SEGMENTS]


class TestParserScatter:
    def test_points(self) -> None:
        """One point per prompt at (strict, normalized) reliability; other metrics are not drawn.
        By hand (k2g_run's model m, standard prompt): strict 2/7, normalized 3/7."""
        rows = [
            {**KEY, "prompt": "standard", "metric": "reliability", "base_value": 2 / 7, "value": 3 / 7},
            {**KEY, "prompt": "standard", "metric": "coverage", "base_value": 0.1, "value": 0.2},
        ]
        fig = plots.plot_parser_scatter(pl.DataFrame(rows))
        (points,) = fig.axes[0].collections
        (point,) = points.get_offsets().tolist()
        assert point == pytest.approx([2 / 7, 3 / 7])


class TestEmpty:
    @pytest.mark.parametrize("stem", sorted(plots.FIGURES))
    def test_says_so(self, stem: str) -> None:
        """An empty table gives one axis that says there is nothing to show, and draws no data."""
        fig = plots.FIGURES[stem][0](pl.DataFrame())
        (ax,) = fig.axes
        assert [t.get_text() for t in ax.texts] == ["no Know2Guess results in this run"]
        assert not ax.lines and not ax.patches and not ax.collections


#: Each figure's table in :func:`view_size.k2g_tables`.
TABLES = {
    "k2g_reliability_lambda": "cost_sensitive",
    "k2g_reliability_diagram": "calibration",
    "k2g_outcome_profile": "outcomes",
    "k2g_parser_scatter": "parser_sensitivity",
}


class TestPaperSize:
    @pytest.mark.parametrize("stem", sorted(plots.FIGURES))
    def test_27_models_pass_the_figure_check(self, stem: str) -> None:
        """At the paper's 27 configurations, each figure prints at the full width (as
        ``paper/main.tex`` places it) with no overlapping text, no text under 6 pt and no point on
        a frame: one legend below the panels, the outcome profile's rows named once."""
        fig = plots.FIGURES[stem][0](view_size.k2g_tables()[TABLES[stem]])
        assert figure_check.problems(fig, box=figure_check.FULL_BOX_IN) == []
