"""Stage 10: figures, LaTeX tables, number macros and the PDF, from the analysis stage's CSVs.

Where a run writes (figures/ and paper/ are shared by every run, :mod:`~declinecraft.paper.outputs`):

* the ``default`` run writes ``figures/`` and ``paper/`` at the project root (``paper/tables/``,
  ``paper/numbers.tex``, ``paper/skipped.tex``, ``paper/main.pdf``);
* any other run writes ``outputs/<run>/figures/`` and ``outputs/<run>/paper/``, with a copy of
  ``paper/main.tex`` (and ``references.bib`` if present). ``main.tex`` finds its figures as
  ``../figures/<stem>.pdf``, which resolves in both layouts, so one hand-written source builds
  every run's paper without a run ever overwriting another's.

Every figure or table the run cannot fill is listed with its reason in
``outputs/<run>/10_paper/skipped.csv`` and in ``paper/skipped.tex`` (the paper prints the reason
where the figure would be). The run's health (failed calls, truncations, judge parse failures,
questions scored; :mod:`~declinecraft.paper.run_health`) becomes ``paper/tables/run_health.tex``
and ``paper/health_numbers.tex``, printed before the results. The analysis stage's claims check
becomes ``paper/tables/claims.tex``, printed after the abstract; every prompt template becomes
the appendix ``paper/tables/prompts.tex`` (:mod:`~declinecraft.paper.prompts_appendix`), and the
judged responses the qualitative examples ``paper/tables/examples.tex``
(:mod:`~declinecraft.paper.examples_appendix`). Every number is a macro in
``numbers.tex``; the n/a ones and their
reasons are in ``outputs/<run>/10_paper/numbers.csv``. The PDF is built with latexmk in a
temporary folder (:mod:`~declinecraft.paper.pdf`) when TeX is installed; otherwise the stage
says it skipped the PDF.

Checks, recorded and printed, never silently dropped: every drawn figure's layout and whether its
caption names what it draws (``figure_checks.csv``, :mod:`~declinecraft.paper.figure_check`; a
figure with a problem fails the stage once every output is written), and
every page of the built PDF (``page_checks.csv``, :mod:`~declinecraft.paper.page_check`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.analysis import claim_evidence, claims, inputs, results
from declinecraft.core import catalogue, paths, prompts, small_n
from declinecraft.core.config import RunConfig
from declinecraft.core.stage_writer import StageWriter
from declinecraft.paper import (
    build_date,
    caption_check,
    drawing,
    figure_check,
    machine,
    numbers,
    page_check,
    run_health,
    run_settings,
    wording,
)
from declinecraft.paper.claims_table import claims_tex
from declinecraft.paper.examples_appendix import examples_tex
from declinecraft.paper.figures import write_figures
from declinecraft.paper.latex import escape_marked
from declinecraft.paper.outputs import output_dirs, paper_writer
from declinecraft.paper.pdf import build_pdf
from declinecraft.paper.prompts_appendix import prompts_tex
from declinecraft.paper.tables import write_tables
from declinecraft.paper.views import view_macros, view_numbers_tex, write_view_figures

#: The stamp of a simulated run's figures and pages (``simulated: true``; main.tex's ``\SimulatedStamp``).
SIMULATED = "SIMULATED"


@dataclass(frozen=True)
class PaperResult:
    """What one run of the paper stage wrote, and what it had to leave out."""

    figures: Path
    """Folder of the figure files (``figures/`` or ``outputs/<run>/figures/``)."""
    paper: Path
    """Folder of the LaTeX outputs and the PDF (``paper/`` or ``outputs/<run>/paper/``)."""
    folder: Path
    """``outputs/<run>/10_paper/``, with ``skipped.csv`` and ``numbers.csv``."""
    pdf: Path | None
    """The built ``main.pdf``; None when the PDF was not built (switched off, or no latexmk)."""
    skipped: pl.DataFrame
    """Every figure and table the run cannot fill, with the reason (as in ``skipped.csv``)."""
    numbers: pl.DataFrame
    """Every number macro with its value, printed text and n/a reason (as in ``numbers.csv``)."""
    figures_drawn: int
    """How many figures were drawn."""
    tables_written: int
    """How many LaTeX tables were written."""

    def missing_numbers(self) -> pl.DataFrame:
        """The numbers printed as n/a, with what they are and why."""
        return self.numbers.filter(pl.col("reason") != "").select("macro", "what", "reason")

    def figure(self, stem: str, fmt: str = "png") -> Path | None:
        """The file of one figure (e.g. ``fig08_conditions``), or None when it was not drawn."""
        path = self.figures / f"{stem}.{fmt}"
        return path if path.is_file() else None

    def files(self) -> list[str]:
        """Names of the files in the stage folder."""
        return sorted(p.name for p in self.folder.iterdir())


def skipped_tex(status: list[dict[str, Any]]) -> str:
    """Macros the paper uses to print why a figure or table is missing (``\\dcreason{stem}``), why
    a drawn figure is too small to read (``dcs@stem``), and what each drawn figure drew for its
    caption to name (``dcd@stem/part``, read by ``\\dcdrawn``; :mod:`declinecraft.core.drawn_parts`)."""
    lines = ["% Generated by notebooks/10_paper.ipynb (declinecraft.paper.stage) -- do not edit."]
    for row in status:
        reason = escape_marked(row["reason"] or "")
        lines.append(f"\\expandafter\\def\\csname dcr@{row['name']}\\endcsname{{{reason}}}")
        if row.get("small"):  # drawn, but from too few points: printed, with its n, in the list (\\dcnotproduced)
            lines.append(f"\\expandafter\\def\\csname dcs@{row['name']}\\endcsname{{{escape_marked(row['small'])}}}")
        for part in row.get("drawn", []):  # what the figure drew, for its caption's \\dcdrawn
            lines.append(f"\\expandafter\\def\\csname dcd@{row['name']}/{part}\\endcsname{{}}")
    return "\n".join(lines) + "\n"


def reported_facts(cfg: RunConfig) -> dict[str, Any]:
    """The paper's reported numbers (``params/paper_reported.yaml``), keyed by name."""
    return claims.reported_facts(cfg.root)


def write_numbers(
    tables: Mapping[str, pl.DataFrame], cfg: RunConfig, paper_dir: Path, stage_dir: Path, no_input: str
) -> pl.DataFrame:
    """Write ``numbers.tex`` (numbers, run settings and the words chosen by them,
    :mod:`~declinecraft.paper.wording`), the reported-vs-reproduced table and ``numbers.csv``."""
    writer = paper_writer(paper_dir, stage_dir)
    rule = cfg.analysis.finding_n
    computed = numbers.compute(tables, no_input=no_input, min_n=rule)
    # A judge that failed the check set moves no accuracy number into a finding.
    computed = numbers.withhold_accuracy(computed, run_health.judges_not_interpretable(cfg))
    printed = pl.concat([computed, run_settings.config_macros(cfg, reported_facts(cfg))])
    thinking = no_input or claim_evidence.thinking_problem(tables, claim_evidence.context_from_config(cfg))
    said = wording.words(printed, alpha=cfg.analysis.alpha, min_n=cfg.analysis.min_n, thinking_problem=thinking)
    printed = pl.concat([printed, said])
    writer.text(catalogue.PAPER_NUMBERS_TEX, numbers.numbers_tex(printed))
    writer.text(catalogue.PAPER_TABLE, numbers.reported_vs_reproduced(printed, reported_facts(cfg)), "reported")
    where = writer.frame(catalogue.PAPER_NUMBERS, printed)
    missing = printed.filter(pl.col("reason") != "")
    if missing.height:
        print(f"paper: {missing.height} of {printed.height} numbers are n/a (reasons in {where})")
    return printed


def read_results(analysis_dir: Path) -> tuple[dict[str, pl.DataFrame], str]:
    """The analysis tables to draw from and, when the analysis had no input, why.

    Without judged responses only the tables that exist regardless (model facts, corpus
    statistics, audits) are used, so Tables 11 and 12 and the setup numbers still fill.
    """
    status_file = analysis_dir / catalogue.ANALYSIS_STATUS.name
    state = (
        json.loads(status_file.read_text())
        if status_file.is_file()
        else {"status": "missing", "reason": "the analysis stage has not run"}
    )
    tables = results.read_tables(analysis_dir) if state.get("status") == "ok" else {}
    if tables:
        return tables, ""
    keep = {"facts", "claims", *inputs.UPSTREAM.values(), *inputs.DERIVED}
    return {k: v for k, v in results.read_tables(analysis_dir).items() if k in keep}, state.get(
        "reason", "no analysis results"
    )


def _check_pages(pdf: Path | None, writer: StageWriter) -> list[str]:
    """The built PDF's page problems (:mod:`declinecraft.paper.page_check`), written to
    ``page_checks.csv``; a PDF that can't be read is one problem saying why, never a pass."""
    try:
        found = page_check.problems(pdf) if pdf else []
    except page_check.PageCheckError as exc:
        found = [f"not checked: {exc}"]
    writer.frame(catalogue.PAPER_PAGE_CHECKS, pl.DataFrame({"problem": found}, schema={"problem": pl.String}))
    return found


def run(cfg: RunConfig) -> PaperResult:
    """Figures, tables, macros and PDF of a run (see the module docstring for where they go)."""
    writer = StageWriter.of(cfg, "paper", own_run=True, float_precision=results.FLOAT_PRECISION)
    drawing.STAMP = SIMULATED if cfg.simulated else ""
    stage_dir = writer.folder
    stage_dir.mkdir(parents=True, exist_ok=True)
    writer.finish()
    fig_dir, paper_dir = output_dirs(cfg)
    paper_dir.mkdir(parents=True, exist_ok=True)
    sources = cfg.root / "paper"
    if paper_dir != sources:
        for copy in (catalogue.PAPER_MAIN_TEX, catalogue.PAPER_REFERENCES):
            if (sources / copy.name).is_file():
                shutil.copyfile(sources / copy.name, writer.path(copy))
    tables, no_input = read_results(cfg.stage_dir("analysis"))
    # Each figure is checked against its caption in the hand-written source (caption_check).
    source = sources / catalogue.PAPER_MAIN_TEX.name
    tex = source.read_text(encoding="utf-8") if source.is_file() else None
    captions = caption_check.captions(tex) if tex is not None else None
    # ... and printed in its place there (one column or the full width; figure_check.places).
    places = figure_check.places(tex) if tex is not None else None
    formats, dpi = tuple(cfg.paper.figure_formats), cfg.paper.figure_dpi
    min_points = small_n.threshold(cfg.analysis.min_n, cfg.analysis.alpha, floor=small_n.min_n_rank(cfg.analysis.alpha))
    # Every figure and the PDF carry the run's date, never the clock, so a replay is byte-identical.
    created = build_date.build_date(cfg.corpus)
    status = write_figures(
        tables,
        fig_dir,
        formats=formats,
        dpi=dpi,
        no_input=no_input,
        captions=captions,
        places=places,
        min_points=min_points,
        created=created,
    )
    status += write_view_figures(
        cfg, fig_dir, formats=formats, dpi=dpi, captions=captions, places=places, created=created
    )
    status += write_tables(tables, cfg, paper_dir / "tables")
    status.append(run_health.write(cfg, paper_dir, stage_dir))
    writer.text(catalogue.PAPER_TABLE, claims_tex(tables.get("claims")), "claims")
    writer.text(catalogue.PAPER_TABLE, prompts_tex(prompts.prompts_dir(cfg.root)), "prompts")
    judged_file = catalogue.JUDGE_JUDGED.path(cfg)
    judged = pl.read_parquet(judged_file) if judged_file.is_file() else None
    examples = examples_tex(
        judged,
        max_questions=cfg.paper.example_questions,
        max_chars=cfg.paper.example_chars,
        why_missing=f"{judged_file.relative_to(cfg.root)} is missing",
    )
    writer.text(catalogue.PAPER_TABLE, examples, "examples")
    # Layout problems of every drawn figure (figure_check): text off the figure, overlapping labels,
    # a rate axis beyond [0, 100], a caption that names not what is drawn; recorded, and printed
    # below, never silently dropped.
    # A figure drawn from too few points for its statistic is listed with its n (too_few_points).
    checks = [
        dict(name=r["name"], problems=r.pop("layout", ""), too_few_points=r.get("small", ""))
        for r in status
        if r["kind"] == "figure" and not r["reason"]
    ]
    schema = {"name": pl.String, "problems": pl.String, "too_few_points": pl.String}
    writer.frame(catalogue.PAPER_FIGURE_CHECKS, pl.DataFrame(checks, schema=schema))
    for r in status:
        r.pop("layout", None)
    writer.text(catalogue.PAPER_SKIPPED_TEX, skipped_tex(status))
    for r in status:
        r.pop("small", None)
        r.pop("drawn", None)
    skipped = pl.DataFrame(status).filter(pl.col("reason") != "")
    writer.frame(catalogue.PAPER_SKIPPED, skipped)
    printed = write_numbers(tables, cfg, paper_dir, stage_dir, no_input)
    views = view_macros(cfg)
    writer.text(catalogue.PAPER_VIEW_NUMBERS_TEX, view_numbers_tex(views))
    writer.frame(catalogue.PAPER_VIEW_NUMBERS, pl.DataFrame(views, schema=["macro", "value", "what"], orient="row"))
    machine.write(cfg, paper_dir)
    pdf = build_pdf(paper_dir, epoch=build_date.epoch(created)) if cfg.paper.build_pdf else None
    page_problems = _check_pages(pdf, writer)
    # For the last line of `make all` (declinecraft.runtime.system_packages.summary).
    why = "" if pdf else ("switched off (paper.build_pdf: false)" if not cfg.paper.build_pdf else "latexmk missing")
    # The PDF's path from the project's root, so two checkouts write the same file (a replay's included).
    where = paths.under(pdf, cfg.root).as_posix() if pdf else None
    writer.json(catalogue.PAPER_PDF_STATUS, {"pdf": where, "reason": why}, indent=None, end="")
    drawn = sum(r["kind"] == "figure" and not r["reason"] for r in status)
    written = sum(r["kind"] == "table" and not r["reason"] for r in status)
    print(f"paper: {drawn} figures, {written} tables, {skipped.height} skipped; PDF: {pdf or 'not built'}")
    for check in checks:
        if check["problems"]:
            print(f"paper: layout of {check['name']}: {check['problems']}")
    for problem in page_problems:
        print(f"paper: PDF {problem}")
    # A figure a reader would find wrong fails the stage, once everything is written to look at.
    figure_check.require_none(checks)
    return PaperResult(fig_dir, paper_dir, stage_dir, pdf, skipped, printed, drawn, written)
