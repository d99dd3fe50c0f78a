"""Tests for declinecraft.paper.figure_check: a figure's problems against its caption."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from declinecraft.paper import drawing, figure_check, figures, figures_main
from tests.support import projects


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

    def test_inset_ticks_out_of_view_are_not_drawn(self) -> None:
        """An inset keeps the labels of ticks it once had (110 at a wider view): they are drawn
        nowhere, so a text where they were overlaps nothing (Figure 16's inset at 95-105 %)."""
        fig = Figure(figsize=(3, 2))
        ax = fig.add_subplot()
        inset = ax.inset_axes([0.1, 0.3, 0.4, 0.4])
        inset.set_xlim(80, 120)
        drawing.renderer(fig)  # ticks made at 80, 90, ..., 120
        inset.set_xlim(94.5, 105.5)
        drawing.renderer(fig)
        stale = [t.label1 for t in inset.xaxis.majorTicks if t.label1.get_text() == "110"]
        assert stale  # matplotlib keeps the label of the tick now out of view
        where = stale[0].get_window_extent(drawing.renderer(fig)).transformed(ax.transAxes.inverted())
        ax.text(where.x0, where.y0, "a label there", transform=ax.transAxes)
        assert not any("'110'" in p for p in figure_check.problems(fig))

    def test_changes_are_not_rates(self) -> None:
        fig, ax = plt.subplots()
        ax.set_ylabel("CAR change (%)")
        ax.set_ylim(-40, 40)
        assert figure_check.problems(fig) == []
        plt.close(fig)

    def test_labels_placed_apart(self) -> None:
        """Labels of points at one spot are placed where they collide with nothing (the markers
        drawn apart a little: a panel of one value is said in words instead, test_flat_panels)."""
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.scatter([50, 50, 50], [48, 50, 52])
        ax.set_xlabel("Answerable Attempt Rate (%)")  # a rate axis: one x value is read against 0-100
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        drawing.label_points(ax, [(50, 50, "model one"), (50, 50, "model two"), (50, 50, "model three")])
        assert figure_check.problems(fig) == []
        plt.close(fig)

    def test_labels_at_a_corner(self) -> None:
        """Four long labels of points at one corner (four configurations at attempt 100 %, CAR 0 %,
        a fifth elsewhere) share one label inside the axes, a line each."""
        fig, ax = plt.subplots(figsize=(5, 3))
        names = [f"Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) {i}" for i in range(3)] + ["SmolLM2-135M-Instruct (Q4_1)"]
        ax.scatter([100] * 4 + [60], [0] * 4 + [30])
        drawing.rate_axis(ax, "xy")  # the margin keeps the points off the frame
        drawing.label_points(ax, [(100, 0, name) for name in names])
        assert figure_check.problems(fig) == []
        assert [t.get_text() for t in ax.texts] == ["\n".join(names)]
        plt.close(fig)

    def test_crowd_of_labels(self) -> None:
        """Labels of 27 points crowded into one corner (27 models near 100 % attempt) never cover
        each other nor leave the axes: a point with no room for its name is left unlabelled and
        returned, or with ``key`` numbered and named in a key under the axes."""
        rng = np.random.default_rng(0)
        xs, ys = 92 + 8 * rng.random(27), 100 * rng.random(27)
        names = [f"Qwen3-Next 80B-A3B (instruct) {i}" for i in range(27)]
        for key in (False, True):
            fig, ax = plt.subplots(figsize=(3.4, 2.2))
            ax.scatter(xs, ys)
            ax.set_xlabel("Answerable Attempt Rate (%)")
            drawing.rate_axis(ax, "xy")
            rest = drawing.label_points(ax, list(zip(xs, ys, names, strict=True)), key=key)
            drawing.key_below(ax, rest)
            named = [t.get_text() for t in ax.texts if t.get_text() in names]
            marks = [m for m, _ in rest if m]
            assert rest and named and sorted([n for _, n in rest] + named) == sorted(names)
            assert bool(marks) == key and marks == [str(i + 1) for i in range(len(marks))]
            assert sorted(t.get_text() for t in ax.texts if t.get_text().isdigit()) == sorted(marks)
            assert figure_check.problems(fig) == []
            assert all(t.get_fontsize() >= figure_check.MIN_FONT_PT for t in ax.texts)
            plt.close(fig)


class TestLabelDefects:
    """Each defect a figure of many models shows is one the check reports."""

    @staticmethod
    def _axes() -> tuple[Figure, Axes]:
        fig, ax = plt.subplots(figsize=(3.4, 2.2))
        ax.scatter([10, 12, 95], [50, 40, 60])
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        return fig, ax

    @staticmethod
    def _label(ax: Axes, x: float, y: float, text: str, dx: float = 3.0, **kw: Any) -> None:
        ax.annotate(text, (x, y), xytext=(dx, 3), textcoords="offset points", fontsize=6, **kw)

    def test_small_text(self) -> None:
        fig, ax = self._axes()
        ax.text(50, 20, "tiny", fontsize=5)
        assert figure_check.problems(fig) == ["text under 6 pt: 'tiny' (5 pt)"]
        plt.close(fig)

    def test_label_past_the_axes(self) -> None:
        """A label that runs past the frame is reported, though the saved figure would keep it."""
        fig, ax = self._axes()
        self._label(ax, 95, 50, "Qwen3.5 122B-A10B (thinking)")
        assert figure_check.problems(fig) == ["point label past the axes: 'Qwen3.5 122B-A10B (thinking)'"]
        plt.close(fig)

    def test_labels_overlap_a_little(self) -> None:
        """Point labels touching by less than the share that counts for other texts still clash."""
        fig, ax = self._axes()
        self._label(ax, 10, 50, "Gemma 3 27B")
        self._label(ax, 12, 50, "Gemma 3 12B", dx=38)
        found = figure_check.problems(fig)
        assert found == ["point labels overlap: 'Gemma 3 27B' and 'Gemma 3 12B'"]
        plt.close(fig)

    def test_label_over_an_inset(self) -> None:
        fig, ax = self._axes()
        inset = ax.inset_axes([0.05, 0.3, 0.4, 0.4])
        inset.set_xticks([])
        inset.set_yticks([])
        self._label(ax, 10, 50, "GPT-5")
        assert figure_check.problems(fig) == ["point label over an inset axes: 'GPT-5'"]
        plt.close(fig)


class TestPrintedSmall:
    def test_scaled_to_its_place(self) -> None:
        """A figure drawn wider than the column it is printed in prints its 6.5 pt ticks under
        6 pt; drawn at the column's width, it does not."""
        for width, small in ((drawing.FULL_IN * 0.7, True), (drawing.COLUMN_IN, False)):
            with drawing.style():
                fig, ax = plt.subplots(figsize=(width, 2.0))
            ax.plot([0, 1], [0, 1], marker="o")
            ax.set_xlim(-0.1, 1.1)
            ax.set_ylim(-0.1, 1.1)
            found = figure_check.printed_small(fig, figure_check.COLUMN_BOX_IN)
            assert bool(found) == small, found
            assert figure_check.printed_small(fig, figure_check.FULL_BOX_IN) == []
            plt.close(fig)

    def test_small_font_fails(self) -> None:
        """A 5 pt text is a problem of the figure check wherever the figure is printed; a figure
        drawn taller than its place (a row per model, 30 models at 0.18 in) prints its 6.5 pt ticks
        under 6 pt; at most MAX_HEIGHT_IN tall, it does not."""
        with drawing.style():
            fig, ax = drawing.new_figure()
        ax.set_xlabel("Answer Accuracy (%)", fontsize=5)
        found = figure_check.problems(fig)
        assert any("'Answer Accuracy (%)'" in p and "under 6 pt" in p for p in found), found
        for height, small in ((0.18 * 30, True), (drawing.MAX_HEIGHT_IN, False)):
            with drawing.style():
                tall, ax = drawing.new_figure(width=drawing.COLUMN_IN, height=height)
            ax.set_yticks(range(30), [f"model {i}" for i in range(30)])
            found = figure_check.problems(tall, box=figure_check.COLUMN_BOX_IN)
            assert any("'model 0'" in p and "printed at" in p for p in found) == small, found

    def test_places(self) -> None:
        """A wide figure of paper/main.tex is printed in the full width, any other in one column."""
        tex = "\\dcfigurewide[19]{fig19_leakage}{A.}\n\\dcfigure[14]{fig14_car_per_model}{B.}"
        assert figure_check.places(tex) == {
            "fig19_leakage": figure_check.FULL_BOX_IN,
            "fig14_car_per_model": figure_check.COLUMN_BOX_IN,
        }

    def test_tall_figures_fit(self, paper_sized: dict[str, pl.DataFrame]) -> None:
        """The figures with a row per model or configuration (14, 15, 18, 19) and the three-panel
        Figure 21 print no type under 6 pt in their places at 27 models."""
        tex = (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
        places = figure_check.places(tex)
        for spec in figures.figures():
            if spec.number in (14, 15, 18, 19, 21):
                assert figure_check.printed_small(spec.draw(paper_sized), places[spec.stem]) == [], spec.stem

    def test_k_sweep_fits_its_column(self, paper_sized: dict[str, pl.DataFrame]) -> None:
        """Figure 6 (one column of the main text) prints no type under 6 pt."""
        fig = figures_main.plot_k_sweep(paper_sized["ablation_k"])
        assert figure_check.printed_small(fig, figure_check.COLUMN_BOX_IN) == []


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


class TestRequireNone:
    def test_fails_on_a_problem(self) -> None:
        """A figure with a problem fails the check, naming it; figures without pass."""
        figure_check.require_none([{"name": "fig14_car_per_model", "problems": ""}])
        checks = [{"name": "fig14_car_per_model", "problems": "text under 6 pt: 'x' (5 pt); texts overlap"}]
        with pytest.raises(figure_check.FigureCheckError, match="fig14_car_per_model: text under 6 pt"):
            figure_check.require_none(checks)


class TestSingleX:
    def test_one_x_value(self) -> None:
        """Points all at one x value on an axis that is no rate are a problem until the panel says
        so in words (flat_panel.say); on a rate axis they are not."""
        from declinecraft.core import flat_panel

        for xlabel, flagged in (("stated confidence", True), ("attempt (%)", False)):
            with drawing.style():
                fig, ax = drawing.new_figure()
            ax.plot([0.5, 0.5], [0.2, 0.4], marker="o", linestyle="")
            ax.set_xlabel(xlabel)
            found = [p for p in figure_check.problems(fig) if "one x value" in p]
            assert bool(found) == flagged, found
            flat_panel.say(ax, "one stated confidence in this run: 0.50")
            assert figure_check.problems(fig) == []
