"""Tests of the figures (drawing, panels, figure_spec, figures and the three figure modules) on
synthetic analysis tables read back from CSV, as the paper stage reads them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure
from tests.support import synthetic

from declinecraft.analysis import analyze as analysis
from declinecraft.analysis import models as analysis_models
from declinecraft.analysis import results as analysis_results
from declinecraft.paper import caption_check, drawing, figure_check, figure_spec, figures, panels
from declinecraft.paper import figures_configs as plots_configs
from declinecraft.paper import figures_extra as plots_extra
from declinecraft.paper import figures_main as plots_main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.DataFrame]:
    """Analysis tables of a synthetic run with ablations, written and read back as CSV."""
    judged = synthetic.synthetic_judged(12, 120, seed=2, ablations=True)
    facts = synthetic.synthetic_models(12, seed=2)
    out = analysis.analyze(judged, facts, analysis.Design(n_resamples=50))
    out["facts"] = facts
    folder = tmp_path_factory.mktemp("tables")
    for name, table in out.items():
        analysis_results.write_csv(table, folder / f"{name}.csv")
    return analysis_results.read_tables(folder)


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


def gray_lines(fig: Figure, ax_index: int = 0) -> int:
    return sum(1 for line in fig.axes[ax_index].lines if line.get_color() == drawing.GRAY)


def grid(t: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return t["main_grid"]


# --- drawing, figure_spec, figures ------------------------------------------------------------


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
        """Figures are sized for the paper's column."""
        fig, _ = drawing.new_figure()
        assert fig.get_size_inches()[0] == pytest.approx(drawing.COLUMN_IN)


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
        files = drawing.save(plots_main.plot_pipeline(), tmp_path, "x", ("pdf", "png"), dpi=50)
        assert [f.suffix for f in files] == [".pdf", ".png"] and all(f.stat().st_size > 1000 for f in files)


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
        """A rate axis runs from 0 to 100 % whatever the data (no -0.05..0.05, no 104)."""
        fig, ax = drawing.new_figure()
        ax.plot([0, 1], [0.0, 0.0])
        drawing.rate_axis(ax, "xy")
        assert ax.get_xlim() == (0.0, 100.0) and ax.get_ylim() == (0.0, 100.0)

    def test_clip(self) -> None:
        """Percentages outside the scale are clipped; NaN stays NaN."""
        out = drawing.clip_rate([-440.0, 50.0, 510.0, np.nan])
        assert list(out[:3]) == [0.0, 50.0, 100.0] and np.isnan(out[3])


class TestLinesPanel:
    def test_one_line_per_unit(self) -> None:
        """One gray line per configuration; missing positions are NaN, not errors."""
        frame = pl.DataFrame({"config": ["a", "a", "b"], "x": ["p", "q", "p"], "y": [0.1, 0.2, 0.3]})
        fig, ax = drawing.new_figure()
        matrix = drawing.lines_panel(ax, frame, x="x", y="y", order=["p", "q"])
        assert matrix.shape == (2, 2) and np.isnan(matrix[1, 1]) and gray_lines(fig) == 2


class TestNoteMissing:
    def test_text(self) -> None:
        """An empty panel says what is missing."""
        fig, ax = drawing.new_figure()
        drawing.note_missing(ax, "nothing here")
        assert ax.texts[0].get_text() == "nothing here"


class TestNeeds:
    def test_reason(self, tables: dict[str, pl.DataFrame]) -> None:
        """A check returns its reason when the table lacks rows or distinct values."""
        assert figure_spec.needs("main_grid", "why", condition="nope")(tables) == "why"
        assert figure_spec.needs("main_grid", "why", distinct="thinking")(tables) == ""
        assert figure_spec.needs("absent", "why")(tables) == "why"


class TestAlways:
    def test_empty(self) -> None:
        """The pipeline diagram needs nothing."""
        assert figure_spec.always({}) == ""


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
        captions = caption_check.captions((ROOT / "paper" / "main.tex").read_text(encoding="utf-8"))
        for spec in figures.figures():
            if not spec.lacks(tables):
                fig = spec.draw(tables)
                assert isinstance(fig, Figure), spec.stem
                assert figure_check.problems(fig, captions[spec.stem]) == [], spec.stem
                plt.close("all")


class TestTooFewPoints:
    def test_association_figures_only(self, tables: dict[str, pl.DataFrame]) -> None:
        """Needing more than the synthetic run's models (12 configurations of 8 models), an association
        figure is too small to read, with its n; needing no more, it is not; a figure that is no
        association never is."""
        models = grid(tables).filter(pl.col("condition") == "single")["model"].n_unique()
        reason = figures.too_few_points("fig12_car_active_params", tables, models + 1)
        assert (
            reason
            == f"Drawn from {models} models; a rank correlation needs {models + 1}, so it is not interpretable at this n"
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


# --- figures_main and panels ---------------------------------------------------------------


class TestPlotPipeline:
    def test_boxes(self) -> None:
        """Seven boxes: two corpora and the five steps."""
        fig = plots_main.plot_pipeline()
        assert len([p for p in fig.axes[0].patches if type(p).__name__ == "FancyBboxPatch"]) == 7


class TestPlotKAblation:
    def test_positions(self, tables: dict[str, pl.DataFrame]) -> None:
        """No RAG, every k in increasing order, then iterative are the x positions."""
        fig = plots_main.plot_k_ablation(grid(tables), tables["ablation_k"])
        labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert labels == ["No RAG", "k=1", "k=2", "k=3", "k=5", "k=10", "Iterative"]


class TestPlotPipelines:
    def test_lines(self, tables: dict[str, pl.DataFrame]) -> None:
        """One gray line per ablation configuration."""
        fig = plots_main.plot_pipelines(tables["ablation_pipelines"])
        assert gray_lines(fig) == tables["ablation_pipelines"].select("model", "thinking").unique().height


class TestThinkingPairs:
    def test_pairs(self, tables: dict[str, pl.DataFrame]) -> None:
        """Only models with both settings, with the significance of their McNemar test."""
        out = panels.thinking_pairs(grid(tables), tables["paired_tests"], "no_rag", "car")
        assert out.height == 4 and out["significant"].dtype == pl.Boolean


class TestAssocText:
    def test_caption(self) -> None:
        """The caption gives rho and p of the named association, n/a when undefined, nothing without table."""
        assoc = pl.DataFrame({"name": ["a", "b"], "rho": [0.456, float("nan")], "p": [0.0123, 1.0]})
        assert panels.assoc_text(assoc, "a") == "ρ = +0.46, p = 0.01"
        assert panels.assoc_text(assoc, "b") == "ρ = n/a" and panels.assoc_text(None, "a") == ""


class TestArrowsPanel:
    def test_arrow_colors(self) -> None:
        """Orange when thinking lowers the metric, blue when it raises it."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame({"label": ["a", "b"], "off": [0.5, 0.2], "on": [0.3, 0.4], "significant": [True, False]})
        panels.arrows_panel(ax, frame, metric="m", title="t")
        colors = [a.arrow_patch.get_edgecolor() for a in ax.texts]
        assert len(colors) == 2


class TestPlotThinkingCar:
    def test_two_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """No RAG and single-shot panels."""
        assert len(plots_main.plot_thinking_car(grid(tables), tables["paired_tests"]).axes) == 2


class TestSizePanel:
    def test_closed_orange(self) -> None:
        """Closed models are drawn as a second (orange) series."""
        fig, ax = drawing.new_figure()
        pts = pl.DataFrame({"x": [1.0, 2.0], "car": [0.1, 0.2], "open_weight": [True, False]})
        panels.size_panel(ax, pts, x="x", y="car", xlabel="", ylabel="", log=False, text="")
        assert len(ax.collections) == 2


class TestMonthTicks:
    def test_labels(self) -> None:
        """Months since 2000 are labelled YYYY-MM."""
        fig, ax = drawing.new_figure()
        plots_main.month_ticks(ax, np.array([300.0, 303.0]))
        assert ax.get_xticklabels()[0].get_text() == "2025-01"


class TestPlotSizeRelease:
    def test_title_rho(self, tables: dict[str, pl.DataFrame]) -> None:
        """Each panel's title carries its Spearman rho."""
        fig = plots_main.plot_size_release(analysis_models.model_points(grid(tables)), tables["associations"])
        assert fig.axes[0].get_title().startswith("ρ")


class TestPlotKSweep:
    def test_full_sweeps_only(self, tables: dict[str, pl.DataFrame]) -> None:
        """Only configurations run at every k are drawn."""
        fig = plots_main.plot_k_sweep(tables["ablation_k"])
        assert gray_lines(fig) == 8  # 12 configurations: 8 models, all in the ablations


class TestFrontierLine:
    def test_step(self) -> None:
        """The frontier is one dashed step line through the non-dominated points."""
        fig, ax = drawing.new_figure()
        panels.frontier_line(ax, np.array([0.9, 0.8, 0.95]), np.array([0.5, 0.4, 0.3]))
        assert len(ax.lines) == 1 and list(ax.lines[0].get_xdata()) == pytest.approx([90.0, 95.0])


class TestPlotFinetuned:
    def test_without_finetuned(self, tables: dict[str, pl.DataFrame]) -> None:
        """Without fine-tuned models the second panel says so."""
        fig = plots_main.plot_finetuned(grid(tables))
        assert "fine-tuned" in fig.axes[1].texts[0].get_text()


# --- figures_configs ---------------------------------------------------------------------------


class TestPlotConditions:
    def test_lines(self, tables: dict[str, pl.DataFrame]) -> None:
        """One gray line per configuration in each panel."""
        fig = plots_configs.plot_conditions(grid(tables))
        assert gray_lines(fig, 0) == grid(tables).select("model", "thinking").unique().height


class TestRateAxes:
    def test_conditions(self, tables: dict[str, pl.DataFrame]) -> None:
        """Figure 8's CAR and accuracy axes are fixed at 0-100 %."""
        fig = plots_configs.plot_conditions(grid(tables))
        assert all(ax.get_ylim() == (0.0, 100.0) for ax in fig.axes)

    @pytest.mark.parametrize("condition", ["single", "iterative"])
    def test_attempt_car(self, tables: dict[str, pl.DataFrame], condition: str) -> None:
        """Attempt against CAR: both axes 0-100 %, even with every rate at zero."""
        zero = grid(tables).with_columns(car=pl.lit(0.0), car_low=pl.lit(0.0), car_high=pl.lit(0.0))
        ax = plots_configs.plot_attempt_car(zero, condition).axes[0]
        assert ax.get_xlim() == (0.0, 100.0) and ax.get_ylim() == (0.0, 100.0)

    def test_two_configurations(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two configurations: no t interval leaves the scale (Figure 8 drawn from df = 1)."""
        labels = grid(tables)["config_label"].unique().sort().head(2).to_list()
        two = grid(tables).filter(pl.col("config_label").is_in(labels))
        fig = plots_configs.plot_conditions(two)
        for ax in fig.axes:
            for coll in ax.collections:
                for seg in coll.get_segments():
                    assert abs(seg[0][1] - seg[-1][1]) < 1e-9


class TestPlotThinkingAccuracy:
    def test_two_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two panels with one arrow per model pair."""
        fig = plots_configs.plot_thinking_accuracy(grid(tables))
        assert len(fig.axes) == 2 and len(fig.axes[0].texts) == 4


class TestConfigScatter:
    def test_markers(self) -> None:
        """Squares for thinking on, circles otherwise."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame(
            {"family": ["F", "F"], "thinking": ["on", "off"], "attempt": [0.9, 0.8], "car": [0.5, 0.4]}
        )
        plots_configs.config_scatter(ax, frame, x="attempt", y="car", colors={"F": "k"}, bars=False)
        assert len(ax.collections) == 2


class TestFamilyLegend:
    def test_entries(self) -> None:
        """One entry per family plus the thinking marker."""
        fig, ax = drawing.new_figure()
        plots_configs.family_legend(ax, {"A": "r", "B": "b"})
        assert len(ax.get_legend().get_texts()) == 3


class TestPlotAttemptCar:
    @pytest.mark.parametrize("condition", ["single", "iterative"])
    def test_points(self, tables: dict[str, pl.DataFrame], condition: str) -> None:
        """One marker per configuration (Figures 10 and 16)."""
        fig = plots_configs.plot_attempt_car(grid(tables), condition)
        assert fig.axes[0].get_xlabel().startswith("Answerable")


class TestPlotAttemptAccuracy:
    def test_axis(self, tables: dict[str, pl.DataFrame]) -> None:
        """Accuracy on the y axis."""
        assert "Accuracy" in plots_configs.plot_attempt_accuracy(grid(tables)).axes[0].get_ylabel()


class TestPlotCarActive:
    def test_log(self, tables: dict[str, pl.DataFrame]) -> None:
        """Parameters on a log axis."""
        fig = plots_configs.plot_car_active(analysis_models.model_points(grid(tables)), tables["associations"])
        assert fig.axes[0].get_xscale() == "log"


class TestPlotAccuracySize:
    def test_log(self, tables: dict[str, pl.DataFrame]) -> None:
        """Parameters on a log axis."""
        fig = plots_configs.plot_accuracy_size(analysis_models.model_points(grid(tables)), tables["associations"])
        assert fig.axes[0].get_xscale() == "log"


class TestPlotCarPerModel:
    def test_rows(self, tables: dict[str, pl.DataFrame]) -> None:
        """One row per model."""
        fig = plots_configs.plot_car_per_model(grid(tables))
        assert len(fig.axes[0].get_yticks()) == grid(tables)["model"].n_unique()


class TestPlotAccuracyPerModel:
    def test_three_series(self, tables: dict[str, pl.DataFrame]) -> None:
        """One series per condition."""
        assert len(plots_configs.plot_accuracy_per_model(grid(tables)).axes[0].collections) == 3


class TestPlotCarAccuracy:
    def test_title(self, tables: dict[str, pl.DataFrame]) -> None:
        """The title carries rho."""
        assert plots_configs.plot_car_accuracy(grid(tables), tables["associations"]).axes[0].get_title().startswith("ρ")


class TestPlotCarAccuracyAttempted:
    def test_axis(self, tables: dict[str, pl.DataFrame]) -> None:
        """Accuracy when attempted on the y axis."""
        fig = plots_configs.plot_car_accuracy_attempted(grid(tables), tables["associations"])
        assert "attempted" in fig.axes[0].get_ylabel()


class TestPlotTradeoff:
    def test_frontiers(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two frontier lines: no RAG and single-shot."""
        assert len(plots_configs.plot_tradeoff(grid(tables)).axes[0].lines) == 2


# --- figures_extra -----------------------------------------------------------------------------


class TestStackedShares:
    def test_sums(self) -> None:
        """Three stacked bars per row ending at 100%."""
        fig, ax = drawing.new_figure()
        frame = pl.DataFrame({"share_abstain": [0.2], "share_deny": [0.3], "share_answer": [0.5]})
        plots_extra.stacked_shares(ax, frame, ["x"])
        last = ax.patches[-1]
        assert last.get_x() + last.get_width() == pytest.approx(100.0)


class TestPlotFamilyLabels:
    def test_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """One panel per condition."""
        assert len(plots_extra.plot_family_labels(tables["family_label_shares"]).axes) == 3


class TestPlotModelLabels:
    def test_rows(self, tables: dict[str, pl.DataFrame]) -> None:
        """One bar row per configuration."""
        fig = plots_extra.plot_model_labels(grid(tables))
        assert len(fig.axes[0].patches) == 3 * 12


class TestPlotLeakage:
    def test_rows(self, tables: dict[str, pl.DataFrame]) -> None:
        """One row per configuration, two panels."""
        fig = plots_extra.plot_leakage(tables["leakage_model"], tables["facts"])
        assert len(fig.axes) == 2 and len(fig.axes[0].get_yticks()) == 12


class TestPlotJudgePairs:
    def test_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """Three judges give three pair panels."""
        assert len(plots_extra.plot_judge_pairs(tables["judge_run_accuracy"]).axes) == 3


class TestPlotKChoice:
    def test_missing_retrieval(self, tables: dict[str, pl.DataFrame]) -> None:
        """Without logged retrieval hit rates the top panel says so."""
        fig = plots_extra.plot_k_choice(tables["ablation_k"])
        assert "not in this run" in fig.axes[0].texts[0].get_text()

    def test_full_sweeps_only(self, tables: dict[str, pl.DataFrame]) -> None:
        """Middle and bottom panels draw only the configurations run at every k."""
        partial = tables["ablation_k"].filter(~((pl.col("model") == "syn-00") & (pl.col("k") == 10)))
        fig = plots_extra.plot_k_choice(partial)
        assert gray_lines(fig, 1) == gray_lines(fig, 2) == 7


class TestPlotPipelinesCarAccuracy:
    def test_panels(self, tables: dict[str, pl.DataFrame]) -> None:
        """CAR and accuracy panels."""
        assert len(plots_extra.plot_pipelines_car_accuracy(tables["ablation_pipelines"]).axes) == 2


class TestPlotScenario:
    def test_lines(self, tables: dict[str, pl.DataFrame]) -> None:
        """One gray line per configuration in each panel."""
        fig = plots_extra.plot_scenario(tables["ablation_scenario"])
        assert gray_lines(fig) == 8  # 12 configurations: 8 models, all in the ablations


class TestPlotScenarioOverlap:
    def test_bars(self) -> None:
        """One bar per pipeline, in the paper's order."""
        frame = pl.DataFrame({"pipeline": ["dense", "hybrid"], "share": [0.6, 0.7]})
        fig = plots_extra.plot_scenario_overlap(frame)
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["Dense", "Hybrid"]


class TestPlotTransitions:
    def test_rows(self, tables: dict[str, pl.DataFrame]) -> None:
        """Two bars per model and condition."""
        fig = plots_extra.plot_transitions(tables["thinking_transitions"], tables["facts"])
        assert len(fig.axes[0].patches) == 2 * 4
