"""Tests of the paper stage (stage, outputs, pdf, tables, latex, numbers, number_sources,
run_settings): where it writes, what it skips, the macros, the LaTeX tables, and the PDF build."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from tests.support import synthetic

from declinecraft.analysis import analyze as analysis
from declinecraft.analysis import paper_tables
from declinecraft.analysis import stage as analysis_stage
from declinecraft.core import config
from declinecraft.core.config import VerifyParams
from declinecraft.paper import figures, latex, outputs, pdf, run_settings
from declinecraft.paper import numbers as report_numbers
from declinecraft.paper import stage as report
from declinecraft.paper import tables as report_tables

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
    out["facts"] = analysis.with_derived_facts(facts)
    return out


# --- outputs ------------------------------------------------------------------------------------


class TestOutputDirs:
    def test_default_and_other(self, tmp_path: Path) -> None:
        """The default run writes figures/ and paper/; others write under outputs/<run>/."""
        cfg = project(tmp_path, None)
        assert outputs.output_dirs(cfg) == (tmp_path / "figures", tmp_path / "paper")
        other = config.load(tmp_path / "params" / "nopdf.yaml")
        assert outputs.output_dirs(other) == (tmp_path / "outputs/nopdf/figures", tmp_path / "outputs/nopdf/paper")


class TestRemoveStale:
    def test_only_generated_names(self, tmp_path: Path) -> None:
        """Generated files the run did not write go; kept ones and hand-written files stay."""
        for name in ("table02.tex", "table03.tex", "reported.tex"):
            (tmp_path / name).write_text("x")
        outputs.remove_stale(tmp_path, re.compile(r"table\d\d\.tex"), {"table02.tex"})
        assert sorted(p.name for p in tmp_path.iterdir()) == ["reported.tex", "table02.tex"]

    def test_missing_folder(self, tmp_path: Path) -> None:
        """A folder that does not exist yet is nothing to clean."""
        outputs.remove_stale(tmp_path / "absent", re.compile("x"), set())


# --- stage --------------------------------------------------------------------------------------


class TestWriteTables:
    def test_files(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """Every fillable table is a .tex file; Table 9 and 10 give reasons here; stale ones go."""
        cfg = project(tmp_path, None)
        (tmp_path / "tables").mkdir()
        (tmp_path / "tables" / "table09.tex").write_text("stale")
        rows = report_tables.write_tables(results, cfg, tmp_path / "tables")
        reasons = {r["name"]: r["reason"] for r in rows}
        assert reasons["table09"] and reasons["table10"] and not reasons["table08"]
        assert (tmp_path / "tables" / "table12.tex").is_file() and not (tmp_path / "tables" / "table09.tex").exists()


class TestSkippedTex:
    def test_macro(self) -> None:
        """A reason becomes a csname macro, escaped for LaTeX."""
        text = report.skipped_tex([{"name": "fig02_x", "reason": "needs k_sweep & 50%"}])
        assert "\\csname dcr@fig02_x\\endcsname{needs k\\_sweep \\& 50\\%}" in text

    def test_too_few_points(self) -> None:
        """A figure drawn from too few points gets its dcs@ macro (listed small); others get none."""
        text = report.skipped_tex(
            [
                {"name": "fig12_x", "reason": "", "small": "Drawn from 2 models"},
                {"name": "fig08_x", "reason": "", "small": ""},
            ]
        )
        assert "\\csname dcs@fig12_x\\endcsname{Drawn from 2 models}" in text and "dcs@fig08_x" not in text


class TestReportedFacts:
    def test_reads(self, tmp_path: Path) -> None:
        """The paper's facts are read by key."""
        assert report.reported_facts(project(tmp_path, None))["car_mean_single_shot"]["value"] == 56.4


class TestWriteNumbers:
    def test_files(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """numbers.tex, the reported table and numbers.csv with reasons are written."""
        cfg = project(tmp_path, None)
        numbers = report.write_numbers(results, cfg, tmp_path / "paper", tmp_path / "stage", "")
        assert (tmp_path / "paper" / "numbers.tex").is_file() and (
            tmp_path / "paper" / "tables" / "reported.tex"
        ).is_file()
        assert numbers.filter(pl.col("macro") == "CARsingleMean")["text"][0] != "n/a"
        assert pl.read_csv(tmp_path / "stage" / "numbers.csv").height == numbers.height


class TestReadResults:
    def test_missing_analysis(self, tmp_path: Path) -> None:
        """Without the analysis stage there is nothing to draw, and the reason says so."""
        found, reason = report.read_results(tmp_path)
        assert found == {} and reason == "the analysis stage has not run"

    def test_no_input_keeps_setup_tables(self, tmp_path: Path) -> None:
        """Without judged responses only facts and upstream copies are used, not stale results."""
        (tmp_path / "status.json").write_text('{"status": "no_input", "reason": "no judge"}')
        for name in ("facts", "corpus_stats", "main_grid"):
            pl.DataFrame({"x": [1]}).write_csv(tmp_path / f"{name}.csv")
        found, reason = report.read_results(tmp_path)
        assert sorted(found) == ["corpus_stats", "facts"] and reason == "no judge"


class TestRunStage:
    def test_no_input(self, tmp_path: Path) -> None:
        """Before the judge stage exists, the paper stage writes n/a macros and skip reasons."""
        cfg = config.load(project(tmp_path, None).root / "params" / "nopdf.yaml")
        analysis_stage.run(cfg)
        out = report.run(cfg)
        assert isinstance(out, report.PaperResult) and out.pdf is None
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
        cfg = project(tmp_path, synthetic.synthetic_judged(6, 60, ablations=True))
        analysis_stage.run(cfg)
        out = report.run(cfg)
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
        project(tmp_path, None)
        (tmp_path / "params" / "small.yaml").write_text(
            "base: default\npaper:\n  figure_formats: [png]\nanalysis:\n  min_n: 50\n"
        )
        cfg = config.load(tmp_path / "params" / "small.yaml")
        cfg.stage_dir("judge").mkdir(parents=True)
        synthetic.synthetic_judged(6, 60).write_parquet(cfg.stage_dir("judge") / "judged.parquet")
        analysis_stage.run(cfg)
        out = report.run(cfg)
        assert out.pdf is not None and out.pdf.is_file() and not list(out.figures.glob("*.pdf"))
        listed = pl.read_csv(out.folder / "figure_checks.csv").filter(pl.col("too_few_points").fill_null("") != "")
        assert set(listed["name"]) and set(listed["name"]) <= set(figures.ASSOCIATIONS)


# --- pdf ----------------------------------------------------------------------------------------


class TestBuildPdf:
    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_error_lines(self, tmp_path: Path) -> None:
        """A LaTeX error fails with the log's first error line and leaves no PDF or junk."""
        (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}\n")
        with pytest.raises(pdf.PaperBuildError, match="Undefined control sequence"):
            pdf.build_pdf(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["main.tex"]

    def test_no_latexmk(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without latexmk the build is skipped (None), not failed."""
        monkeypatch.setattr(shutil, "which", lambda _: None)
        assert pdf.build_pdf(tmp_path) is None


# --- tables -------------------------------------------------------------------------------------


class TestToLatex:
    def test_bold_best(self, results: dict[str, pl.DataFrame]) -> None:
        """The best CAR of Table 2 is bold and the header row is there."""
        tex = report_tables.to_latex("table02", paper_tables.build(results)["table02"])
        assert "\\toprule" in tex and tex.count("\\textbf{") >= 5

    def test_escapes_cells(self) -> None:
        """Text cells are escaped; role marks become a superscript; numbers keep one decimal."""
        frame = pl.DataFrame({"role": ["Judge {A} ~ 100%"], "model": ["m_1^{GR}"]})
        tex = report_tables.to_latex("table12", frame)
        assert "Judge \\{A\\} \\textasciitilde{} 100\\% & m\\_1$^{\\mathrm{GR}}$ \\\\" in tex

    def test_bold_per_model(self) -> None:
        """Tables 6 and 7 bold the best value of each model in each column, not of the whole column."""
        frame = pl.DataFrame(
            {
                "model": ["A", "A", "B", "B"],
                "k": [1, 5, 1, 5],
                "car": [50.0, 60.0, 20.0, 10.0],
                "accuracy": [70.0, 65.0, 30.0, 35.0],
                "bal_f1": [1.0, 2.0, 3.0, float("nan")],
            }
        )
        body = report_tables.to_latex("table06", frame).splitlines()[5:9]
        assert body == [
            "A & 1 & 50.0 & \\textbf{70.0} & 1.0 \\\\",
            "A & 5 & \\textbf{60.0} & 65.0 & \\textbf{2.0} \\\\",
            "B & 1 & \\textbf{20.0} & 30.0 & \\textbf{3.0} \\\\",
            "B & 5 & 10.0 & \\textbf{35.0} & -- \\\\",
        ]

    def test_unknown_table(self) -> None:
        """A table without a spec gets one column per frame column, headers escaped."""
        tex = report_tables.to_latex("table99", pl.DataFrame({"a_b": [1.25], "c": ["x&y"]}))
        assert "a\\_b & c \\\\" in tex and "1.2 & x\\&y \\\\" in tex


# --- latex --------------------------------------------------------------------------------------


class TestEscape:
    @pytest.mark.parametrize(
        ("text", "tex"),
        [
            ("\\", "\\textbackslash{}"),
            ("{", "\\{"),
            ("}", "\\}"),
            ("$", "\\$"),
            ("&", "\\&"),
            ("#", "\\#"),
            ("^", "\\textasciicircum{}"),
            ("_", "\\_"),
            ("~", "\\textasciitilde{}"),
            ("%", "\\%"),
        ],
    )
    def test_each_special(self, text: str, tex: str) -> None:
        """Every special character of running text prints as itself."""
        assert latex.escape(f"a{text}b") == f"a{tex}b"

    def test_single_pass(self) -> None:
        """The braces an escape inserts are not escaped again, and plain text is untouched."""
        assert latex.escape("\\{") == "\\textbackslash{}\\{"
        assert latex.escape("Qwen3 30B-A3B (thinking), 1.5") == "Qwen3 30B-A3B (thinking), 1.5"

    def test_none_and_numbers(self) -> None:
        """None is empty; other values are printed first."""
        assert latex.escape(None) == "" and latex.escape(2.5) == "2.5"


class TestEscapeMarked:
    def test_superscript(self) -> None:
        """Role marks become a math superscript; underscores are escaped."""
        assert latex.escape_marked("a_b^{GR}") == "a\\_b$^{\\mathrm{GR}}$"

    def test_braces_elsewhere(self) -> None:
        """Only a trailing ``^{...}`` is a mark; other braces and carets are escaped."""
        assert latex.escape_marked("a^{b} c") == "a\\textasciicircum{}\\{b\\} c"
        assert latex.escape_marked("x {y}") == "x \\{y\\}"


class TestThousands:
    def test_groups(self) -> None:
        """Counts get braced commas between groups of three digits."""
        assert (latex.thousands(3404), latex.thousands(999), latex.thousands(1234567)) == (
            "3{,}404",
            "999",
            "1{,}234{,}567",
        )


# --- numbers ------------------------------------------------------------------------------------


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
        fates = pl.DataFrame(
            {
                "generator": ["g"] * 4,
                "answerable": [True, True, False, False],
                "fate": ["kept", "rejected_answers", "kept", "rejected_stated"],
                "n": [6, 10, 8, 1],
            }
        )
        numbers = report_numbers.compute(results | {"audit_fates": fates})
        text = dict(zip(numbers["macro"], numbers["text"], strict=True))
        assert (text["BenchAnswerable"], text["BenchUnanswerable"]) == ("6", "8")
        assert text["NAnswerable"] != "n/a"

    def test_text_escaped(self, results: dict[str, pl.DataFrame]) -> None:
        """A model name quoted in the text is escaped for LaTeX (braces and tildes included)."""
        leak = results["leakage_model"].head(1).with_columns(model=pl.lit("m_{x}~1"), accuracy=pl.lit(0.5))
        numbers = report_numbers.compute({"leakage_model": leak})
        text = dict(zip(numbers["macro"], numbers["text"], strict=True))
        assert text["LeakTopModel"] == "m\\_\\{x\\}\\textasciitilde{}1" and text["LeakTopAcc"] == "50.0"

    def test_small_n_caveat(self, results: dict[str, pl.DataFrame]) -> None:
        """A mean from fewer questions than the threshold prints with its n and the caveat (and
        \\pc keeps its percent sign on the value); from enough questions, as the plain number."""
        plain = report_numbers.compute(results).filter(pl.col("macro") == "CARnoragMean").row(0, named=True)
        assert plain["text"] == report_numbers.fmt(plain["value"], "pct") and plain["small"] == ""
        strict = (
            report_numbers.compute(results, min_n=10_000).filter(pl.col("macro") == "CARnoragMean").row(0, named=True)
        )
        n = int(strict["n"])
        assert strict["text"] == f"\\dcsmall{{{plain['text']}}}{{{n} questions}}"
        assert strict["small"] == f"n = {n} questions, not interpretable at this n" and strict["reason"] == ""

    def test_small_n_accuracy(self, results: dict[str, pl.DataFrame]) -> None:
        """Accuracy scored on one answerable question is no finding: "n = 1 question"."""
        grid = results["main_grid"].with_columns(accuracy_n=pl.lit(1, pl.Int64))
        row = (
            report_numbers.compute({**results, "main_grid": grid})
            .filter(pl.col("macro") == "AccSingleMean")
            .row(0, named=True)
        )
        assert row["text"].startswith("\\dcsmall{") and row["text"].endswith("{1 question}")

    def test_small_n_style_auc(self) -> None:
        """The style AUC from two questions a half carries the caveat (an AUC ranks pairs across the
        halves, so the smaller half is its n); from thirty a half it does not."""

        def auc(n: int) -> str:
            style = pl.DataFrame(
                {
                    "variant": ["style_only", "full"],
                    "auc": [0.25, 0.4],
                    "n_answerable": [n // 2] * 2,
                    "n_unanswerable": [n - n // 2] * 2,
                }
            )
            numbers = report_numbers.compute({"audit_style": style})
            return numbers.filter(pl.col("macro") == "StyleAUCStyle")["text"][0]

        assert auc(4) == "\\dcsmall{0.25}{2 questions in the smaller half}" and auc(60) == "0.25"

    def test_small_n_p_kept(self, results: dict[str, pl.DataFrame]) -> None:
        """A p value (printed in math mode) keeps its text; its n is recorded for the words."""
        row = (
            report_numbers.compute(results, min_n=10_000)
            .filter(pl.col("macro") == "PCARSingleMinusNorag")
            .row(0, named=True)
        )
        assert "dcsmall" not in row["text"] and row["n"] is not None and "not interpretable" in row["small"]

    def test_no_input(self) -> None:
        """Without input every number is n/a with the given reason."""
        numbers = report_numbers.compute({}, no_input="no judged table")
        assert set(numbers["text"]) == {"n/a"} and numbers["reason"].str.contains("no judged table").all()

    def test_unique_macros(self) -> None:
        """Macro names are unique and letters only."""
        names = [n.macro for n in report_numbers.NUMBERS]
        assert len(names) == len(set(names)) and all(n.isalpha() for n in names)


class TestFmt:
    @pytest.mark.parametrize(
        ("value", "kind", "text"),
        [
            (0.5642, "pct", "56.4"),
            (-0.1, "pts", "\\textminus 10.0"),
            (0.6, "rho", "+0.60"),
            (0.0004, "p", "<0.001"),
            (3404, "int", "3{,}404"),
        ],
    )
    def test_kinds(self, value: float, kind: str, text: str) -> None:
        """Percent, signed points, rho, p and integers print as in the paper."""
        assert report_numbers.fmt(value, kind) == text


class TestNumbersTex:
    def test_newcommand(self) -> None:
        """One newcommand per number; n/a lines carry their reason as a comment."""
        tex = report_numbers.numbers_tex(report_numbers.compute({}, no_input="x"))
        assert (
            "\\newcommand{\\CARsingleMean}{n/a}  % mean CAR with single-shot RAG -- n/a: no condition_means results in this run (x)"
            in tex
        )


class TestReportedVsReproduced:
    def test_rows(self) -> None:
        """Each headline number appears beside its reported value, as a macro."""
        numbers = report_numbers.compute({}, no_input="x")
        tex = report_numbers.reported_vs_reproduced(
            numbers, {"car_mean_single_shot": {"value": 56.4, "unit": "percent"}}
        )
        assert "56.4 & \\CARsingleMean" in tex

    def test_spans_pages(self) -> None:
        """Table R is a longtable whose header repeats on every page (a hundred rows fit no page)."""
        numbers = report_numbers.compute({}, no_input="x")
        tex = report_numbers.reported_vs_reproduced(
            numbers, {"car_mean_single_shot": {"value": 56.4, "unit": "percent"}}
        )
        assert "\\begin{longtable}" in tex and "\\end{longtable}" in tex and "tabular" not in tex
        assert tex.count("Quantity & Paper & This run") == 2 and "\\endhead" in tex and "\\label{tab:reported}" in tex

    def test_text_value_escaped(self) -> None:
        """A reported value that is text is escaped; a negative number gets a real minus."""
        numbers = report_numbers.compute({}, no_input="x")
        tex = report_numbers.reported_vs_reproduced(
            numbers, {"car_mean_no_rag": {"value": "~40%"}, "car_mean_single_shot": {"value": -2}}
        )
        assert "\\textasciitilde{}40\\% & \\CARnoragMean" in tex and "\\textminus 2 & \\CARsingleMean" in tex


# --- run_settings -------------------------------------------------------------------------------


class TestConfigMacros:
    def test_settings(self, tmp_path: Path) -> None:
        """Run settings and the paper's BM25 constant are macros; counts keep their braced commas."""
        out = run_settings.config_macros(project(tmp_path, None), {"bm25_k1": {"value": 1.5}})
        values = dict(zip(out["macro"], out["text"], strict=True))
        assert values["BMkOne"] == "1.2" and values["PaperBMkOne"] == "1.5" and values["RunName"] == "default"
        assert values["Resamples"] == "1{,}000" and out.schema == report_numbers.compute({}).schema

    def test_self_verification_noted(self, tmp_path: Path) -> None:
        """The reproduction notes say when the verifier also generated the questions."""
        cfg = project(tmp_path, None)
        notes = {}
        for verifier in (cfg.generate.generator, "someone-else"):
            cfg = dataclasses.replace(
                cfg, blocks=cfg.blocks | {"verify": VerifyParams(verifier=verifier, self_verification=True)}
            )
            out = run_settings.config_macros(cfg, {})
            notes[verifier] = dict(zip(out["macro"], out["text"], strict=True))["VerifierNote"]
        assert "self-verification" in notes[cfg.generate.generator] and notes["someone-else"] == ""


class TestNumbering:
    def test_original_numbers_and_view_series(self, root: Path) -> None:
        """main.tex prints the original's number for each of its figures and tables (figNN_*,
        tableNN), the views' own K and E series in order, and a letter for ours."""
        tex = (root / "paper" / "main.tex").read_text(encoding="utf-8")
        calls = re.findall(r"\\(?:dcfigure|dcfigurewide|dctable)(?:\[([^\]]*)\])?\{([A-Za-z0-9_]+)\}", tex)
        assert calls and all(number for number, _ in calls), "a figure or table without its printed number"
        series: dict[str, list[str]] = {"K": [], "E": []}
        for number, name in calls:
            if match := re.match(r"(?:fig|table)(\d\d)", name):
                assert number == str(int(match.group(1))), name
            elif name.startswith(("k2g_", "esb_")):
                series["K" if name.startswith("k2g_") else "E"].append(number)
            else:
                assert number.isalpha() and number.isupper(), name
        assert series == {k: [f"{k}{i}" for i in range(1, len(v) + 1)] for k, v in series.items()}
        assert len(series["K"]) == 4 and len(series["E"]) == 5
