"""Tests for declinecraft.views.evidence.plots: what the view's figures draw."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views.evidence import plots


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
        assert plots.plot_sufficiency_curve(curve).axes[0].get_ylim() == (0.0, 100.0)
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
        assert plots.plot_position_bias(bias).axes[0].get_ylim() == (0.0, 100.0)
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
        assert ax.get_xlim() == (0.0, 100.0) and ax.get_ylim() == (0.0, 100.0)
