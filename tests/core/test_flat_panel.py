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
