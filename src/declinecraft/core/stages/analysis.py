"""07_analysis: every metric and test, and the claims check (§4, Appendix A, H)."""

from __future__ import annotations

from declinecraft.core import paths
from declinecraft.core.declaration import EVERY_MODEL, WITH_RESULTS, Stage, writer
from declinecraft.core.params import AnalysisParams
from declinecraft.core.stages.answer import ANSWER_COMPARISON_RESPONSES, ANSWER_RESPONSES, ANSWER_RETRIEVAL
from declinecraft.core.stages.corpus import CORPUS_STATS
from declinecraft.core.stages.generate import GENERATE_DRAFTS
from declinecraft.core.stages.judge import (
    JUDGE_AGREEMENT,
    JUDGE_CHECK,
    JUDGE_COMPARISON_LABELS,
    JUDGE_JUDGED,
    JUDGE_LABELS,
    JUDGE_REFERENCES,
    JUDGE_SCORES,
)
from declinecraft.core.stages.verify import (
    VERIFY_AUDIT_FATES,
    VERIFY_AUDIT_GENERATORS,
    VERIFY_AUDIT_RETRIEVAL,
    VERIFY_AUDIT_STYLE,
    VERIFY_BENCHMARK,
    VERIFY_COMPARISON_CANDIDATES,
)

_write = writer("analysis", "07_analysis")

ANALYSIS_TABLE = _write(
    "{}.csv",
    "one CSV per table (key: its name): every result of declinecraft.analysis.analyze (main_grid, paired_tests, "
    "...), facts, the upstream copies, tableNN per paper table the run fills, paper_tables, run_health, claims, "
    "notes, annotation_sample",
)
ANALYSIS_ANNOTATION_PAGE = _write("annotation_sample.html", "the annotation sample for annotators", WITH_RESULTS)
ANALYSIS_STATUS = _write("status.json", "ok or no_input (with the reason), rows, tables, annotators")

STAGE = Stage(
    block="analysis",
    notebook="07_analysis",
    params=AnalysisParams,
    run="declinecraft.analysis.stage:run",
    about="metrics, every statistical test, the claims check (§4, App. A, H)",
    reads=(
        CORPUS_STATS,
        GENERATE_DRAFTS,
        VERIFY_BENCHMARK,
        VERIFY_AUDIT_FATES,
        VERIFY_AUDIT_STYLE,
        VERIFY_AUDIT_RETRIEVAL,
        VERIFY_AUDIT_GENERATORS,
        VERIFY_COMPARISON_CANDIDATES,
        ANSWER_RESPONSES,
        ANSWER_RETRIEVAL,
        ANSWER_COMPARISON_RESPONSES,
        JUDGE_LABELS,
        JUDGE_REFERENCES,
        JUDGE_SCORES,
        JUDGE_JUDGED,
        JUDGE_AGREEMENT,
        JUDGE_CHECK,
        JUDGE_COMPARISON_LABELS,
    ),
    data=lambda cfg: ["params/paper_reported.yaml", f"{paths.ANNOTATIONS}/{cfg.run}"],
    models=(EVERY_MODEL,),
)
