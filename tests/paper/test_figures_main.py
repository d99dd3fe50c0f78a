"""Tests for declinecraft.paper.figures_main: each figure draws on synthetic analysis tables read back
from CSV, and draws what small hand-built tables with known values hold (points, lines, bars, axis ranges)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_rgb

from declinecraft.analysis import models
from declinecraft.paper import drawing, figure_check, figures_main
from tests.support import figure_values

# --- drawn from synthetic tables read back from CSV -------------------------------


class TestPlotKAblation:
    def test_positions(self, tables: dict[str, pl.DataFrame]) -> None:
        """No RAG, every k in increasing order, then iterative are the x positions."""
        fig = figures_main.plot_k_ablation(figure_values.grid(tables), tables["ablation_k"])
        labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert labels == ["No RAG", "k=1", "k=2", "k=3", "k=5", "k=10", "Iterative"]


class TestMonthTicks:
    def test_labels(self) -> None:
        """Months since 2000 are labelled YYYY-MM."""
        fig, ax = drawing.new_figure()
        figures_main.month_ticks(ax, np.array([300.0, 303.0]))
        assert ax.get_xticklabels()[0].get_text() == "2025-01"


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


class TestPlotPipeline:
    def test_boxes(self) -> None:
        """Figure 1 draws the paper's construction (§3.2-3.3): the two corpora and the five steps in
        order, seven arrows, the two into the target chunk marked answerable (from C_pre, blue) and
        unanswerable (from C_post, orange)."""
        ax = figures_main.plot_pipeline().axes[0]
        boxes = [p for p in ax.patches if type(p).__name__ == "FancyBboxPatch"]
        arrows = [p for p in ax.patches if type(p).__name__ == "FancyArrowPatch"]
        heads = [t.get_text().split("\n")[0] for t in ax.texts]
        assert len(boxes) == 7 and len(arrows) == 7
        assert heads[:7] == [
            "$C_{pre}$",
            "$C_{post}$",
            "1. Scenario",
            "2. Target chunk",
            "3. Fact",
            "4. Question",
            "5. Verifier",
        ]
        marks = {t.get_text(): t.get_color() for t in ax.texts[7:]}
        assert marks == {"answerable": drawing.BLUE, "unanswerable": drawing.ORANGE}


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
        """Figure 4: per panel (no RAG, single-shot) one arrow per model with both settings, from CAR
        off to CAR on; m1 is the only such model: no RAG 0.2 -> 0.3, single-shot 0.25 -> 0.35
        (known_grid: 0.2 + 0.1 per configuration + 0.05 per condition), blue as thinking raises it."""
        fig = figures_main.plot_thinking_car(g, None)
        assert [ax.get_title() for ax in fig.axes] == ["No RAG", "Single-shot RAG"]
        for ax, (off, on) in zip(fig.axes, ((20.0, 30.0), (25.0, 35.0)), strict=True):
            (arrow,) = ax.texts
            assert (arrow.xyann[0], arrow.xy[0]) == pytest.approx((off, on))
            assert arrow.arrow_patch.get_edgecolor()[:3] == pytest.approx(to_rgb(drawing.BLUE))


class TestSizeRelease:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 5: open models by total parameters (left); every model by release month (right);
        each panel's title gives its association: rho +0.456, p 0.0123 -> "ρ = +0.46, p = 0.01"."""
        pts = models.model_points(g, "single")
        assoc = pl.DataFrame(
            {"name": ["car_total_params", "car_release_month"], "rho": [0.456, -0.3], "p": [0.0123, 0.5]}
        )
        fig = figures_main.plot_size_release(pts, assoc)
        left, right = figure_values.points(fig.axes[0]), figure_values.points(fig.axes[1])
        car_m1, car_m2 = (
            figure_values.cell(g, "m1", "on", "single", "car"),
            figure_values.cell(g, "m2", "off", "single", "car"),
        )
        assert figure_values.same(left, np.array([[10.0, 100 * car_m1], [30.0, 100 * car_m2]]))
        assert sorted(right[:, 0]) == [300.0, 305.0, 310.0] and figure_values.holds(
            fig.axes[1], right[:, 0], right[:, 1]
        )
        assert [ax.get_title() for ax in fig.axes] == ["ρ = +0.46, p = 0.01", "ρ = -0.30, p = 0.50"]
        assert fig.axes[0].get_xscale() == "log"

    def test_one_month(self, g: pl.DataFrame) -> None:
        """Every model released in one month: the release panel says so in words, with the month and
        the count, in place of an axis of one tick; the figure check finds nothing."""
        pts = models.model_points(g, "single").with_columns(release_month=pl.lit(298.0))
        fig = figures_main.plot_size_release(pts)
        right = fig.axes[1]
        assert not right.axison and figure_values.points(right).size == 0
        assert [" ".join(t.get_text().split()) for t in right.texts] == [  # wrapped to the panel
            "all 3 models have the same release month: 2024-11, so CAR is not drawn against it"
        ]
        assert figure_check.problems(fig) == []


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
