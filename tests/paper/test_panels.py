"""Tests for declinecraft.paper.panels: the panels the figures share."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_hex

from declinecraft.paper import drawing, panels
from tests.support import figure_values


class TestThinkingPairs:
    def test_pairs(self, g: pl.DataFrame) -> None:
        """Only models with both settings (m1 of known_grid), with CAR off and on (no RAG: 0.2 and
        0.3) and the significance of their McNemar test, from the thinking comparisons only."""
        paired = pl.DataFrame(
            {
                "family": ["main_grid", "main_grid", "ablation"],
                "comparison": ["thinking_on_vs_off", "thinking_on_vs_off", "thinking_on_vs_off"],
                "condition": ["no_rag", "single", "no_rag"],
                "model": ["m1", "m1", "m1"],
                "significant": [True, False, False],
            }
        )
        out = panels.thinking_pairs(g, paired, "no_rag", "car")
        assert out.rows() == [("m1", "M1", pytest.approx(0.2), pytest.approx(0.3), True)]
        assert panels.thinking_pairs(g, paired, "single", "car")["significant"].to_list() == [False]


class TestAssocText:
    def test_caption(self) -> None:
        """The caption gives rho and p of the named association, n/a when undefined, nothing without table."""
        assoc = pl.DataFrame({"name": ["a", "b"], "rho": [0.456, float("nan")], "p": [0.0123, 1.0]})
        assert panels.assoc_text(assoc, "a") == "ρ = +0.46, p = 0.01"
        assert panels.assoc_text(assoc, "b") == "ρ = n/a" and panels.assoc_text(None, "a") == ""


class TestArrowsPanel:
    def test_arrow_colors(self) -> None:
        """Rows sorted by the value off; each arrow from off to on (percent), orange when thinking
        lowers the metric, blue when it raises it, faded (alpha 0.35) when not significant:
        b 20 -> 40 blue faded at row 0, a 50 -> 30 orange at row 1."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame({"label": ["a", "b"], "off": [0.5, 0.2], "on": [0.3, 0.4], "significant": [True, False]})
        panels.arrows_panel(ax, frame, metric="m", title="t")
        got = [
            (a.xyann, a.xy, to_hex(a.arrow_patch.get_edgecolor(), keep_alpha=False), a.arrow_patch.get_alpha())
            for a in ax.texts
        ]
        assert got == [
            ((20.0, 0), (40.0, 0), drawing.BLUE, 0.35),
            ((50.0, 1), (30.0, 1), drawing.ORANGE, 1.0),
        ]
        assert figure_values.ticks(ax, "y") == ["b", "a"]


class TestSizePanel:
    def test_closed_orange(self) -> None:
        """Open-weight models in blue, closed ones as a second series in orange, y in percent."""
        fig, ax = drawing.new_figure()
        pts = pl.DataFrame({"x": [1.0, 2.0], "car": [0.1, 0.2], "open_weight": [True, False]})
        panels.size_panel(ax, pts, x="x", y="car", xlabel="", ylabel="", log=False, text="")
        opens, closed = ax.collections
        assert opens.get_offsets().tolist() == [[1.0, 10.0]] and closed.get_offsets().tolist() == [[2.0, 20.0]]
        assert [to_hex(c.get_facecolor()[0], keep_alpha=False) for c in (opens, closed)] == [
            drawing.BLUE,
            drawing.ORANGE,
        ]

    def test_one_x_value(self) -> None:
        """Every model of one size: the panel names the size and the count in place of a one-tick
        axis, draws no point and returns False."""
        fig, ax = drawing.new_figure()
        pts = pl.DataFrame({"x": [8.0, 8.0], "car": [0.1, 0.2], "open_weight": [True, True]})
        drawn = panels.size_panel(
            ax,
            pts,
            x="x",
            y="car",
            xlabel="Total parameters (B)",
            ylabel="Correct Abstention Rate (%)",
            log=True,
            text="",
        )
        assert not drawn and not ax.collections and not ax.axison
        assert [" ".join(t.get_text().split()) for t in ax.texts] == [  # wrapped to the panel
            "all 2 models have the same total parameters (B): 8, so CAR is not drawn against it"
        ]


class TestFrontierLine:
    def test_step(self) -> None:
        """The frontier is one dashed step line through the non-dominated points."""
        fig, ax = drawing.new_figure()
        panels.frontier_line(ax, np.array([0.9, 0.8, 0.95]), np.array([0.5, 0.4, 0.3]))
        assert len(ax.lines) == 1 and list(ax.lines[0].get_xdata()) == pytest.approx([90.0, 95.0])
