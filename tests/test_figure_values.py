"""What each figure draws, on small hand-built analysis tables with known values: the number of
points, lines and bars, where they sit, and axis ranges that hold the input (several models,
thinking on and off, several k and pipelines, which the default run does not have)."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection

from declinecraft.analysis import models as analysis_models
from declinecraft.paper import drawing
from declinecraft.paper import figures_configs as fc
from declinecraft.paper import figures_extra as fe
from declinecraft.paper import figures_main as fm

#: Configurations: (model, thinking, family, total B, active B, release month).
CONFIGS = [
    ("m1", "off", "A", 10.0, 2.0, 300.0),
    ("m1", "on", "A", 10.0, 2.0, 300.0),
    ("m2", "off", "A", 30.0, 30.0, 310.0),
    ("m3", "off", "B", None, None, 305.0),
]
CONDITIONS = ("no_rag", "single", "iterative")


def value(i: int, c: int, base: float) -> float:
    """A distinct proportion per configuration ``i`` and condition ``c``."""
    return round(base + 0.1 * i + 0.05 * c, 4)


def known_grid() -> pl.DataFrame:
    """A main grid: 4 configurations x 3 conditions with distinct, known rates."""
    rows = []
    for i, (model, thinking, family, total, active, month) in enumerate(CONFIGS):
        for c, condition in enumerate(CONDITIONS):
            car, attempt, acc = value(i, c, 0.2), value(i, c, 0.5), value(i, c, 0.1)
            deny = 0.1
            rows.append(
                dict(
                    model=model,
                    thinking=thinking,
                    condition=condition,
                    family=family,
                    display_name=model.upper(),
                    config_label=model.upper() + (" (thinking)" if thinking == "on" else ""),
                    params_total_b=total,
                    params_active_b=active,
                    open_weight=total is not None,
                    release_month=month,
                    roles="",
                    car=car,
                    car_low=car - 0.05,
                    car_high=car + 0.05,
                    attempt=attempt,
                    attempt_low=attempt - 0.05,
                    attempt_high=attempt + 0.05,
                    accuracy=acc,
                    accuracy_low=acc - 0.05,
                    accuracy_high=acc + 0.05,
                    accuracy_when_attempted=acc + 0.02,
                    share_abstain=car,
                    share_deny=deny,
                    share_answer=1 - car - deny,
                )
            )
    return pl.DataFrame(rows)


def cell(grid: pl.DataFrame, model: str, thinking: str, condition: str, col: str) -> float:
    row = grid.filter(
        (pl.col("model") == model) & (pl.col("thinking") == thinking) & (pl.col("condition") == condition)
    )
    return float(row[col][0])


def sweep(ks: dict[str, list[int]], column: str = "k") -> pl.DataFrame:
    """Ablation rows (thinking off): car = 0.1 * position + model offset, accuracy = car / 2."""
    rows = []
    for m, (model, values) in enumerate(ks.items()):
        for j, k in enumerate(values):
            car = round(0.1 + 0.1 * j + 0.02 * m, 4)
            rows.append(
                {
                    "model": model,
                    "thinking": "off",
                    column: k,
                    "car": car,
                    "accuracy": car / 2,
                    "attempt": 0.9 - 0.1 * j,
                    "display_name": model.upper(),
                }
            )
    return pl.DataFrame(rows)


def points(ax: Axes) -> np.ndarray:
    """Every scatter point of an axes, as (x, y) rows."""
    offsets = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    return np.vstack(offsets) if offsets else np.empty((0, 2))


def gray(ax: Axes) -> list[np.ndarray]:
    return [np.asarray(line.get_ydata(), float) for line in ax.lines if line.get_color() == drawing.GRAY]


def ticks(ax: Axes, axis: str = "x") -> list[str]:
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels())]


def holds(ax: Axes, xs: np.ndarray, ys: np.ndarray) -> bool:
    """The axis ranges contain every input value."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return x0 <= np.nanmin(xs) and np.nanmax(xs) <= x1 and y0 <= np.nanmin(ys) and np.nanmax(ys) <= y1


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same set of (x, y) points, in any order."""
    return a.shape == b.shape and np.allclose(np.array(sorted(map(tuple, a))), np.array(sorted(map(tuple, b))))


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


@pytest.fixture()
def g() -> pl.DataFrame:
    return known_grid()


# --- figures_main -----------------------------------------------------------------------------


class TestKAblation:
    def test_order_and_values(self, g: pl.DataFrame) -> None:
        """Figure 2: x is No RAG, k in increasing order, iterative; k=5 is the main grid's single-shot CAR."""
        ablation = sweep({"m1": [1, 5, 10], "m2": [1, 5, 10]})
        fig = fm.plot_k_ablation(g, ablation)
        assert ticks(fig.axes[0]) == ["No RAG", "k=1", "k=5", "k=10", "Iterative"]
        k1 = ablation.filter((pl.col("model") == "m1") & (pl.col("k") == 1))["car"][0]
        k10 = ablation.filter((pl.col("model") == "m1") & (pl.col("k") == 10))["car"][0]
        want = 100 * np.array(
            [
                cell(g, "m1", "off", "no_rag", "car"),
                k1,
                cell(g, "m1", "off", "single", "car"),
                k10,
                cell(g, "m1", "off", "iterative", "car"),
            ]
        )
        lines = gray(fig.axes[0])
        assert len(lines) == 2 and any(np.allclose(line, want) for line in lines)


class TestPipelines:
    def test_lines(self) -> None:
        """Figure 3: one gray line per configuration across the pipelines, simplest first."""
        frame = sweep({"m1": ["hybrid", "bm25", "dense"], "m2": ["hybrid", "bm25", "dense"]}, "pipeline")
        fig = fm.plot_pipelines(frame)
        assert ticks(fig.axes[0]) == ["BM25", "Dense", "Hybrid"]
        m1 = frame.filter(pl.col("model") == "m1")
        want = 100 * np.array([m1.filter(pl.col("pipeline") == p)["car"][0] for p in ("bm25", "dense", "hybrid")])
        assert len(gray(fig.axes[0])) == 2 and any(np.allclose(line, want) for line in gray(fig.axes[0]))


class TestThinkingCar:
    def test_arrow(self, g: pl.DataFrame) -> None:
        """Figure 4: one arrow per model with both settings, from CAR off to CAR on, per panel."""
        fig = fm.plot_thinking_car(g, None)
        for ax, condition in zip(fig.axes, ("no_rag", "single"), strict=True):
            (arrow,) = ax.texts
            assert arrow.xy[0] == pytest.approx(100 * cell(g, "m1", "on", condition, "car"))
            assert arrow.xyann[0] == pytest.approx(100 * cell(g, "m1", "off", condition, "car"))


class TestSizeRelease:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 5: open models by total parameters (left); every model by release month (right)."""
        pts = analysis_models.model_points(g, "single")
        fig = fm.plot_size_release(pts)
        left, right = points(fig.axes[0]), points(fig.axes[1])
        car_m1, car_m2 = cell(g, "m1", "on", "single", "car"), cell(g, "m2", "off", "single", "car")
        assert same(left, np.array([[10.0, 100 * car_m1], [30.0, 100 * car_m2]]))
        assert sorted(right[:, 0]) == [300.0, 305.0, 310.0] and holds(fig.axes[1], right[:, 0], right[:, 1])


class TestKSweep:
    def test_complete_only(self) -> None:
        """Figure 6: only configurations run at every k, with their CAR at each k."""
        ablation = sweep({"m1": [1, 5, 10], "m2": [1, 5, 10], "m3": [5]})
        fig = fm.plot_k_sweep(ablation)
        assert ticks(fig.axes[0]) == ["1", "5", "10"] and len(gray(fig.axes[0])) == 2
        assert any(np.allclose(line, [10.0, 20.0, 30.0]) for line in gray(fig.axes[0]))


class TestFinetuned:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 7: fine-tuned configurations orange, every other gray, one point each."""
        tuned = g.with_columns(
            family=pl.when(pl.col("model") == "m3").then(pl.lit("Trust-Align")).otherwise(pl.col("family"))
        )
        fig = fm.plot_finetuned(tuned)
        others, ft = [c.get_offsets() for c in fig.axes[0].collections[:2]]
        assert len(others) == 3 and len(ft) == 1
        assert ft[0][1] == pytest.approx(100 * cell(g, "m3", "off", "single", "car"))


# --- figures_configs ---------------------------------------------------------------------------


class TestConditions:
    def test_lines(self, g: pl.DataFrame) -> None:
        """Figure 8: one gray line per configuration through its three conditions."""
        fig = fc.plot_conditions(g)
        assert ticks(fig.axes[0]) == ["No RAG", "RAG", "Iter."] and len(gray(fig.axes[0])) == 4
        want = 100 * np.array([cell(g, "m2", "off", c, "accuracy") for c in CONDITIONS])
        assert any(np.allclose(line, want) for line in gray(fig.axes[1]))


class TestThinkingAccuracy:
    def test_arrow(self, g: pl.DataFrame) -> None:
        """Figure 9: the accuracy arrow from thinking off to on."""
        fig = fc.plot_thinking_accuracy(g)
        (arrow,) = fig.axes[1].texts
        assert arrow.xy[0] == pytest.approx(100 * cell(g, "m1", "on", "single", "accuracy"))


@pytest.mark.parametrize(
    ("plot", "condition", "y"),
    [
        (lambda g: fc.plot_attempt_car(g, "single"), "single", "car"),
        (lambda g: fc.plot_attempt_car(g, "iterative"), "iterative", "car"),
        (fc.plot_attempt_accuracy, "single", "accuracy"),
    ],
)
def test_attempt_scatter(g: pl.DataFrame, plot, condition: str, y: str) -> None:  # noqa: ANN001
    """Figures 10, 16, 11: one point per configuration at (attempt, metric), inside the axes."""
    fig = plot(g)
    part = g.filter(pl.col("condition") == condition)
    want = 100 * part.select("attempt", y).to_numpy()
    got = points(fig.axes[0])
    assert same(got, want) and holds(fig.axes[0], want[:, 0], want[:, 1])


@pytest.mark.parametrize(
    ("plot", "x", "y"),
    [(fc.plot_car_active, "params_active_b", "car"), (fc.plot_accuracy_size, "params_total_b", "accuracy")],
)
def test_size(g: pl.DataFrame, plot, x: str, y: str) -> None:  # noqa: ANN001
    """Figures 12, 13: open-weight models only, at their parameter count, on a log axis."""
    pts = analysis_models.model_points(g, "single")
    fig = plot(pts)
    opens = pts.filter(pl.col("open_weight"))
    want = np.column_stack([opens[x].to_numpy(), 100 * opens[y].to_numpy()])
    assert same(points(fig.axes[0]), want) and fig.axes[0].get_xscale() == "log"


@pytest.mark.parametrize(("plot", "metric"), [(fc.plot_car_per_model, "car"), (fc.plot_accuracy_per_model, "accuracy")])
def test_per_model(g: pl.DataFrame, plot, metric: str) -> None:  # noqa: ANN001
    """Figures 14, 15: three series (conditions) of one point per model (thinking on for m1)."""
    fig = plot(g)
    series = [c.get_offsets() for c in fig.axes[0].collections]
    assert [len(s) for s in series] == [3, 3, 3]
    assert sorted(series[1][:, 0]) == pytest.approx(
        sorted(100 * analysis_models.model_points(g, "single")[metric].to_numpy())
    )


@pytest.mark.parametrize(
    ("plot", "x", "y"),
    [(fc.plot_car_accuracy, "accuracy", "car"), (fc.plot_car_accuracy_attempted, "car", "accuracy_when_attempted")],
)
def test_config_scatter(g: pl.DataFrame, plot, x: str, y: str) -> None:  # noqa: ANN001
    """Figures 26, 27: one point per single-shot configuration."""
    fig = plot(g)
    single = g.filter(pl.col("condition") == "single")
    assert same(points(fig.axes[0]), 100 * single.select(x, y).to_numpy())


class TestTradeoff:
    def test_points(self, g: pl.DataFrame) -> None:
        """Figure 28: every configuration without retrieval and with single-shot RAG, two frontiers."""
        fig = fc.plot_tradeoff(g)
        want = 100 * g.filter(pl.col("condition") != "iterative").select("attempt", "car").to_numpy()
        assert same(points(fig.axes[0]), want) and len(fig.axes[0].lines) == 2


# --- figures_extra -----------------------------------------------------------------------------


def widths(ax: Axes) -> list[float]:
    return [p.get_width() for p in ax.patches]


class TestFamilyLabels:
    def test_bars(self, g: pl.DataFrame) -> None:
        """Figure 17: per condition, three stacked bars per family; widths are the family means."""
        shares = analysis_models.family_label_shares(g)
        fig = fe.plot_family_labels(shares)
        assert len(fig.axes) == 3 and all(len(ax.patches) == 3 * 2 for ax in fig.axes)
        mean_a = g.filter((pl.col("family") == "A") & (pl.col("condition") == "no_rag"))["share_abstain"].mean()
        assert widths(fig.axes[0])[0] == pytest.approx(100 * mean_a) and fig.axes[0].get_xlim() == (0, 100)


class TestModelLabels:
    def test_bars(self, g: pl.DataFrame) -> None:
        """Figure 18: three stacked bars per single-shot configuration, summing to 100%."""
        fig = fe.plot_model_labels(g)
        w = np.array(widths(fig.axes[0])).reshape(3, 4)
        assert np.allclose(w.sum(axis=0), 100.0)


class TestLeakage:
    def test_points_and_counts(self) -> None:
        """Figure 19: one point per configuration at its accuracy; labels give n and the unscored."""
        frame = pl.DataFrame(
            {
                "model": ["a", "b"],
                "thinking": ["off", "on"],
                "n": [5, 4],
                "dropped": [2, 0],
                "attempt": [1.0, 0.5],
                "accuracy": [0.6, 0.2],
                "accuracy_low": [0.5, 0.1],
                "accuracy_high": [0.7, 0.3],
            }
        )
        fig = fe.plot_leakage(frame)
        xs = fig.axes[0].lines[0].get_xdata()
        assert list(xs) == pytest.approx([20.0, 60.0])
        assert ticks(fig.axes[0], "y") == ["b (thinking) (n=4)", "a (n=5, 2 without score)"]


class TestJudgePairs:
    def test_panels(self) -> None:
        """Figure 20: a panel per judge pair with one point per run and rho on top."""
        frame = pl.DataFrame(
            {"score_a": [0.1, 0.2, 0.3, 0.4], "score_b": [0.2, 0.3, 0.4, 0.5], "score_c": [0.4, 0.3, 0.2, 0.1]}
        )
        fig = fe.plot_judge_pairs(frame)
        assert [len(points(ax)) for ax in fig.axes] == [4, 4, 4]
        assert [ax.get_title() for ax in fig.axes] == ["ρ = 1.00", "ρ = -1.00", "ρ = -1.00"]


class TestKChoice:
    def test_panels(self) -> None:
        """Figure 21: retrieval hit rates by k on top (0-100%); CAR and accuracy of full sweeps below."""
        ablation = sweep({"m1": [1, 5, 10], "m2": [1, 5, 10], "m3": [1]})
        retrieval = pl.DataFrame({"k": [10, 1, 5], "target_hit": [0.9, 0.4, 0.7], "scenario_hit": [0.8, 0.2, 0.5]})
        fig = fe.plot_k_choice(ablation, retrieval)
        top = fig.axes[0]
        assert ticks(top) == ["1", "5", "10"] and top.get_ylim() == (0, 100)
        assert [list(line.get_ydata()) for line in top.lines] == [
            pytest.approx([40, 70, 90]),
            pytest.approx([20, 50, 80]),
        ]
        assert len(gray(fig.axes[1])) == len(gray(fig.axes[2])) == 2
        assert any(np.allclose(line, [5.0, 10.0, 15.0]) for line in gray(fig.axes[2]))


class TestPipelinesCarAccuracy:
    def test_lines(self) -> None:
        """Figure 22: a gray line per configuration in both panels, accuracy on the right."""
        frame = sweep({"m1": ["dense", "hybrid"], "m2": ["dense", "hybrid"]}, "pipeline")
        fig = fe.plot_pipelines_car_accuracy(frame)
        assert len(gray(fig.axes[0])) == len(gray(fig.axes[1])) == 2
        assert any(np.allclose(line, [5.0, 10.0]) for line in gray(fig.axes[1]))


class TestScenario:
    def test_lines(self) -> None:
        """Figure 23: each configuration with the scenario (left point) and without (right)."""
        frame = pl.DataFrame(
            {
                "model": ["m1", "m1"],
                "thinking": ["off", "off"],
                "scenario": [True, False],
                "car": [0.6, 0.4],
                "attempt": [0.9, 0.95],
            }
        )
        fig = fe.plot_scenario(frame)
        assert [list(line) for line in gray(fig.axes[0])] == [pytest.approx([60.0, 40.0])]
        assert [list(line) for line in gray(fig.axes[1])] == [pytest.approx([90.0, 95.0])]


class TestScenarioOverlap:
    def test_bars(self) -> None:
        """Figure 24: one bar per pipeline in the paper's order, its height the share, axis 0-100%."""
        frame = pl.DataFrame({"pipeline": ["hybrid", "bm25", "dense"], "share": [0.5, 0.3, 0.4]})
        fig = fe.plot_scenario_overlap(frame)
        assert ticks(fig.axes[0]) == ["BM25", "Dense", "Hybrid"]
        assert [p.get_height() for p in fig.axes[0].patches] == pytest.approx([30.0, 40.0, 50.0])
        assert fig.axes[0].get_ylim() == (0, 100)


class TestTransitions:
    def test_bars(self) -> None:
        """Figure 25: per model two bars (A->D, D->A shares of matched questions) per condition."""
        frame = pl.DataFrame(
            {
                "model": ["m1", "m1"],
                "condition": ["no_rag", "single"],
                "n": [10, 20],
                "a_to_d": [3, 2],
                "d_to_a": [1, 4],
                "net_shift": [0.2, -0.1],
                "sig_ad": [True, False],
            }
        )
        fig = fe.plot_transitions(frame)
        assert widths(fig.axes[0]) == pytest.approx([30.0, 10.0]) and widths(fig.axes[1]) == pytest.approx([10.0, 20.0])
        assert [t.get_text() for t in fig.axes[0].texts] == ["*"] and len(fig.axes[1].texts) == 0


def test_every_figure_checked() -> None:
    """Every plot function of the three figure modules has a known-value test here (Figure 1's
    seven boxes are checked in test_plots.py)."""
    names = {n for mod in (fm, fc, fe) for n in dir(mod) if n.startswith("plot_")}
    checked = {
        "plot_pipeline",
        "plot_k_ablation",
        "plot_pipelines",
        "plot_thinking_car",
        "plot_size_release",
        "plot_k_sweep",
        "plot_finetuned",
        "plot_conditions",
        "plot_thinking_accuracy",
        "plot_attempt_car",
        "plot_attempt_accuracy",
        "plot_car_active",
        "plot_accuracy_size",
        "plot_car_per_model",
        "plot_accuracy_per_model",
        "plot_car_accuracy",
        "plot_car_accuracy_attempted",
        "plot_tradeoff",
        "plot_family_labels",
        "plot_model_labels",
        "plot_leakage",
        "plot_judge_pairs",
        "plot_k_choice",
        "plot_pipelines_car_accuracy",
        "plot_scenario",
        "plot_scenario_overlap",
        "plot_transitions",
    }
    assert names == checked
