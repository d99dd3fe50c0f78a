"""Tests for declinecraft.paper.figures_configs: each figure draws on synthetic analysis tables read back
from CSV, and draws what small hand-built tables with known values hold (points, lines, bars, axis ranges)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.markers import MarkerStyle

from declinecraft.analysis import models
from declinecraft.paper import drawing, figure_check, figures_configs
from tests.support import figure_values

# --- drawn from synthetic tables read back from CSV -------------------------------


class TestRateAxes:
    def test_conditions(self, tables: dict[str, pl.DataFrame]) -> None:
        """Figure 8's CAR and accuracy axes are fixed at 0-100 % (with the rate axes' margin)."""
        fig = figures_configs.plot_conditions(figure_values.grid(tables))
        assert all(ax.get_ylim() == drawing.RATE_VIEW for ax in fig.axes)

    @pytest.mark.parametrize("condition", ["single", "iterative"])
    def test_attempt_car(self, tables: dict[str, pl.DataFrame], condition: str) -> None:
        """Attempt against CAR: both axes 0-100 %, even with every rate at zero."""
        zero = figure_values.grid(tables).with_columns(car=pl.lit(0.0), car_low=pl.lit(0.0), car_high=pl.lit(0.0))
        ax = figures_configs.plot_attempt_car(zero, condition).axes[0]
        assert ax.get_xlim() == drawing.RATE_VIEW and ax.get_ylim() == drawing.RATE_VIEW

    def test_two_configurations(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two configurations: no t interval leaves the scale (Figure 8 drawn from df = 1)."""
        labels = figure_values.grid(tables)["config_label"].unique().sort().head(2).to_list()
        two = figure_values.grid(tables).filter(pl.col("config_label").is_in(labels))
        fig = figures_configs.plot_conditions(two)
        for ax in fig.axes:
            for coll in ax.collections:
                for seg in coll.get_segments():
                    assert abs(seg[0][1] - seg[-1][1]) < 1e-9


class TestConfigScatter:
    def test_markers(self) -> None:
        """One marker per configuration at (100 x, 100 y) in its family's colour: a square for
        thinking on, a circle otherwise (attempt 0.9 / CAR 0.5 -> (90, 50); 0.8 / 0.4 -> (80, 40))."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame(
            {"family": ["F", "F"], "thinking": ["on", "off"], "attempt": [0.9, 0.8], "car": [0.5, 0.4]}
        )
        figures_configs.config_scatter(ax, frame, x="attempt", y="car", colors={"F": "k"}, bars=False)
        on, off = ax.collections
        assert on.get_offsets().tolist() == [[90.0, 50.0]] and off.get_offsets().tolist() == [[80.0, 40.0]]
        square, circle = (MarkerStyle(m).get_path().transformed(MarkerStyle(m).get_transform()).vertices for m in "so")
        assert np.allclose(on.get_paths()[0].vertices, square) and np.allclose(off.get_paths()[0].vertices, circle)
        assert [tuple(c.get_facecolor()[0][:3]) for c in (on, off)] == [(0.0, 0.0, 0.0)] * 2


class TestFamilyLegend:
    def test_entries(self) -> None:
        """One circle per family in its colour, then the gray square of thinking on."""
        fig, ax = drawing.new_figure()
        figures_configs.family_legend(ax, {"A": "r", "B": "b"})
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == ["A", "B", "thinking on"]
        handles = legend.legend_handles
        assert [(h.get_marker(), h.get_color()) for h in handles] == [("o", "r"), ("o", "b"), ("s", drawing.GRAY)]


# --- what it draws, on hand-built tables with known values -----------------------


class TestConditions:
    def test_lines(self, g: pl.DataFrame) -> None:
        """Figure 8: one gray line per configuration through its three conditions."""
        fig = figures_configs.plot_conditions(g)
        assert (
            figure_values.ticks(fig.axes[0]) == ["No RAG", "RAG", "Iter."] and len(figure_values.gray(fig.axes[0])) == 4
        )
        want = 100 * np.array([figure_values.cell(g, "m2", "off", c, "accuracy") for c in figure_values.CONDITIONS])
        assert any(np.allclose(line, want) for line in figure_values.gray(fig.axes[1]))


class TestThinkingAccuracy:
    def test_arrow(self, g: pl.DataFrame) -> None:
        """Figure 9: per panel (no RAG, single-shot) the accuracy arrow of m1, the one model with both
        settings, from thinking off to on: 0.1 -> 0.2 and 0.15 -> 0.25 (known_grid: 0.1 + 0.1 per
        configuration + 0.05 per condition)."""
        fig = figures_configs.plot_thinking_accuracy(g)
        assert [ax.get_title() for ax in fig.axes] == ["No RAG", "Single-shot RAG"]
        for ax, ends in zip(fig.axes, ((10.0, 20.0), (15.0, 25.0)), strict=True):
            (arrow,) = ax.texts
            assert (arrow.xyann[0], arrow.xy[0]) == pytest.approx(ends)


@pytest.mark.parametrize(
    ("plot", "condition", "y"),
    [
        (lambda g: figures_configs.plot_attempt_car(g, "single"), "single", "car"),
        (lambda g: figures_configs.plot_attempt_car(g, "iterative"), "iterative", "car"),
        (figures_configs.plot_attempt_accuracy, "single", "accuracy"),
    ],
)
def test_attempt_scatter(g: pl.DataFrame, plot, condition: str, y: str) -> None:  # noqa: ANN001
    """Figures 10, 16, 11: one point per configuration at (attempt, metric), inside the axes."""
    fig = plot(g)
    part = g.filter(pl.col("condition") == condition)
    want = 100 * part.select("attempt", y).to_numpy()
    got = figure_values.points(fig.axes[0])
    assert figure_values.same(got, want) and figure_values.holds(fig.axes[0], want[:, 0], want[:, 1])


@pytest.mark.parametrize(
    ("plot", "x", "y"),
    [
        (figures_configs.plot_car_active, "params_active_b", "car"),
        (figures_configs.plot_accuracy_size, "params_total_b", "accuracy"),
    ],
)
def test_size(g: pl.DataFrame, plot, x: str, y: str) -> None:  # noqa: ANN001
    """Figures 12, 13: open-weight models only, at their parameter count, on a log axis; the title
    gives the figure's own association (rho 0.456, p 0.0123 -> "ρ = +0.46, p = 0.01")."""
    pts = models.model_points(g, "single")
    name = f"{y}_{x.removeprefix('params_').removesuffix('_b')}_params"
    assoc = pl.DataFrame({"name": [name, "other"], "rho": [0.456, 0.9], "p": [0.0123, 0.9]})
    fig = plot(pts, assoc)
    assert fig.axes[0].get_title() == "ρ = +0.46, p = 0.01"
    opens = pts.filter(pl.col("open_weight"))
    want = np.column_stack([opens[x].to_numpy(), 100 * opens[y].to_numpy()])
    assert figure_values.same(figure_values.points(fig.axes[0]), want) and fig.axes[0].get_xscale() == "log"


@pytest.mark.parametrize(
    ("plot", "metric"),
    [(figures_configs.plot_car_per_model, "car"), (figures_configs.plot_accuracy_per_model, "accuracy")],
)
def test_per_model(g: pl.DataFrame, plot, metric: str) -> None:  # noqa: ANN001
    """Figures 14, 15: three series (conditions) of one point per model (thinking on for m1), each
    condition on its own offset from the model's line, so equal values stay visible."""
    fig = plot(g)
    series = [c.get_offsets() for c in fig.axes[0].collections]
    assert [len(s) for s in series] == [3, 3, 3]
    assert sorted(series[1][:, 0]) == pytest.approx(sorted(100 * models.model_points(g, "single")[metric].to_numpy()))
    rows = [sorted(np.asarray(s[:, 1]) % 1) for s in series]
    assert rows[0] != rows[1] != rows[2] and np.allclose(np.asarray(series[1][:, 1]) % 1, 0)


@pytest.mark.parametrize("plot", [figures_configs.plot_car_per_model, figures_configs.plot_accuracy_per_model])
def test_per_model_long_name(g: pl.DataFrame, plot) -> None:  # noqa: ANN001
    """Figures 14, 15 of one model whose name takes most of the column (the vLLM test run's): the
    axis label stays inside the figure, so no type prints under 6 pt in the column."""
    name = "SmolLM2-135M-Instruct (Q4_1 → bf16, vLLM)"
    one = g.filter(pl.col("model") == g["model"][0]).with_columns(display_name=pl.lit(name))
    assert figure_check.printed_small(plot(one), figure_check.COLUMN_BOX_IN) == []


@pytest.mark.parametrize(
    ("plot", "x", "y"),
    [
        (figures_configs.plot_car_accuracy, "accuracy", "car"),
        (figures_configs.plot_car_accuracy_attempted, "car", "accuracy_when_attempted"),
    ],
)
def test_config_scatter(g: pl.DataFrame, plot, x: str, y: str) -> None:  # noqa: ANN001
    """Figures 26, 27: one point per single-shot configuration; the title gives the figure's own
    association (rho -0.5, p 0.25 -> "ρ = -0.50, p = 0.25")."""
    name = "car_accuracy" if y == "car" else "car_accuracy_when_attempted"
    assoc = pl.DataFrame({"name": [name, "other"], "rho": [-0.5, 0.9], "p": [0.25, 0.9]})
    fig = plot(g, assoc)
    assert fig.axes[0].get_title() == "ρ = -0.50, p = 0.25"
    single = g.filter(pl.col("condition") == "single")
    assert figure_values.same(figure_values.points(fig.axes[0]), 100 * single.select(x, y).to_numpy())


class TestTradeoff:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 28: every configuration without retrieval and with single-shot RAG, and each
        condition's frontier (App. A.7: the highest CAR at or above each attempt rate). In
        known_grid attempt and CAR rise together, so one configuration (m3, the last) dominates each
        condition: the no-RAG frontier is its point (80, 50) in gray, single-shot's (85, 55) in orange."""
        fig = figures_configs.plot_tradeoff(g)
        want = 100 * g.filter(pl.col("condition") != "iterative").select("attempt", "car").to_numpy()
        assert figure_values.same(figure_values.points(fig.axes[0]), want)
        no_rag, single = fig.axes[0].lines
        assert (no_rag.get_color(), single.get_color()) == (drawing.GRAY, drawing.ORANGE)
        assert no_rag.get_xydata().tolist() == [pytest.approx([80, 50])]
        assert single.get_xydata().tolist() == [pytest.approx([85, 55])]


class TestLegendsListWhatIsDrawn:
    def test_no_thinking_marker_without_thinking(self, tables: dict[str, pl.DataFrame]) -> None:
        """A run where no configuration thinks draws no "thinking on" legend entry (Figures 10, 28)."""
        off = figure_values.grid(tables).filter(pl.col("thinking") != "on")
        for fig in (figures_configs.plot_tradeoff(off), figures_configs.plot_attempt_car(off, "single")):
            texts = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
            assert texts and "thinking on" not in texts
        both = figures_configs.plot_tradeoff(figure_values.grid(tables))
        assert "thinking on" in [t.get_text() for t in both.axes[0].get_legend().get_texts()]
