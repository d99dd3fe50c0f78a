"""Tests for declinecraft.paper.figures: the figure list, too few points, writing every figure."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.figure import Figure

from declinecraft.paper import (
    caption_check,
    drawing,
    figure_check,
    figures,
    figures_configs,
    figures_extra,
    figures_main,
)
from tests.support import figure_values, paper_size, projects


class TestFigures:
    def test_registry(self, tables: dict[str, pl.DataFrame]) -> None:
        """Figures 1–28 are registered once each; only 7 and 24 lack data in this synthetic run."""
        specs = figures.figures()
        assert sorted(s.number for s in specs) == list(range(1, 29))
        lacking = {s.number for s in specs if s.lacks(tables)}
        assert lacking == {7, 24}

    def test_every_figure_draws(self, tables: dict[str, pl.DataFrame]) -> None:
        """Every figure with data draws without error, and with no layout problem a reader would
        see: no text off the figure, no two labels over each other, no rate axis beyond [0, 100],
        no axis quantity that its caption in paper/main.tex leaves unnamed."""
        tex = (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
        captions, places = caption_check.captions(tex), figure_check.places(tex)
        for spec in figures.figures():
            if not spec.lacks(tables):
                fig = spec.draw(tables)
                assert isinstance(fig, Figure), spec.stem
                assert figure_check.problems(fig, captions[spec.stem], box=places[spec.stem]) == [], spec.stem
                plt.close("all")


class TestPaperSize:
    def test_every_figure_passes_at_27_models(self, tmp_path: Path, paper_sized: dict[str, pl.DataFrame]) -> None:
        """At the paper's size (27 models by their display names, 40 configurations) every figure the
        run supports is drawn, and the paper stage's check finds nothing in any: no label over
        another or past its axes, no text under 6 pt once scaled to its place in paper/main.tex
        (the tall per-model and per-configuration figures included), no legend over the data,
        every axis named by its caption. Only the fine-tuned models' figure (none of the 27 is fine-tuned) and the
        pipelines' scenario overlap (not in the analysis tables) are left out."""
        grid = figure_values.grid(paper_sized)
        assert grid["model"].n_unique() == 27 and grid.select("model", "thinking").unique().height == 40
        tex = (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
        captions, places = caption_check.captions(tex), figure_check.places(tex)
        rows = figures.write_figures(paper_sized, tmp_path, formats=("png",), dpi=30, captions=captions, places=places)
        assert {r["number"] for r in rows if r["reason"]} == {7, 24}
        assert {r["name"]: r["layout"] for r in rows if r["layout"]} == {}

    def test_finetuned_at_27_models(self) -> None:
        """Figure 7, which the 27 models leave out, drawn with the three fine-tuned models among
        them: every fine-tuned model is named (or numbered in the key), with no layout problem."""
        results = paper_size.paper_size_results(further=paper_size.FINETUNED_MODELS)
        spec = next(s for s in figures.figures() if s.number == 7)
        assert not spec.lacks(results)
        fig = spec.draw(results)
        assert figure_check.problems(fig) == []
        names = {name for _, name, _ in paper_size.paper_models(paper_size.FINETUNED_MODELS)[-3:]}
        drawn = {line for ax in fig.axes for t in ax.texts for line in t.get_text().split("\n")}
        assert names <= drawn

    def test_legend_in_columns(self, paper_sized: dict[str, pl.DataFrame]) -> None:
        """The family legend of the 27 models sits outside the axes, in columns of at most
        LEGEND_ROWS entries."""
        fig = figures_configs.plot_attempt_car(paper_sized["main_grid"])
        ax = fig.axes[0]
        legend = ax.get_legend()
        entries = len(legend.get_texts())
        assert entries > figures_configs.LEGEND_ROWS  # the paper's families and the thinking marker
        assert legend._ncols == -(-entries // figures_configs.LEGEND_ROWS)
        renderer = drawing.renderer(fig)
        assert legend.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1


class TestTooFewPoints:
    def test_association_figures_only(self, tables: dict[str, pl.DataFrame]) -> None:
        """Needing more than the synthetic run's models (12 configurations of 8 models), an association
        figure is too small to read, with its n; needing no more, it is not; a figure that is no
        association never is."""
        models = figure_values.grid(tables).filter(pl.col("condition") == "single")["model"].n_unique()
        reason = figures.too_few_points("fig12_car_active_params", tables, models + 1)
        assert reason == (
            f"Drawn from {models} models; a rank correlation needs {models + 1}, so it is not interpretable at this n"
        )
        assert figures.too_few_points("fig12_car_active_params", tables, models) == ""
        assert figures.too_few_points("fig26_car_accuracy", tables, models + 1) == ""  # 12 configurations
        assert figures.too_few_points("fig08_conditions", tables, 1000) == ""

    def test_status_row(self, tmp_path: Path, tables: dict[str, pl.DataFrame]) -> None:
        """write_figures marks exactly the association figures it drew, and still draws them."""
        rows = figures.write_figures(tables, tmp_path, formats=("png",), dpi=30, min_points=1000)
        small = {r["name"] for r in rows if r["small"]}
        drawn = {r["name"] for r in rows if not r["reason"]}
        assert small == set(figures.ASSOCIATIONS) & drawn and small
        assert all((tmp_path / f"{name}.png").is_file() for name in small)


class TestWriteFigures:
    def test_skips_with_reasons(self, tmp_path: Path, tables: dict[str, pl.DataFrame]) -> None:
        """Drawn figures get files; the others a reason naming the figure; stale files go."""
        (tmp_path / "fig99_stale.png").write_text("old")
        (tmp_path / "notes.txt").write_text("mine")
        rows = figures.write_figures(tables, tmp_path, formats=("png",), dpi=40)
        skipped = {r["number"]: r["reason"] for r in rows if r["reason"]}
        assert set(skipped) == {7, 24} and skipped[7].startswith("Figure 7")
        assert (tmp_path / "fig08_conditions.png").is_file() and not (tmp_path / "fig99_stale.png").exists()
        assert (tmp_path / "notes.txt").is_file()  # only generated figure names are cleared

    def test_no_input(self, tmp_path: Path) -> None:
        """Without results only the pipeline diagram is drawn, and every reason names the missing input."""
        rows = figures.write_figures({}, tmp_path, formats=("png",), dpi=40, no_input="judge stage missing")
        assert [r["number"] for r in rows if not r["reason"]] == [1]
        assert all("judge stage missing" in r["reason"] for r in rows if r["number"] != 1)


def test_every_figure_checked() -> None:
    """Every plot function of the three figure modules is called by a known-value test: below the
    "what it draws" line of test_figures_main.py, test_figures_configs.py and test_figures_extra.py,
    where each figure draws a hand-built table (Figure 1: the paper's steps) and the test reads the
    drawn values back."""
    names = {n for mod in (figures_main, figures_configs, figures_extra) for n in dir(mod) if n.startswith("plot_")}
    here = Path(__file__).parent
    known = "".join(
        (here / f"test_figures_{part}.py").read_text(encoding="utf-8").split("# --- what it draws", 1)[1]
        for part in ("main", "configs", "extra")
    )
    called = set(re.findall(r"\.(plot_\w+)\(", known)) | set(
        re.findall(r"\(figures_(?:main|configs|extra)\.(plot_\w+),", known)
    )
    assert names and names <= called, sorted(names - called)
