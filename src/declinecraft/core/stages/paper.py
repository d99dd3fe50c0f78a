"""10_paper: every figure, table and number macro, and the PDF."""

from __future__ import annotations

from declinecraft.core.declaration import (
    EVERY_MODEL,
    OTHER_RUNS,
    OTHER_RUNS_WITH_BIB,
    WITH_PDF,
    Artifact,
    Stage,
    writer,
)
from declinecraft.core.params import PaperParams
from declinecraft.core.stages import evidence, know2guess
from declinecraft.core.stages.analysis import ANALYSIS_STATUS, ANALYSIS_TABLE
from declinecraft.core.stages.judge import JUDGE_JUDGED
from declinecraft.core.stages.verify import VERIFY_AUDIT_VERIFIER, VERIFY_IMPORT

_write = writer("paper", "10_paper")

PAPER_RUN_HEALTH = _write("run_health.csv", "the run's health with the views' rows")
PAPER_FIGURE_CHECKS = _write("figure_checks.csv", "every drawn figure's layout and caption problems")
PAPER_SKIPPED = _write("skipped.csv", "every figure and table the run cannot fill, with the reason")
PAPER_NUMBERS = _write("numbers.csv", "every number macro: value, printed text, n/a reason")
PAPER_VIEW_NUMBERS = _write("view_numbers.csv", "the views' macros")
PAPER_PAGE_CHECKS = _write("page_checks.csv", "the built PDF's page problems")
PAPER_PDF_STATUS = _write("pdf.json", "the PDF built, or why not")
PAPER_NUMBERS_TEX = _write("numbers.tex", "one macro per number the text quotes", place="paper")
PAPER_VIEW_NUMBERS_TEX = _write("view_numbers.tex", "the views' number macros", place="paper")
PAPER_HEALTH_NUMBERS_TEX = _write("health_numbers.tex", "the run-health macros", place="paper")
PAPER_SKIPPED_TEX = _write("skipped.tex", "why a figure or table is missing or small", place="paper")
PAPER_ENVIRONMENT_TEX = _write("environment.tex", "the machines of the run", place="paper")
PAPER_PDF = _write("main.pdf", "the paper", WITH_PDF, place="paper")
PAPER_TABLE = _write(
    "{}.tex",
    "one LaTeX table (key: tableNN, selfpref, reported, claims, run_health, prompts, examples)",
    place="tables",
)
PAPER_MAIN_TEX = _write("main.tex", "a copy of the hand-written paper/main.tex", OTHER_RUNS, place="paper")
PAPER_REFERENCES = _write("references.bib", "a copy of paper/references.bib", OTHER_RUNS_WITH_BIB, place="paper")
PAPER_FIGURE = _write(
    "{}", "one figure file (key: <stem>.<format>, one per format of paper.figure_formats)", place="figures"
)
PAPER_ENVIRONMENT = _write(
    "environment.json", "the run's machine, model files' sha256 and the calls' machines", place="run"
)

#: The views' tables, frames and manifests (what the paper draws and counts).
_VIEWS = tuple(
    a
    for module in (know2guess, evidence)
    for a in vars(module).values()
    if isinstance(a, Artifact) and a.stage == module.STAGE.block and a.kind not in ("md", "html")
)

STAGE = Stage(
    block="paper",
    notebook="10_paper",
    params=PaperParams,
    run="declinecraft.paper.stage:run",
    about="figures and tables, number macros, the PDF (all sections)",
    reads=(ANALYSIS_TABLE, ANALYSIS_STATUS, JUDGE_JUDGED, VERIFY_AUDIT_VERIFIER, VERIFY_IMPORT, *_VIEWS),
    # The machine record reads every parquet file of the run for its calls' cache keys.
    reads_kinds=("parquet",),
    # The table of quoted numbers is data the paper's code reads (its source files are Make's by import).
    data=lambda cfg: [
        "paper/main.tex",
        "paper/references.bib",
        "params/paper_reported.yaml",
        "src/declinecraft/paper/quoted/numbers.tsv",
    ],
    models=(EVERY_MODEL,),
)
