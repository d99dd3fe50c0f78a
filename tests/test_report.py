"""Tests of the paper stage (report, report_tables, report_numbers): where it writes, what it skips,
the macros, the LaTeX tables, and the PDF build."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import analyze as analysis
from declinecraft.core import config
from declinecraft.evaluation import metrics
from declinecraft.paper import stage as report
from declinecraft.paper import numbers as report_numbers
from declinecraft.paper import tables as report_tables
from tests.support import synthetic
from declinecraft.core.config import VerifyParams

ROOT = Path(__file__).resolve().parents[1]
HAS_TEX = shutil.which("latexmk") is not None


def project(tmp_path: Path, judged: pl.DataFrame | None, *, extra: str = "") -> config.RunConfig:
    """A throwaway project with the real params and paper source; optionally a judged table."""
    (tmp_path / "params").mkdir()
    (tmp_path / "paper").mkdir()
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "paper" / "main.tex", tmp_path / "paper" / "main.tex")
    for name in ("default.yaml", "models.yaml", "paper_reported.yaml"):
        shutil.copy(ROOT / "params" / name, tmp_path / "params" / name)
    (tmp_path / "params" / "nopdf.yaml").write_text("base: default\npaper:\n  build_pdf: false\n" + extra)
    cfg = config.load(tmp_path / "params" / "default.yaml")
    if judged is not None:
        cfg.stage_dir("judge").mkdir(parents=True)
        judged.write_parquet(cfg.stage_dir("judge") / "judged.parquet")
    return cfg


@pytest.fixture(scope="module")
def results() -> dict[str, pl.DataFrame]:
    """Analysis tables of a small synthetic run (with ablations)."""
    judged = synthetic.synthetic_judged(9, 80, seed=4, ablations=True)
    facts = synthetic.synthetic_models(9, seed=4)
    out = analysis.analyze(judged, facts, analysis.Design(n_resamples=50))
    out["facts"] = analysis._with_derived_facts(facts)
    return out


# --- report -------------------------------------------------------------------------------------


class TestOutputDirs:
    def test_default_and_other(self, tmp_path: Path) -> None:
        """The default run writes figures/ and paper/; others write under outputs/<run>/."""
        cfg = project(tmp_path, None)
        assert report.output_dirs(cfg) == (tmp_path / "figures", tmp_path / "paper")
        other = config.load(tmp_path / "params" / "nopdf.yaml")
        assert report.output_dirs(other) == (tmp_path / "outputs/nopdf/figures", tmp_path / "outputs/nopdf/paper")


class TestWriteFigures:
    def test_skips_with_reasons(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """Drawn figures get files; the others a reason naming the figure; stale files go."""
        (tmp_path / "fig99_stale.png").write_text("old")
        rows = report.write_figures(results, tmp_path, formats=("png",), dpi=40)
        skipped = {r["number"]: r["reason"] for r in rows if r["reason"]}
        assert set(skipped) == {7, 24} and skipped[7].startswith("Figure 7")
        assert (tmp_path / "fig08_conditions.png").is_file() and not (tmp_path / "fig99_stale.png").exists()

    def test_no_input(self, tmp_path: Path) -> None:
        """Without results only the pipeline diagram is drawn."""
        rows = report.write_figures({}, tmp_path, formats=("png",), dpi=40, no_input="judge stage missing")
        assert [r["number"] for r in rows if not r["reason"]] == [1]


class TestWriteTables:
    def test_files(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """Every fillable table is a .tex file; Table 9 and 10 give reasons here."""
        cfg = project(tmp_path, None)
        rows = report.write_tables(results, cfg, tmp_path / "tables")
        reasons = {r["name"]: r["reason"] for r in rows}
        assert reasons["table09"] and reasons["table10"] and not reasons["table08"]
        assert (tmp_path / "tables" / "table12.tex").is_file()


class TestSkippedTex:
    def test_macro(self) -> None:
        """A reason becomes a csname macro, escaped for LaTeX."""
        text = report.skipped_tex([{"name": "fig02_x", "reason": "needs k_sweep & 50%"}])
        assert "\\csname dcr@fig02_x\\endcsname{needs k\\_sweep \\& 50\\%}" in text


class TestReportedFacts:
    def test_reads(self, tmp_path: Path) -> None:
        """The paper's facts are read by key."""
        assert report.reported_facts(project(tmp_path, None))["car_mean_single_shot"]["value"] == 56.4


class TestWriteNumbers:
    def test_files(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """numbers.tex, the reported table and numbers.csv with reasons are written."""
        cfg = project(tmp_path, None)
        numbers = report.write_numbers(results, cfg, tmp_path / "paper", tmp_path / "stage", "")
        assert (tmp_path / "paper" / "numbers.tex").is_file() and (tmp_path / "paper" / "tables" / "reported.tex").is_file()
        assert numbers.filter(pl.col("macro") == "CARsingleMean")["text"][0] != "n/a"


class TestBuildPdf:
    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_error_lines(self, tmp_path: Path) -> None:
        """A LaTeX error fails with the log's first error line and leaves no PDF or junk."""
        (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}\n")
        with pytest.raises(report.PaperBuildError, match="Undefined control sequence"):
            report.build_pdf(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["main.tex"]

    def test_no_latexmk(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without latexmk the build is skipped (None), not failed."""
        monkeypatch.setattr(shutil, "which", lambda _: None)
        assert report.build_pdf(tmp_path) is None


class TestRunStage:
    def test_no_input(self, tmp_path: Path) -> None:
        """Before the judge stage exists, the paper stage writes n/a macros and skip reasons."""
        cfg = config.load(project(tmp_path, None).root / "params" / "nopdf.yaml")
        analysis.run_stage(cfg)
        out = report.run_stage(cfg)
        assert out["pdf"] is None and out["numbers"].filter(pl.col("macro") == "CARsingleMean")["text"][0] == "n/a"
        assert (tmp_path / "outputs/nopdf/08_paper/skipped.csv").is_file()
        assert (tmp_path / "outputs/nopdf/paper/tables/table11.tex").is_file()

    @pytest.mark.slow
    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_pdf(self, tmp_path: Path) -> None:
        """The default run of a synthetic judged table builds paper/main.pdf."""
        cfg = project(tmp_path, synthetic.synthetic_judged(6, 60, ablations=True))
        analysis.run_stage(cfg)
        out = report.run_stage(cfg)
        assert out["pdf"] == tmp_path / "paper" / "main.pdf" and out["pdf"].stat().st_size > 10_000
        assert not list((tmp_path / "paper").glob("*.aux"))


# --- report_tables ------------------------------------------------------------------------------


def published_row() -> pl.DataFrame:
    """Responses reproducing Table 2's first row: attempt 668/700, CAR 242/300."""
    q = [(f"a{i}", True, "ANSWER" if i < 668 else "ABSTAIN") for i in range(700)]
    q += [(f"u{i}", False, "ABSTAIN" if i < 242 else "DENY") for i in range(300)]
    frame = pl.DataFrame(q, schema=["question_id", "answerable", "label"], orient="row")
    return frame.with_columns(model=pl.lit("gemma-4-26b-a4b"), thinking=pl.lit("off"), condition=pl.lit("single"),
                              budget_exhausted=pl.lit(False), accuracy=pl.lit(0.7))  # fmt: skip


class TestBuild:
    def test_published_table2(self) -> None:
        """Table 2's published row: attempt 95.4 [93.6, 96.7], CAR 80.7 [75.8, 84.7], Bal. F1 88.9."""
        results = analysis.analyze(published_row(), design=analysis.Design(n_resamples=20))
        row = report_tables.build(results)["table02"].row(0, named=True)
        got = [round(row[c], 1) for c in ("attempt", "attempt_low", "attempt_high", "car", "car_low", "car_high", "bal_f1")]
        assert got == [95.4, 93.6, 96.7, 80.7, 75.8, 84.7, 88.9]
        assert metrics.balanced_f1(0.954, 0.807) == pytest.approx(0.889, abs=5e-4)

    def test_reasons(self) -> None:
        """Without results every table but 12 is a reason string; none raises."""
        out = report_tables.build({})
        assert all(isinstance(v, str) for v in out.values())


class TestToLatex:
    def test_bold_best(self, results: dict[str, pl.DataFrame]) -> None:
        """The best CAR of Table 2 is bold and the header row is there."""
        tex = report_tables.to_latex("table02", report_tables.build(results)["table02"])
        assert "\\toprule" in tex and tex.count("\\textbf{") >= 5


class TestTexEscape:
    def test_superscript(self) -> None:
        """Role marks become a math superscript; underscores are escaped."""
        assert report_tables.tex_escape("a_b^{GR}") == "a\\_b$^{\\mathrm{GR}}$"


class TestTable12:
    def test_roles(self, tmp_path: Path) -> None:
        """The run's embedder, generator and judges."""
        cfg = project(tmp_path, None)
        out = report_tables.table12(cfg)
        assert out["model"][0] == cfg.index.embedder and out.height >= 7


# --- report_numbers -----------------------------------------------------------------------------


class TestCompute:
    def test_reasons(self, results: dict[str, pl.DataFrame]) -> None:
        """Defined numbers print; undefined ones say n/a with a reason."""
        numbers = report_numbers.compute(results)
        row = numbers.filter(pl.col("macro") == "CprePages").row(0, named=True)
        assert row["text"] == "n/a" and "corpus_stats" in row["reason"]
        assert numbers.filter(pl.col("macro") == "SigUpSingle")["text"][0] != "n/a"

    def test_benchmark_sizes(self, results: dict[str, pl.DataFrame]) -> None:
        """The benchmark's size per half comes from the verify stage's fates (the kept candidates),
        apart from how many questions were evaluated."""
        fates = pl.DataFrame({"generator": ["g"] * 4, "answerable": [True, True, False, False],
                              "fate": ["kept", "rejected_answers", "kept", "rejected_stated"], "n": [6, 10, 8, 1]})  # fmt: skip
        numbers = report_numbers.compute(results | {"audit_fates": fates})
        text = dict(zip(numbers["macro"], numbers["text"], strict=True))
        assert (text["BenchAnswerable"], text["BenchUnanswerable"]) == ("6", "8")
        assert text["NAnswerable"] != "n/a"

    def test_no_input(self) -> None:
        """Without input every number is n/a with the given reason."""
        numbers = report_numbers.compute({}, no_input="no judged table")
        assert set(numbers["text"]) == {"n/a"} and numbers["reason"].str.contains("no judged table").all()

    def test_unique_macros(self) -> None:
        """Macro names are unique and letters only."""
        names = [n.macro for n in report_numbers.NUMBERS]
        assert len(names) == len(set(names)) and all(n.isalpha() for n in names)


class TestFmt:
    @pytest.mark.parametrize(("value", "kind", "text"), [(0.5642, "pct", "56.4"), (-0.1, "pts", "\\textminus 10.0"),
                                                          (0.6, "rho", "+0.60"), (0.0004, "p", "<0.001"), (3404, "int", "3{,}404")])
    def test_kinds(self, value: float, kind: str, text: str) -> None:
        """Percent, signed points, rho, p and integers print as in the paper."""
        assert report_numbers.fmt(value, kind) == text


class TestNumbersTex:
    def test_newcommand(self) -> None:
        """One newcommand per number; n/a lines carry their reason as a comment."""
        tex = report_numbers.numbers_tex(report_numbers.compute({}, no_input="x"))
        assert "\\newcommand{\\CARsingleMean}{n/a}  % mean CAR with single-shot RAG -- n/a: no condition_means results in this run (x)" in tex


class TestReportedVsReproduced:
    def test_rows(self) -> None:
        """Each headline number appears beside its reported value, as a macro."""
        numbers = report_numbers.compute({}, no_input="x")
        tex = report_numbers.reported_vs_reproduced(numbers, {"car_mean_single_shot": {"value": 56.4, "unit": "percent"}})
        assert "56.4 & \\CARsingleMean" in tex


class TestConfigMacros:
    def test_settings(self, tmp_path: Path) -> None:
        """Run settings and the paper's BM25 constant are macros."""
        out = report_numbers.config_macros(project(tmp_path, None), {"bm25_k1": {"value": 1.5}})
        values = dict(zip(out["macro"], out["text"], strict=True))
        assert values["BMkOne"] == "1.2" and values["PaperBMkOne"] == "1.5" and values["RunName"] == "default"

    def test_self_verification_noted(self, tmp_path: Path) -> None:
        """The reproduction notes say when the verifier also generated the questions."""
        cfg = project(tmp_path, None)
        notes = {}
        for verifier in (cfg.generate.generator, "someone-else"):
            cfg = dataclasses.replace(cfg, blocks=cfg.blocks | {"verify": VerifyParams(verifier=verifier,
                                                                                       self_verification=True)})
            out = report_numbers.config_macros(cfg, {})
            notes[verifier] = dict(zip(out["macro"], out["text"], strict=True))["VerifierNote"]
        assert "self-verification" in notes[cfg.generate.generator] and notes["someone-else"] == ""
