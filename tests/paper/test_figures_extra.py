"""Tests for declinecraft.paper.figures_extra: each figure draws on synthetic analysis tables read back
from CSV, and draws what small hand-built tables with known values hold (points, lines, bars, axis ranges)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.axes import Axes

from declinecraft.analysis import models
from declinecraft.paper import drawing, figures_extra
from tests.support import figure_values

# --- drawn from synthetic tables read back from CSV -------------------------------


class TestStackedShares:
    def test_sums(self) -> None:
        """Abstain, deny, answer stacked left to right: 20, 30, 50 % from 0, 20, 50, ending at 100 %."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame({"share_abstain": [0.2], "share_deny": [0.3], "share_answer": [0.5]})
        figures_extra.stacked_shares(ax, frame, ["x"])
        assert np.allclose([(p.get_x(), p.get_width()) for p in ax.patches], [(0, 20), (20, 30), (50, 50)])
        last = ax.patches[-1]
        assert last.get_x() + last.get_width() == pytest.approx(100.0)


class TestPlotKChoice:
    def test_missing_retrieval(self, tables: dict[str, pl.DataFrame]) -> None:
        """Without logged retrieval hit rates the top panel says so."""
        fig = figures_extra.plot_k_choice(tables["ablation_k"])
        assert "not in this run" in fig.axes[0].texts[0].get_text()

    def test_full_sweeps_only(self, tables: dict[str, pl.DataFrame]) -> None:
        """Middle and bottom panels draw only the configurations run at every k."""
        partial = tables["ablation_k"].filter(~((pl.col("model") == "syn-00") & (pl.col("k") == 10)))
        fig = figures_extra.plot_k_choice(partial)
        assert figure_values.gray_lines(fig, 1) == figure_values.gray_lines(fig, 2) == 7


# --- what it draws, on hand-built tables with known values -----------------------


def widths(ax: Axes) -> list[float]:
    return [p.get_width() for p in ax.patches]


class TestFamilyLabels:
    def test_bars(self, g: pl.DataFrame) -> None:
        """Figure 17: per condition, three stacked bars per family; widths are the family means."""
        shares = models.family_label_shares(g)
        fig = figures_extra.plot_family_labels(shares)
        assert len(fig.axes) == 3 and all(len(ax.patches) == 3 * 2 for ax in fig.axes)
        mean_a = g.filter((pl.col("family") == "A") & (pl.col("condition") == "no_rag"))["share_abstain"].mean()
        assert widths(fig.axes[0])[0] == pytest.approx(100 * mean_a) and fig.axes[0].get_xlim() == (0, 100)


class TestModelLabels:
    def test_bars(self, g: pl.DataFrame) -> None:
        """Figure 18: three stacked bars per single-shot configuration (family, then size, then
        thinking: M1, M1 (thinking), M2, M3), summing to 100%. known_grid's single-shot shares:
        abstain = CAR 0.25, 0.35, 0.45, 0.55; deny 0.1; answer the rest 0.65, 0.55, 0.45, 0.35."""
        fig = figures_extra.plot_model_labels(g)
        assert figure_values.ticks(fig.axes[0], "y") == ["M1", "M1 (thinking)", "M2", "M3"]
        w = np.array(widths(fig.axes[0])).reshape(3, 4)
        assert np.allclose(w, [[25, 35, 45, 55], [10, 10, 10, 10], [65, 55, 45, 35]])
        assert np.allclose(w.sum(axis=0), 100.0)


class TestLeakage:
    def test_points_and_counts(self) -> None:
        """Figure 19: one point per configuration at its accuracy, the most accurate on top; labels
        give n and the unscored."""
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
        fig = figures_extra.plot_leakage(frame)
        xs = fig.axes[0].lines[0].get_xdata()
        assert list(xs) == pytest.approx([60.0, 20.0])  # the most accurate first, on top
        assert figure_values.ticks(fig.axes[0], "y") == ["a (n=5, 2 without score)", "b (thinking) (n=4)"]
        assert fig.axes[0].get_ylim()[0] > fig.axes[0].get_ylim()[1]


class TestJudgePairs:
    def test_panels(self) -> None:
        """Figure 20: a panel per judge pair with one point per run and rho on top."""
        frame = pl.DataFrame(
            {"score_a": [0.1, 0.2, 0.3, 0.4], "score_b": [0.2, 0.3, 0.4, 0.5], "score_c": [0.4, 0.3, 0.2, 0.1]}
        )
        fig = figures_extra.plot_judge_pairs(frame)
        assert [len(figure_values.points(ax)) for ax in fig.axes] == [4, 4, 4]
        assert [ax.get_title() for ax in fig.axes] == ["ρ = 1.00", "ρ = -1.00", "ρ = -1.00"]


class TestKChoice:
    def test_panels(self) -> None:
        """Figure 21: retrieval hit rates by k on top (0-100%); CAR and accuracy of full sweeps below."""
        ablation = figure_values.sweep({"m1": [1, 5, 10], "m2": [1, 5, 10], "m3": [1]})
        retrieval = pl.DataFrame({"k": [10, 1, 5], "target_hit": [0.9, 0.4, 0.7], "scenario_hit": [0.8, 0.2, 0.5]})
        fig = figures_extra.plot_k_choice(ablation, retrieval)
        top = fig.axes[0]
        assert figure_values.ticks(top) == ["1", "5", "10"] and top.get_ylim() == drawing.RATE_VIEW
        assert [list(line.get_ydata()) for line in top.lines] == [
            pytest.approx([40, 70, 90]),
            pytest.approx([20, 50, 80]),
        ]
        assert len(figure_values.gray(fig.axes[1])) == len(figure_values.gray(fig.axes[2])) == 2
        assert any(np.allclose(line, [5.0, 10.0, 15.0]) for line in figure_values.gray(fig.axes[2]))


class TestPipelinesCarAccuracy:
    def test_lines(self) -> None:
        """Figure 22: a gray line per configuration in both panels, accuracy on the right."""
        frame = figure_values.sweep({"m1": ["dense", "hybrid"], "m2": ["dense", "hybrid"]}, "pipeline")
        fig = figures_extra.plot_pipelines_car_accuracy(frame)
        assert len(figure_values.gray(fig.axes[0])) == len(figure_values.gray(fig.axes[1])) == 2
        assert any(np.allclose(line, [5.0, 10.0]) for line in figure_values.gray(fig.axes[1]))


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
        fig = figures_extra.plot_scenario(frame)
        assert [list(line) for line in figure_values.gray(fig.axes[0])] == [pytest.approx([60.0, 40.0])]
        assert [list(line) for line in figure_values.gray(fig.axes[1])] == [pytest.approx([90.0, 95.0])]


class TestScenarioOverlap:
    def test_bars(self) -> None:
        """Figure 24: one bar per pipeline in the paper's order, its height the share, axis 0-100%."""
        frame = pl.DataFrame({"pipeline": ["hybrid", "bm25", "dense"], "share": [0.5, 0.3, 0.4]})
        fig = figures_extra.plot_scenario_overlap(frame)
        assert figure_values.ticks(fig.axes[0]) == ["BM25", "Dense", "Hybrid"]
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
        fig = figures_extra.plot_transitions(frame)
        assert widths(fig.axes[0]) == pytest.approx([30.0, 10.0]) and widths(fig.axes[1]) == pytest.approx([10.0, 20.0])
        assert [t.get_text() for t in fig.axes[0].texts] == ["*"] and len(fig.axes[1].texts) == 0

    def test_panel_without_changes(self) -> None:
        """A condition whose matched pairs changed nothing says so, and both panels share one scale
        from 0 (not an axis centred on 0 with negative shares)."""
        frame = pl.DataFrame(
            {
                "model": ["m1", "m1"],
                "condition": ["no_rag", "single"],
                "n": [4, 4],
                "a_to_d": [1, 0],
                "d_to_a": [0, 0],
                "net_shift": [0.25, 0.0],
                "sig_ad": [False, False],
            }
        )
        fig = figures_extra.plot_transitions(frame)
        assert [t.get_text() for t in fig.axes[1].texts] == ["no abstain/deny changes"] and not fig.axes[0].texts
        assert fig.axes[0].get_xlim() == fig.axes[1].get_xlim() and fig.axes[1].get_xlim()[0] == 0
        assert fig.axes[1].get_xlim()[1] >= 25
