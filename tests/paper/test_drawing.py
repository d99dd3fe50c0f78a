"""Tests for declinecraft.paper.drawing: style, figure sizes, saving, intervals, rate axes and panels' helpers."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from declinecraft.paper import drawing, figures_main, flat_panels
from tests.support import figure_values, projects


class TestStyle:
    def test_rc(self) -> None:
        """Inside the style, fonts are small and top/right spines are off."""
        with drawing.style():
            assert plt.rcParams["font.size"] == 7 and not plt.rcParams["axes.spines.top"]


class TestStyled:
    def test_wraps(self) -> None:
        """A decorated function draws under the style."""
        sizes = []
        drawing.styled(lambda: sizes.append(plt.rcParams["font.size"]) or plt.figure())()
        assert sizes == [7]


class TestNewFigure:
    def test_width(self) -> None:
        """Figures are sized for the paper's page: paper/main.tex sets US letter (8.5 in, the
        article default), 0.75 in margins and a 0.22 in column gap, so a column is
        (8.5 - 2 x 0.75 - 0.22) / 2 = 3.39 in and the text 8.5 - 1.5 = 7.0 in wide (to 0.02 in)."""
        tex = (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
        options = re.search(r"\\documentclass\[([^\]]*)\]", tex).group(1)  # type: ignore[union-attr]
        assert "paper" not in options and "\\usepackage[margin=0.75in,columnsep=0.22in]{geometry}" in tex
        column, full = (
            drawing.new_figure(width=w)[0].get_size_inches()[0] for w in (drawing.COLUMN_IN, drawing.FULL_IN)
        )
        assert drawing.new_figure()[0].get_size_inches()[0] == column
        assert column == pytest.approx(3.39, abs=0.02) and full == pytest.approx(7.0, abs=0.02)


class TestSave:
    def test_tight_outside_the_style(self, tmp_path: Path) -> None:
        """A figure drawn outside the paper's style (as the views draw theirs) is saved to its tight
        box too: a label past the canvas's right edge is kept, not cut off."""
        fig = Figure(figsize=(2, 1))
        fig.add_subplot().plot([0, 1], [0, 1])
        fig.text(1.2, 0.5, "invalid")  # right of the 200-pixel canvas
        (png,) = drawing.save(fig, tmp_path, "x", ("png",), dpi=100)
        assert plt.imread(png).shape[1] > 230

    def test_formats(self, tmp_path: Path) -> None:
        """One file per format, non-empty."""
        files = drawing.save(figures_main.plot_pipeline(), tmp_path, "x", ("pdf", "png"), dpi=50)
        assert [f.suffix for f in files] == [".pdf", ".png"] and all(f.stat().st_size > 1000 for f in files)

    def test_reproducible(self, tmp_path: Path) -> None:
        """One figure saved twice, in different folders, is the same bytes; its PDF carries the date given."""
        created = dt.datetime(2026, 9, 8, tzinfo=dt.UTC)
        saved = []
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            saved.append(
                drawing.save(
                    figures_main.plot_pipeline(), tmp_path / name, "x", ("pdf", "png"), dpi=50, created=created
                )
            )
        assert [f.read_bytes() for f in saved[0]] == [f.read_bytes() for f in saved[1]]
        assert b"D:20260908000000Z" in saved[0][0].read_bytes()


class TestStamp:
    def test_above_a_legend_over_the_frame(self, tmp_path: Path) -> None:
        """The SIMULATED line stands above everything drawn, in the saved file too: a legend set
        above the panels (the evidence view's response types) is not moved up to the line when
        saving cuts the figure to what it draws."""
        with drawing.style():
            fig, ax = plt.subplots(figsize=(4, 2), layout="constrained")
            ax.barh([0, 1], [1, 2], label="a series")
            legend = fig.legend(frameon=False, ncols=3, loc="outside upper center")
        drawing.stamp(fig, "SIMULATED")
        (line,) = [t for t in fig.texts if "not a result" in t.get_text()]
        seen = []

        def measure(event: Any) -> None:  # the saved drawing's own geometry
            seen.append((line.get_window_extent(event.renderer), legend.get_window_extent(event.renderer)))

        fig.canvas.mpl_connect("draw_event", measure)
        fig.savefig(tmp_path / "f.png", bbox_inches="tight", pad_inches=0.02)
        said, key = seen[-1]
        assert said.y0 >= key.y1 and not said.overlaps(key)
        plt.close(fig)


class TestPct:
    def test_null_is_nan(self) -> None:
        """Proportions become percentages, null becomes NaN."""
        out = drawing.pct(pl.Series([0.5, None]))
        assert out[0] == 50.0 and np.isnan(out[1])


class TestMeanWithInterval:
    def test_blue_line(self) -> None:
        """The mean line is blue and passes through the column means."""
        fig, ax = drawing.new_figure()
        drawing.mean_with_interval(ax, [0, 1], np.array([[1.0, 2.0], [3.0, 4.0]]))
        assert list(ax.lines[0].get_ydata()) == [2.0, 3.0]


class TestMeanInterval:
    def test_no_interval_on_two_points(self) -> None:
        """Two configurations (df = 1) give a mean and no t interval (it would span hundreds of percent)."""
        mean, low, high = drawing.mean_interval(np.array([[0.0, 100.0], [100.0, 0.0]]))
        assert list(mean) == [50.0, 50.0] and np.isnan(low).all() and np.isnan(high).all()

    def test_clipped_to_rate_scale(self) -> None:
        """From three points on, the interval is drawn, clipped to [0, 100] for a rate."""
        mean, low, high = drawing.mean_interval(np.array([[0.0], [0.0], [100.0]]))
        assert low[0] == 0.0 and high[0] == 100.0 and mean[0] == pytest.approx(100 / 3)
        raw = drawing.mean_interval(np.array([[0.0], [0.0], [100.0]]), rate=False)
        assert raw[1][0] < 0 and raw[2][0] > 100

    def test_errorbars_within_scale(self) -> None:
        """The drawn error bars of two points have zero length."""
        fig, ax = drawing.new_figure()
        drawing.mean_with_interval(ax, [0, 1], np.array([[0.0, 100.0], [100.0, 0.0]]))
        segments = [seg for coll in ax.collections for seg in coll.get_segments()]
        assert all(abs(seg[0][1] - seg[-1][1]) < 1e-9 for seg in segments)


class TestRateAxis:
    def test_fixed(self) -> None:
        """A rate axis shows 0 to 100 % with a margin whatever the data (no -0.05..0.05, no 104 %
        ticks), so a point at 0 or 100 sits inside the frame."""
        fig, ax = drawing.new_figure()
        ax.plot([0, 1], [0.0, 0.0])
        drawing.rate_axis(ax, "xy")
        assert ax.get_xlim() == drawing.RATE_VIEW and ax.get_ylim() == drawing.RATE_VIEW
        assert drawing.RATE_VIEW[0] < 0 and drawing.RATE_VIEW[1] > 100

    def test_clip(self) -> None:
        """Percentages outside the scale are clipped; NaN stays NaN."""
        out = drawing.clip_rate([-440.0, 50.0, 510.0, np.nan])
        assert list(out[:3]) == [0.0, 50.0, 100.0] and np.isnan(out[3])


class TestFlatLinesPanel:
    def test_flat_panel_says_so(self) -> None:
        """A lines panel whose values are all one number is said in words in its place
        (:func:`declinecraft.paper.flat_panels.say_flat`, as the paper stage does); a varied one is drawn."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame({"config": ["a", "a", "b", "b"], "condition": ["x", "y"] * 2, "car": [0.0] * 4})
        drawing.lines_panel(ax, frame, x="condition", y="car", order=["x", "y"], ylabel="CAR (%)")
        assert flat_panels.say_flat(fig) == ["Every CAR (%) is 0 (6 points), so nothing is drawn"]
        fig, ax = drawing.new_figure()
        drawing.lines_panel(
            ax, frame.with_columns(car=pl.Series([0.0, 0.5, 0.2, 0.1])), x="condition", y="car", order=["x", "y"]
        )
        assert flat_panels.say_flat(fig) == [] and ax.axison


class TestLinesPanel:
    def test_one_line_per_unit(self) -> None:
        """One gray line per configuration through its values in percent; missing positions are NaN,
        not errors."""
        frame = pl.DataFrame({"config": ["a", "a", "b"], "x": ["p", "q", "p"], "y": [0.1, 0.2, 0.3]})
        fig, ax = drawing.new_figure()
        matrix = drawing.lines_panel(ax, frame, x="x", y="y", order=["p", "q"])
        assert matrix.shape == (2, 2) and np.isnan(matrix[1, 1]) and figure_values.gray_lines(fig) == 2
        a, b = figure_values.gray(ax)  # percent: a at p 10, q 20; b at p 30, q missing
        assert a.tolist() == pytest.approx([10.0, 20.0]) and b[0] == pytest.approx(30.0) and np.isnan(b[1])


class TestNoteMissing:
    def test_text(self) -> None:
        """An empty panel says what is missing."""
        fig, ax = drawing.new_figure()
        drawing.note_missing(ax, "nothing here")
        assert ax.texts[0].get_text() == "nothing here"
