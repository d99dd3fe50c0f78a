"""Tests for declinecraft.paper.figures_configs: each figure draws on synthetic analysis tables read back
from CSV, and draws what small hand-built tables with known values hold (points, lines, bars, axis ranges)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from declinecraft.analysis import models
from declinecraft.paper import drawing, figures_configs
from tests.support import figure_values

# --- drawn from synthetic tables read back from CSV -------------------------------


class TestPlotConditions:
    def test_lines(self, tables: dict[str, pl.DataFrame]) -> None:
        """One gray line per configuration in each panel."""
        fig = figures_configs.plot_conditions(figure_values.grid(tables))
        assert (
            figure_values.gray_lines(fig, 0) == figure_values.grid(tables).select("model", "thinking").unique().height
        )


class TestRateAxes:
    def test_conditions(self, tables: dict[str, pl.DataFrame]) -> None:
        """Figure 8's CAR and accuracy axes are fixed at 0-100 %."""
        fig = figures_configs.plot_conditions(figure_values.grid(tables))
        assert all(ax.get_ylim() == (0.0, 100.0) for ax in fig.axes)

    @pytest.mark.parametrize("condition", ["single", "iterative"])
    def test_attempt_car(self, tables: dict[str, pl.DataFrame], condition: str) -> None:
        """Attempt against CAR: both axes 0-100 %, even with every rate at zero."""
        zero = figure_values.grid(tables).with_columns(car=pl.lit(0.0), car_low=pl.lit(0.0), car_high=pl.lit(0.0))
        ax = figures_configs.plot_attempt_car(zero, condition).axes[0]
        assert ax.get_xlim() == (0.0, 100.0) and ax.get_ylim() == (0.0, 100.0)

    def test_two_configurations(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two configurations: no t interval leaves the scale (Figure 8 drawn from df = 1)."""
        labels = figure_values.grid(tables)["config_label"].unique().sort().head(2).to_list()
        two = figure_values.grid(tables).filter(pl.col("config_label").is_in(labels))
        fig = figures_configs.plot_conditions(two)
        for ax in fig.axes:
            for coll in ax.collections:
                for seg in coll.get_segments():
                    assert abs(seg[0][1] - seg[-1][1]) < 1e-9


class TestPlotThinkingAccuracy:
    def test_two_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two panels with one arrow per model pair."""
        fig = figures_configs.plot_thinking_accuracy(figure_values.grid(tables))
        assert len(fig.axes) == 2 and len(fig.axes[0].texts) == 4


class TestConfigScatter:
    def test_markers(self) -> None:
        """Squares for thinking on, circles otherwise."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame(
            {"family": ["F", "F"], "thinking": ["on", "off"], "attempt": [0.9, 0.8], "car": [0.5, 0.4]}
        )
        figures_configs.config_scatter(ax, frame, x="attempt", y="car", colors={"F": "k"}, bars=False)
        assert len(ax.collections) == 2


class TestFamilyLegend:
    def test_entries(self) -> None:
        """One entry per family plus the thinking marker."""
        fig, ax = drawing.new_figure()
        figures_configs.family_legend(ax, {"A": "r", "B": "b"})
        assert len(ax.get_legend().get_texts()) == 3


class TestPlotAttemptCar:
    @pytest.mark.parametrize("condition", ["single", "iterative"])
    def test_points(self, tables: dict[str, pl.DataFrame], condition: str) -> None:
        """One marker per configuration (Figures 10 and 16)."""
        fig = figures_configs.plot_attempt_car(figure_values.grid(tables), condition)
        assert fig.axes[0].get_xlabel().startswith("Answerable")


class TestPlotAttemptAccuracy:
    def test_axis(self, tables: dict[str, pl.DataFrame]) -> None:
        """Accuracy on the y axis."""
        assert "Accuracy" in figures_configs.plot_attempt_accuracy(figure_values.grid(tables)).axes[0].get_ylabel()


class TestPlotCarActive:
    def test_log(self, tables: dict[str, pl.DataFrame]) -> None:
        """Parameters on a log axis."""
        fig = figures_configs.plot_car_active(models.model_points(figure_values.grid(tables)), tables["associations"])
        assert fig.axes[0].get_xscale() == "log"


class TestPlotAccuracySize:
    def test_log(self, tables: dict[str, pl.DataFrame]) -> None:
        """Parameters on a log axis."""
        fig = figures_configs.plot_accuracy_size(
            models.model_points(figure_values.grid(tables)), tables["associations"]
        )
        assert fig.axes[0].get_xscale() == "log"


class TestPlotCarPerModel:
    def test_rows(self, tables: dict[str, pl.DataFrame]) -> None:
        """One row per model."""
        fig = figures_configs.plot_car_per_model(figure_values.grid(tables))
        assert len(fig.axes[0].get_yticks()) == figure_values.grid(tables)["model"].n_unique()


class TestPlotAccuracyPerModel:
    def test_three_series(self, tables: dict[str, pl.DataFrame]) -> None:
        """One series per condition."""
        assert len(figures_configs.plot_accuracy_per_model(figure_values.grid(tables)).axes[0].collections) == 3


class TestPlotCarAccuracy:
    def test_title(self, tables: dict[str, pl.DataFrame]) -> None:
        """The title carries rho."""
        assert (
            figures_configs.plot_car_accuracy(figure_values.grid(tables), tables["associations"])
            .axes[0]
            .get_title()
            .startswith("ρ")
        )


class TestPlotCarAccuracyAttempted:
    def test_axis(self, tables: dict[str, pl.DataFrame]) -> None:
        """Accuracy when attempted on the y axis."""
        fig = figures_configs.plot_car_accuracy_attempted(figure_values.grid(tables), tables["associations"])
        assert "attempted" in fig.axes[0].get_ylabel()


class TestPlotTradeoff:
    def test_frontiers(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two frontier lines: no RAG and single-shot."""
        assert len(figures_configs.plot_tradeoff(figure_values.grid(tables)).axes[0].lines) == 2


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
        """Figure 9: the accuracy arrow from thinking off to on."""
        fig = figures_configs.plot_thinking_accuracy(g)
        (arrow,) = fig.axes[1].texts
        assert arrow.xy[0] == pytest.approx(100 * figure_values.cell(g, "m1", "on", "single", "accuracy"))


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
    """Figures 12, 13: open-weight models only, at their parameter count, on a log axis."""
    pts = models.model_points(g, "single")
    fig = plot(pts)
    opens = pts.filter(pl.col("open_weight"))
    want = np.column_stack([opens[x].to_numpy(), 100 * opens[y].to_numpy()])
    assert figure_values.same(figure_values.points(fig.axes[0]), want) and fig.axes[0].get_xscale() == "log"


@pytest.mark.parametrize(
    ("plot", "metric"),
    [(figures_configs.plot_car_per_model, "car"), (figures_configs.plot_accuracy_per_model, "accuracy")],
)
def test_per_model(g: pl.DataFrame, plot, metric: str) -> None:  # noqa: ANN001
    """Figures 14, 15: three series (conditions) of one point per model (thinking on for m1)."""
    fig = plot(g)
    series = [c.get_offsets() for c in fig.axes[0].collections]
    assert [len(s) for s in series] == [3, 3, 3]
    assert sorted(series[1][:, 0]) == pytest.approx(sorted(100 * models.model_points(g, "single")[metric].to_numpy()))


@pytest.mark.parametrize(
    ("plot", "x", "y"),
    [
        (figures_configs.plot_car_accuracy, "accuracy", "car"),
        (figures_configs.plot_car_accuracy_attempted, "car", "accuracy_when_attempted"),
    ],
)
def test_config_scatter(g: pl.DataFrame, plot, x: str, y: str) -> None:  # noqa: ANN001
    """Figures 26, 27: one point per single-shot configuration."""
    fig = plot(g)
    single = g.filter(pl.col("condition") == "single")
    assert figure_values.same(figure_values.points(fig.axes[0]), 100 * single.select(x, y).to_numpy())


class TestTradeoff:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 28: every configuration without retrieval and with single-shot RAG, two frontiers."""
        fig = figures_configs.plot_tradeoff(g)
        want = 100 * g.filter(pl.col("condition") != "iterative").select("attempt", "car").to_numpy()
        assert figure_values.same(figure_values.points(fig.axes[0]), want) and len(fig.axes[0].lines) == 2
