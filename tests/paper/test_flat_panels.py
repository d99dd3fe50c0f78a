"""Tests for declinecraft.paper.flat_panels: constant panels found in drawn figures (points, bars,
stacked bars, heat maps) and said in words in place of the plot."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from declinecraft.core import flat_panel
from declinecraft.paper import figure_check, flat_panels


def _axes() -> tuple[Figure, Axes]:
    fig, ax = plt.subplots(figsize=(3, 2))
    return fig, ax


class TestConstant:
    def test_points_on_one_value(self) -> None:
        """Markers all at 0 on a numeric y axis are one value, with their count."""
        fig, ax = _axes()
        ax.plot(range(6), [0.0] * 6, marker="o")
        ax.set(ylabel="abstention (%)", xticks=range(6), xticklabels=["L1", "L2", "L3", "L4", "L5", "T"])
        assert flat_panels.constant(ax) == ("every abstention (%) is 0", "6 points")
        plt.close(fig)

    def test_varied_points(self) -> None:
        """Points that differ are drawn; so is a line without markers (an "ideal" reference)."""
        fig, ax = _axes()
        ax.plot(range(3), [0.0, 10.0, 0.0], marker="o")
        assert flat_panels.constant(ax) is None
        ax.cla()
        ax.plot(range(3), [5.0] * 3)
        assert flat_panels.constant(ax) is None
        plt.close(fig)

    def test_category_axis(self) -> None:
        """Points on one model's row (y names models) are read on x, the quantity."""
        fig, ax = _axes()
        ax.scatter([10.0, 40.0, 70.0], [0, 0, 0])
        ax.set(yticks=[0], yticklabels=["model-a"], xlabel="CAR (%)")
        assert flat_panels.constant(ax) is None
        ax.cla()
        ax.scatter([30.0, 30.0], [0, 1])
        ax.set(yticks=[0, 1], yticklabels=["model-a", "model-b"], xlabel="CAR (%)")
        assert flat_panels.constant(ax) == ("every CAR (%) is 30", "2 points")
        plt.close(fig)

    def test_bars(self) -> None:
        """Bars all zero are one value even alone; equal bars of one series are one value from two
        on; a single bar of any length is its value."""
        fig, ax = _axes()
        ax.barh([0], [0.0], label="gold first")
        ax.barh([1], [0.0], label="conflict first")
        ax.set(xlabel="L5 abstention (%)")
        assert flat_panels.constant(ax) == ("every L5 abstention (%) is 0", "2 bars")
        ax.cla()
        ax.bar([0], [40.0])
        assert flat_panels.constant(ax) is None
        ax.cla()
        ax.bar([0, 1], [40.0, 40.0])
        assert flat_panels.constant(ax) == ("every bar is 40", "2 bars")
        plt.close(fig)

    def test_stacked_bars_of_one_kind(self) -> None:
        """Stacked shares where every bar is one kind alone ("other") are one value; mixed ones are not."""
        fig, ax = _axes()
        left = np.zeros(2)
        for kind, share in (("abstain", [0.0, 0.0]), ("other", [100.0, 100.0])):
            ax.barh([0, 1], share, left=left, label=kind)
            left += share
        ax.set(xlabel="L5 responses (%)")
        assert flat_panels.constant(ax) == ("every bar is all other (L5 responses (%): 100)", "2 bars")
        ax.cla()
        left = np.zeros(2)
        for kind, share in (("abstain", [20.0, 0.0]), ("other", [80.0, 100.0])):
            ax.barh([0, 1], share, left=left, label=kind)
            left += share
        assert flat_panels.constant(ax) is None
        plt.close(fig)

    def test_heat_map(self) -> None:
        """A heat map whose cells are all one value is one value; a stated panel is left alone."""
        fig, ax = _axes()
        ax.imshow(np.zeros((2, 6)))
        assert flat_panels.constant(ax) == ("every cell is 0", "12 cells")
        flat_panels.say_flat(fig)
        assert not ax.get_images() and not ax.axison
        ax.text(0.5, 0.5, "all 12 values are 0", gid=flat_panel.GID)
        assert flat_panels.constant(ax) is None
        plt.close(fig)


class TestSayFlat:
    def test_replaces_and_drops_the_legend(self) -> None:
        """Each constant panel becomes its sentence, titled; with no panel left drawn the figure's
        legend goes; the figure check then finds nothing, and found the panels before."""
        fig, axes = plt.subplots(1, 2, figsize=(6, 2))
        for ax, title in zip(axes, ("P1", "P2"), strict=True):
            ax.plot(range(3), [0.0] * 3, marker="o", label="model-a")
            ax.set(title=title)
        axes[1].sharey(axes[0])
        axes[0].set(ylabel="abstention (%)")  # a row of panels labels only its first
        fig.legend(*axes[0].get_legend_handles_labels())
        before = figure_check.problems(fig)
        assert sum("say so in words" in p for p in before) == 2
        said = flat_panels.say_flat(fig)
        assert said == [
            "P1: every abstention (%) is 0 (3 points), so nothing is drawn",
            "P2: every abstention (%) is 0 (3 points), so nothing is drawn",
        ]
        assert not fig.legends and not any(ax.axison for ax in axes)
        assert not [p for p in figure_check.problems(fig) if "say so in words" in p]
        plt.close(fig)

    def test_keeps_a_varied_panel(self) -> None:
        """A figure with one constant and one varied panel keeps the varied one and its legend."""
        fig, axes = plt.subplots(1, 2, figsize=(6, 2))
        axes[0].plot(range(3), [0.0] * 3, marker="o", label="model-a")
        axes[1].plot(range(3), [0.0, 5.0, 1.0], marker="o", label="model-a")
        fig.legend(*axes[0].get_legend_handles_labels())
        assert len(flat_panels.say_flat(fig)) == 1
        assert fig.legends and axes[1].axison and not axes[0].axison
        plt.close(fig)
