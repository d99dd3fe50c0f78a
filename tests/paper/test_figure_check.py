"""Tests for declinecraft.paper.figure_check: a figure's problems against its caption."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from declinecraft.paper import drawing, figure_check


class TestFigureCheck:
    def test_finds_each_problem(self) -> None:
        """Each kind of problem is found, and a clean figure has none."""
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1], [0, 1])
        assert figure_check.problems(fig) == []
        ax.text(0.5, 0.5, "first label")
        ax.text(0.5, 0.5, "second label")
        ax.text(5.0, 0.5, "far off").set_in_layout(False)  # left out of the saved bounding box
        ax.set_xlim(0, 1)
        ax.set_ylabel("Correct Abstention Rate (%)")
        ax.set_ylim(-10, 104)
        found = figure_check.problems(fig)
        assert "texts overlap: 'first label' and 'second label'" in found
        assert "text cut off at the figure's edge: 'far off'" in found
        assert any(p.startswith("rate axis y 'Correct Abstention Rate (%)' runs from -10 to 104") for p in found)
        plt.close(fig)

    def test_figure_without_pyplot(self) -> None:
        """A figure built as ``Figure()`` (the views draw so) is checked too."""
        fig = Figure(figsize=(3, 2))
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, "one")
        ax.text(0.5, 0.5, "one again")
        assert figure_check.problems(fig) == ["texts overlap: 'one' and 'one again'"]

    def test_changes_are_not_rates(self) -> None:
        fig, ax = plt.subplots()
        ax.set_ylabel("CAR change (%)")
        ax.set_ylim(-40, 40)
        assert figure_check.problems(fig) == []
        plt.close(fig)

    def test_labels_placed_apart(self) -> None:
        """Labels of points at one spot are placed where they collide with nothing."""
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.scatter([50, 50, 50], [50, 50, 50])
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        drawing.label_points(ax, [(50, 50, "model one"), (50, 50, "model two"), (50, 50, "model three")])
        assert figure_check.problems(fig) == []
        plt.close(fig)

    def test_labels_at_a_corner(self) -> None:
        """Four long labels of points at one corner (every configuration at attempt 100 %, CAR 0 %)
        share one label inside the axes, a line each."""
        fig, ax = plt.subplots(figsize=(5, 3))
        names = [f"Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) {i}" for i in range(3)] + ["SmolLM2-135M-Instruct (Q4_1)"]
        ax.scatter([100] * 4, [0] * 4)
        drawing.rate_axis(ax, "xy")  # the margin keeps the points off the frame
        drawing.label_points(ax, [(100, 0, name) for name in names])
        assert figure_check.problems(fig) == []
        assert [t.get_text() for t in ax.texts] == ["\n".join(names)]
        plt.close(fig)


class TestFramedPoints:
    def test_point_on_the_frame(self) -> None:
        """A point at a limit of a framed axis is reported; with a margin it is not."""
        from declinecraft.paper import drawing

        with drawing.style():
            fig, ax = drawing.new_figure()
            ax.plot([0.0, 50.0], [0.0, 50.0], marker="o", linestyle="")
            ax.set_xlim(0, 100)
            ax.set_ylim(0, 100)
            ax.set_xlabel("attempt (%)")
            found = figure_check.problems(fig)
            assert any("on the left frame" in p for p in found) and any("on the bottom frame" in p for p in found)
            drawing.rate_axis(ax, "xy")
            assert not [p for p in figure_check.problems(fig) if "frame" in p]
