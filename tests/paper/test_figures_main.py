"""Tests for declinecraft.paper.figures_main: each figure draws on synthetic analysis tables read back
from CSV, and draws what small hand-built tables with known values hold (points, lines, bars, axis ranges)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from declinecraft.analysis import models
from declinecraft.paper import drawing, figures_main
from tests.support import figure_values

# --- drawn from synthetic tables read back from CSV -------------------------------


class TestPlotPipeline:
    def test_boxes(self) -> None:
        """Seven boxes: two corpora and the five steps."""
        fig = figures_main.plot_pipeline()
        assert len([p for p in fig.axes[0].patches if type(p).__name__ == "FancyBboxPatch"]) == 7


class TestPlotKAblation:
    def test_positions(self, tables: dict[str, pl.DataFrame]) -> None:
        """No RAG, every k in increasing order, then iterative are the x positions."""
        fig = figures_main.plot_k_ablation(figure_values.grid(tables), tables["ablation_k"])
        labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert labels == ["No RAG", "k=1", "k=2", "k=3", "k=5", "k=10", "Iterative"]


class TestPlotPipelines:
    def test_lines(self, tables: dict[str, pl.DataFrame]) -> None:
        """One gray line per ablation configuration."""
        fig = figures_main.plot_pipelines(tables["ablation_pipelines"])
        assert figure_values.gray_lines(fig) == tables["ablation_pipelines"].select("model", "thinking").unique().height


class TestPlotThinkingCar:
    def test_two_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """No RAG and single-shot panels."""
        assert len(figures_main.plot_thinking_car(figure_values.grid(tables), tables["paired_tests"]).axes) == 2


class TestMonthTicks:
    def test_labels(self) -> None:
        """Months since 2000 are labelled YYYY-MM."""
        fig, ax = drawing.new_figure()
        figures_main.month_ticks(ax, np.array([300.0, 303.0]))
        assert ax.get_xticklabels()[0].get_text() == "2025-01"


class TestPlotSizeRelease:
    def test_title_rho(self, tables: dict[str, pl.DataFrame]) -> None:
        """Each panel's title carries its Spearman rho."""
        fig = figures_main.plot_size_release(models.model_points(figure_values.grid(tables)), tables["associations"])
        assert fig.axes[0].get_title().startswith("ρ")


class TestPlotKSweep:
    def test_full_sweeps_only(self, tables: dict[str, pl.DataFrame]) -> None:
        """Only configurations run at every k are drawn."""
        fig = figures_main.plot_k_sweep(tables["ablation_k"])
        assert figure_values.gray_lines(fig) == 8  # 12 configurations: 8 models, all in the ablations


class TestPlotFinetuned:
    def test_without_finetuned(self, tables: dict[str, pl.DataFrame]) -> None:
        """Without fine-tuned models the second panel says so."""
        fig = figures_main.plot_finetuned(figure_values.grid(tables))
        assert "fine-tuned" in fig.axes[1].texts[0].get_text()


# --- what it draws, on hand-built tables with known values -----------------------


class TestKAblation:
    def test_order_and_values(self, g: pl.DataFrame) -> None:
        """Figure 2: x is No RAG, k in increasing order, iterative; k=5 is the main grid's single-shot CAR."""
        ablation = figure_values.sweep({"m1": [1, 5, 10], "m2": [1, 5, 10]})
        fig = figures_main.plot_k_ablation(g, ablation)
        assert figure_values.ticks(fig.axes[0]) == ["No RAG", "k=1", "k=5", "k=10", "Iterative"]
        k1 = ablation.filter((pl.col("model") == "m1") & (pl.col("k") == 1))["car"][0]
        k10 = ablation.filter((pl.col("model") == "m1") & (pl.col("k") == 10))["car"][0]
        want = 100 * np.array(
            [
                figure_values.cell(g, "m1", "off", "no_rag", "car"),
                k1,
                figure_values.cell(g, "m1", "off", "single", "car"),
                k10,
                figure_values.cell(g, "m1", "off", "iterative", "car"),
            ]
        )
        lines = figure_values.gray(fig.axes[0])
        assert len(lines) == 2 and any(np.allclose(line, want) for line in lines)


class TestPipelines:
    def test_lines(self) -> None:
        """Figure 3: one gray line per configuration across the pipelines, simplest first."""
        frame = figure_values.sweep({"m1": ["hybrid", "bm25", "dense"], "m2": ["hybrid", "bm25", "dense"]}, "pipeline")
        fig = figures_main.plot_pipelines(frame)
        assert figure_values.ticks(fig.axes[0]) == ["BM25", "Dense", "Hybrid"]
        m1 = frame.filter(pl.col("model") == "m1")
        want = 100 * np.array([m1.filter(pl.col("pipeline") == p)["car"][0] for p in ("bm25", "dense", "hybrid")])
        assert len(figure_values.gray(fig.axes[0])) == 2 and any(
            np.allclose(line, want) for line in figure_values.gray(fig.axes[0])
        )


class TestThinkingCar:
    def test_arrow(self, g: pl.DataFrame) -> None:
        """Figure 4: one arrow per model with both settings, from CAR off to CAR on, per panel."""
        fig = figures_main.plot_thinking_car(g, None)
        for ax, condition in zip(fig.axes, ("no_rag", "single"), strict=True):
            (arrow,) = ax.texts
            assert arrow.xy[0] == pytest.approx(100 * figure_values.cell(g, "m1", "on", condition, "car"))
            assert arrow.xyann[0] == pytest.approx(100 * figure_values.cell(g, "m1", "off", condition, "car"))


class TestSizeRelease:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 5: open models by total parameters (left); every model by release month (right)."""
        pts = models.model_points(g, "single")
        fig = figures_main.plot_size_release(pts)
        left, right = figure_values.points(fig.axes[0]), figure_values.points(fig.axes[1])
        car_m1, car_m2 = (
            figure_values.cell(g, "m1", "on", "single", "car"),
            figure_values.cell(g, "m2", "off", "single", "car"),
        )
        assert figure_values.same(left, np.array([[10.0, 100 * car_m1], [30.0, 100 * car_m2]]))
        assert sorted(right[:, 0]) == [300.0, 305.0, 310.0] and figure_values.holds(
            fig.axes[1], right[:, 0], right[:, 1]
        )


class TestKSweep:
    def test_complete_only(self) -> None:
        """Figure 6: only configurations run at every k, with their CAR at each k."""
        ablation = figure_values.sweep({"m1": [1, 5, 10], "m2": [1, 5, 10], "m3": [5]})
        fig = figures_main.plot_k_sweep(ablation)
        assert figure_values.ticks(fig.axes[0]) == ["1", "5", "10"] and len(figure_values.gray(fig.axes[0])) == 2
        assert any(np.allclose(line, [10.0, 20.0, 30.0]) for line in figure_values.gray(fig.axes[0]))


class TestFinetuned:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 7: fine-tuned configurations orange, every other gray, one point each."""
        tuned = g.with_columns(
            family=pl.when(pl.col("model") == "m3").then(pl.lit("Trust-Align")).otherwise(pl.col("family"))
        )
        fig = figures_main.plot_finetuned(tuned)
        others, ft = [c.get_offsets() for c in fig.axes[0].collections[:2]]
        assert len(others) == 3 and len(ft) == 1
        assert ft[0][1] == pytest.approx(100 * figure_values.cell(g, "m3", "off", "single", "car"))
