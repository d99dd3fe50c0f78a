"""Tests for declinecraft.core.flat_panel: one value found, and said in place of a plot."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from declinecraft.core import flat_panel


class TestOneValue:
    def test_values(self) -> None:
        """One distinct finite value is returned; none, several, or only missing give None."""
        assert flat_panel.one_value([298.0, 298.0, None, math.nan]) == 298.0
        assert flat_panel.one_value([1.0, 2.0]) is None
        assert flat_panel.one_value([None, math.nan]) is None


class TestSay:
    def test_replaces_the_plot(self) -> None:
        """The panel's points, legend and frame go; its one text carries GID."""
        fig, ax = plt.subplots()
        ax.plot([1, 1], [0, 1], marker="o", label="a")
        ax.legend()
        ax.set_xlabel("x")
        flat_panel.say(ax, "one value")
        assert not ax.lines and ax.get_legend() is None and not ax.axison and ax.get_xlabel() == ""
        assert [(t.get_text(), t.get_gid()) for t in ax.texts] == [("one value", flat_panel.GID)]
        plt.close(fig)

    def test_wrapped_to_the_panel(self) -> None:
        """A long sentence is wrapped to its panel's width, not the figure's: in the narrow panel of
        a row of four, every line stays within the panel; an image (a heat map) goes too."""
        fig, axes = plt.subplots(1, 4, figsize=(7, 1.5))
        axes[0].imshow([[0, 0], [0, 0]])
        flat_panel.say(axes[0], "P1: every bar is all other (L5 responses (%): 100) (24 bars), so nothing is drawn")
        (note,) = axes[0].texts
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        assert "\n" in note.get_text() and not axes[0].get_images()
        assert note.get_window_extent(renderer).width <= axes[0].get_window_extent(renderer).width * 1.05
        plt.close(fig)
