"""Tests for declinecraft.paper.stage: what stage 10 skips, the facts it reports, its numbers, the whole stage."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import stage as analysis_stage
from declinecraft.core import config
from declinecraft.paper import figures, stage
from tests.support import judged_tables, synthetic

HAS_TEX = shutil.which("latexmk") is not None


class TestSkippedTex:
    def test_macro(self) -> None:
        """A reason becomes a csname macro, escaped for LaTeX."""
        text = stage.skipped_tex([{"name": "fig02_x", "reason": "needs k_sweep & 50%"}])
        assert "\\csname dcr@fig02_x\\endcsname{needs k\\_sweep \\& 50\\%}" in text

    def test_too_few_points(self) -> None:
        """A figure drawn from too few points gets its dcs@ macro (listed small); others get none."""
        text = stage.skipped_tex(
            [
                {"name": "fig12_x", "reason": "", "small": "Drawn from 2 models"},
                {"name": "fig08_x", "reason": "", "small": ""},
            ]
        )
        assert "\\csname dcs@fig12_x\\endcsname{Drawn from 2 models}" in text and "dcs@fig08_x" not in text


class TestReportedFacts:
    def test_reads(self, tmp_path: Path) -> None:
        """The paper's facts are read by key."""
        assert stage.reported_facts(judged_tables.project(tmp_path, None))["car_mean_single_shot"]["value"] == 56.4


class TestWriteNumbers:
    def test_files(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """numbers.tex, the reported table and numbers.csv with reasons are written."""
        cfg = judged_tables.project(tmp_path, None)
        numbers = stage.write_numbers(results, cfg, tmp_path / "paper", tmp_path / "stage", "")
        assert (tmp_path / "paper" / "numbers.tex").is_file() and (
            tmp_path / "paper" / "tables" / "reported.tex"
        ).is_file()
        assert numbers.filter(pl.col("macro") == "CARsingleMean")["text"][0] != "n/a"
        assert pl.read_csv(tmp_path / "stage" / "numbers.csv").height == numbers.height


class TestReadResults:
    def test_missing_analysis(self, tmp_path: Path) -> None:
        """Without the analysis stage there is nothing to draw, and the reason says so."""
        found, reason = stage.read_results(tmp_path)
        assert found == {} and reason == "the analysis stage has not run"

    def test_no_input_keeps_setup_tables(self, tmp_path: Path) -> None:
        """Without judged responses only facts and upstream copies are used, not stale results."""
        (tmp_path / "status.json").write_text('{"status": "no_input", "reason": "no judge"}')
        for name in ("facts", "corpus_stats", "main_grid"):
            pl.DataFrame({"x": [1]}).write_csv(tmp_path / f"{name}.csv")
        found, reason = stage.read_results(tmp_path)
        assert sorted(found) == ["corpus_stats", "facts"] and reason == "no judge"


class TestRunStage:
    def test_no_input(self, tmp_path: Path) -> None:
        """Before the judge stage exists, the paper stage writes n/a macros and skip reasons."""
        cfg = config.load(judged_tables.project(tmp_path, None).root / "params" / "nopdf.yaml")
        analysis_stage.run(cfg)
        out = stage.run(cfg)
        assert isinstance(out, stage.PaperResult) and out.pdf is None
        assert out.numbers.filter(pl.col("macro") == "CARsingleMean")["text"][0] == "n/a"
        assert "CARsingleMean" in out.missing_numbers()["macro"].to_list()
        assert (
            out.figures_drawn == 1
            and out.figure("fig01_pipeline") is not None
            and out.figure("fig08_conditions") is None
        )
        assert "skipped.csv" in out.files() and (tmp_path / "outputs/nopdf/paper/tables/table11.tex").is_file()
        with pytest.raises(dataclasses.FrozenInstanceError):
            out.pdf = Path("x")  # type: ignore[misc]

    @pytest.mark.slow
    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_pdf(self, tmp_path: Path) -> None:
        """The default run of a synthetic judged table builds paper/main.pdf, whose pages have no
        text off the page or over other text, and whose figures' checks (layout and captions) find
        nothing."""
        cfg = judged_tables.project(tmp_path, synthetic.synthetic_judged(6, 60, ablations=True))
        analysis_stage.run(cfg)
        out = stage.run(cfg)
        assert out.pdf == tmp_path / "paper" / "main.pdf" and out.pdf.stat().st_size > 10_000
        assert not list((tmp_path / "paper").glob("*.aux"))
        assert pl.read_csv(out.folder / "page_checks.csv")["problem"].to_list() == []
        checks = pl.read_csv(out.folder / "figure_checks.csv").filter(pl.col("problems").fill_null("") != "")
        assert checks.height == 0, checks.to_dicts()

    @pytest.mark.slow
    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_pdf_png_only_and_small(self, tmp_path: Path) -> None:
        """A run that draws PNG only, with a small-n rule above its model count, still builds its PDF:
        drawn figures come in as PNG, and the rank-correlation figures are listed small."""
        judged_tables.project(tmp_path, None)
        (tmp_path / "params" / "small.yaml").write_text(
            "base: default\npaper:\n  figure_formats: [png]\nanalysis:\n  min_n: 50\n"
        )
        cfg = config.load(tmp_path / "params" / "small.yaml")
        cfg.stage_dir("judge").mkdir(parents=True)
        synthetic.synthetic_judged(6, 60).write_parquet(cfg.stage_dir("judge") / "judged.parquet")
        analysis_stage.run(cfg)
        out = stage.run(cfg)
        assert out.pdf is not None and out.pdf.is_file() and not list(out.figures.glob("*.pdf"))
        listed = pl.read_csv(out.folder / "figure_checks.csv").filter(pl.col("too_few_points").fill_null("") != "")
        assert set(listed["name"]) and set(listed["name"]) <= set(figures.ASSOCIATIONS)
