"""Tests for declinecraft.paper.panels: the panels the figures share."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from declinecraft.paper import drawing, panels
from tests.support import figure_values


class TestThinkingPairs:
    def test_pairs(self, tables: dict[str, pl.DataFrame]) -> None:
        """Only models with both settings, with the significance of their McNemar test."""
        out = panels.thinking_pairs(figure_values.grid(tables), tables["paired_tests"], "no_rag", "car")
        assert out.height == 4 and out["significant"].dtype == pl.Boolean


class TestAssocText:
    def test_caption(self) -> None:
        """The caption gives rho and p of the named association, n/a when undefined, nothing without table."""
        assoc = pl.DataFrame({"name": ["a", "b"], "rho": [0.456, float("nan")], "p": [0.0123, 1.0]})
        assert panels.assoc_text(assoc, "a") == "ρ = +0.46, p = 0.01"
        assert panels.assoc_text(assoc, "b") == "ρ = n/a" and panels.assoc_text(None, "a") == ""


class TestArrowsPanel:
    def test_arrow_colors(self) -> None:
        """Orange when thinking lowers the metric, blue when it raises it."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame({"label": ["a", "b"], "off": [0.5, 0.2], "on": [0.3, 0.4], "significant": [True, False]})
        panels.arrows_panel(ax, frame, metric="m", title="t")
        colors = [a.arrow_patch.get_edgecolor() for a in ax.texts]
        assert len(colors) == 2


class TestSizePanel:
    def test_closed_orange(self) -> None:
        """Closed models are drawn as a second (orange) series."""
        fig, ax = drawing.new_figure()
        pts = pl.DataFrame({"x": [1.0, 2.0], "car": [0.1, 0.2], "open_weight": [True, False]})
        panels.size_panel(ax, pts, x="x", y="car", xlabel="", ylabel="", log=False, text="")
        assert len(ax.collections) == 2


class TestFrontierLine:
    def test_step(self) -> None:
        """The frontier is one dashed step line through the non-dominated points."""
        fig, ax = drawing.new_figure()
        panels.frontier_line(ax, np.array([0.9, 0.8, 0.95]), np.array([0.5, 0.4, 0.3]))
        assert len(ax.lines) == 1 and list(ax.lines[0].get_xdata()) == pytest.approx([90.0, 95.0])
