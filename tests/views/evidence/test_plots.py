"""Tests for declinecraft.views.evidence.plots: what the view's figures draw."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.container import ErrorbarContainer

from declinecraft.core import stats
from declinecraft.paper import figure_check
from declinecraft.views.evidence import plots
from declinecraft.views.evidence.classes import L5_TYPES
from tests.support import view_size

ROW = {"model": "m", "thinking": "off"}


class TestPlotData:
    def test_curve_points(self) -> None:
        """The sufficiency curve plots each level's abstention in percent at its level's position
        (L1..L5, T at 0..5): 1 of 4, 0, 3 of 4, 4 of 4, 1 of 2, 2 of 2 -> 25, 0, 75, 100, 50, 100."""
        rates = [0.25, 0.0, 0.75, 1.0, 0.5, 1.0]
        curve = pl.DataFrame(
            {
                "model": "m",
                "thinking": "off",
                "prompt": "P1",
                "level": ["L1", "L2", "L3", "L4", "L5", "T"],
                "abstention": rates,
                "low": rates,
                "high": rates,
            }
        )
        ax = plots.plot_sufficiency_curve(curve).axes[0]
        line = [ln for ln in ax.get_lines() if ln.get_label() != "ideal" and len(ln.get_xdata()) == 6][0]
        assert list(line.get_xdata()) == [0, 1, 2, 3, 4, 5]
        assert list(line.get_ydata()) == pytest.approx([25, 0, 75, 100, 50, 100])


class TestL5Distribution:
    def test_stacked_shares(self) -> None:
        """One stacked bar per model and prompt, both orders pooled (order "all"), segments in
        L5_TYPES order. By hand: 2 questions x 2 orders = 4 L5 responses, 1 abstains, 2 pick the
        gold value, 1 the conflicting one -> 25, 50, 25 % starting at 0, 25, 75; the rest 0 at 100.
        A per-order row is not drawn."""
        shares = {"abstain": 0.25, "pick_gold": 0.5, "pick_conflict": 0.25}
        rows = [
            {**ROW, "prompt": "P1", "order": order, "type": kind, "share": shares.get(kind, 0.0)}
            for order in ("all", "gold_first")
            for kind in L5_TYPES
        ]
        ax = plots.plot_l5_distribution(pl.DataFrame(rows)).axes[0]
        assert [p.get_width() for p in ax.patches] == pytest.approx([25, 50, 25, 0, 0, 0, 0])
        assert [p.get_x() for p in ax.patches] == pytest.approx([0, 25, 75, 100, 100, 100, 100])
        assert [t.get_text() for t in ax.get_yticklabels()] == ["m"] and ax.get_title() == "P1"


class TestPromptHeatmap:
    def test_cells(self) -> None:
        """A panel per prompt, a row per configuration, a column per level, abstention in percent in each cell; a level
        the prompt was not asked on is blank ("–"). By hand: P1 abstains on 1 of 4 at L3 and 4 of 4
        at L4 -> 25, 100; P2 on 4 of 4 from L2 on, T not asked."""
        levels = ["L1", "L2", "L3", "L4", "L5", "T"]
        p1 = [0.0, 0.0, 0.25, 1.0, 0.0, 0.0]
        p2 = [0.0, 1.0, 1.0, 1.0, 1.0]
        curve = pl.DataFrame(
            {
                "model": "m",
                "thinking": "off",
                "prompt": ["P1"] * 6 + ["P2"] * 5,
                "level": levels + levels[:5],
                "abstention": p1 + p2,
            }
        )
        axes = plots.plot_prompt_heatmap(curve).axes
        assert [ax.get_title() for ax in axes] == ["P1", "P2"]
        grid = [ax.images[0].get_array().filled(-1).tolist() for ax in axes]
        assert grid == [[[0, 0, 25, 100, 0, 0]], [[0, 100, 100, 100, 100, -1]]]
        assert [t.get_text() for ax in axes for t in ax.texts] == [
            "0",
            "0",
            "25",
            "100",
            "0",
            "0",
            "0",
            "100",
            "100",
            "100",
            "100",
            "–",
        ]
        assert [t.get_text() for t in axes[0].get_yticklabels()] == ["m"]


class TestPositionBias:
    def test_bars_and_stars(self) -> None:
        """A panel per prompt, two bars per configuration (gold first, conflict first), the exact
        McNemar result beside the panel on the configuration's row.
        By hand: P1 abstains on 2 of 4 pairs with gold first only -> 50 vs 0, p = 2 (1/2)^2 = 0.5,
        "ns"; P2 on 11 of 11 with gold first only -> 100 vs 0, p = 2 (1/2)^11 = 0.00098, "***"."""
        assert stats.mcnemar_exact(2, 0) == pytest.approx(0.5)
        assert stats.mcnemar_exact(11, 0) == pytest.approx(2 / 2**11)
        bias = pl.DataFrame(
            {
                "model": ["m", "m"],
                "thinking": ["off", "off"],
                "prompt": ["P1", "P2"],
                "abstain_gold_first": [2 / 4, 11 / 11],
                "abstain_conflict_first": [0.0, 0.0],
                "abstain_p": [stats.mcnemar_exact(2, 0), stats.mcnemar_exact(11, 0)],
            }
        )
        axes = plots.plot_position_bias(bias).axes
        assert [ax.get_title() for ax in axes] == ["P1", "P2"]
        assert [p.get_width() for ax in axes for p in ax.containers[0]] == pytest.approx([50, 100])
        assert [p.get_width() for ax in axes for p in ax.containers[1]] == pytest.approx([0, 0])
        assert [t.get_text() for ax in axes for t in ax.texts] == ["ns", "***"]


class TestHelpfulnessSafety:
    def test_points(self) -> None:
        """One point per model and prompt at (over-answer, accuracy) in percent, with both intervals.
        By hand: L3 4 of 4 answered, L4 0 of 4, L5 3 of 3 (ESB Eq. 2, as test_stage.py's P1) ->
        over-answer 7/11 = 63.6 %; 3 of 4 L1-L2 answers correct (Eq. 3) -> accuracy 75 %."""
        summary = pl.DataFrame(
            {
                **{k: [v] for k, v in ROW.items()},
                "prompt": ["P1"],
                "accuracy": [0.75],
                "accuracy_low": [0.5],
                "accuracy_high": [0.9],
                "over_answer": [7 / 11],
                "over_answer_low": [0.5],
                "over_answer_high": [0.8],
            }
        )
        ax = plots.plot_helpfulness_safety(summary).axes[0]
        (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        point, _, (xerr, yerr) = bars
        assert list(point.get_xdata()) == pytest.approx([700 / 11]) and list(point.get_ydata()) == [75.0]
        assert np.asarray(xerr.get_segments()[0])[:, 0].tolist() == pytest.approx([50, 80])
        assert np.asarray(yerr.get_segments()[0])[:, 1].tolist() == pytest.approx([50, 90])


class TestEmpty:
    @pytest.mark.parametrize(
        ("draw", "note"),
        [
            (plots.plot_sufficiency_curve, "no responses in this run"),
            (plots.plot_l5_distribution, "no L5 responses in this run"),
            (plots.plot_prompt_heatmap, "no responses in this run"),
            (plots.plot_position_bias, "no L5 pairs in this run"),
            (plots.plot_helpfulness_safety, "no responses in this run"),
        ],
    )
    def test_says_so(self, draw, note: str) -> None:  # noqa: ANN001
        """An empty table gives a figure that says what is missing and draws no data."""
        (ax,) = draw(pl.DataFrame()).axes
        assert [t.get_text() for t in ax.texts] == [note]
        assert not ax.lines and not ax.patches and not ax.collections and not ax.images


class TestRateAxes:
    def test_fixed(self) -> None:
        """The view's rate axes run exactly 0-100 % (no -3..103 or 110), whatever the data."""
        curve = pl.DataFrame(
            {
                "model": "m",
                "thinking": "off",
                "prompt": "P1",
                "level": ["L1", "L2", "L3", "L4", "L5", "T"],
                "abstention": [0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
                "low": 0.0,
                "high": 1.0,
            }
        )
        assert plots.plot_sufficiency_curve(curve).axes[0].get_ylim() == plots.RATE_LIMITS
        bias = pl.DataFrame(
            {
                "model": ["m"],
                "thinking": ["off"],
                "prompt": ["P1"],
                "abstain_gold_first": [1.0],
                "abstain_conflict_first": [0.5],
                "abstain_p": [0.5],
            }
        )
        assert plots.plot_position_bias(bias).axes[0].get_xlim() == plots.RATE_LIMITS
        summary = pl.DataFrame(
            {
                "model": ["m"],
                "thinking": ["off"],
                "prompt": ["P1"],
                "accuracy": [1.0],
                "accuracy_low": [0.9],
                "accuracy_high": [1.0],
                "over_answer": [0.0],
                "over_answer_low": [0.0],
                "over_answer_high": [0.1],
            }
        )
        ax = plots.plot_helpfulness_safety(summary).axes[0]
        assert ax.get_xlim() == plots.RATE_LIMITS and ax.get_ylim() == plots.RATE_LIMITS
        assert plots.RATE_LIMITS[0] < 0 < 100 < plots.RATE_LIMITS[1]  # markers at 0 or 100 % off the frame


class TestSeriesColors:
    def test_prompts_are_panels(self) -> None:
        """Two prompts of one model are two panels, the model one colour in both (Figures E1 and E5)."""
        rows = [
            ("m", "off", p, lv, a)
            for p in ("P1", "P2")
            for lv, a in zip(plots.LEVELS, [0, 0, 1, 1, 1, 1], strict=False)
        ]
        curve = pl.DataFrame(
            rows, schema=["model", "thinking", "prompt", "level", "abstention"], orient="row"
        ).with_columns(low=pl.col("abstention").cast(pl.Float64), high=pl.col("abstention").cast(pl.Float64))
        axes = plots.plot_sufficiency_curve(curve).axes
        assert [ax.get_title() for ax in axes] == ["P1", "P2"]
        colors = [(bars.get_label(), bars.lines[0].get_color()) for ax in axes for bars in ax.containers]
        assert [label for label, _ in colors] == ["m", "m"] and colors[0][1] == colors[1][1]


class TestPaperSize:
    @pytest.mark.parametrize(
        ("draw", "table"),
        [
            (plots.plot_sufficiency_curve, "curve"),
            (plots.plot_l5_distribution, "l5_types"),
            (plots.plot_prompt_heatmap, "curve"),
            (plots.plot_position_bias, "position_bias"),
            (plots.plot_helpfulness_safety, "summary"),
        ],
    )
    def test_27_models_pass_the_figure_check(self, draw, table: str) -> None:  # noqa: ANN001
        """At the paper's 27 configurations and four prompts, each figure prints at the full width
        (as ``paper/main.tex`` places it) with no overlapping text, no text under 6 pt and no
        point on a frame."""
        fig = draw(view_size.esb_tables()[table])
        assert figure_check.problems(fig, box=figure_check.FULL_BOX_IN) == []
