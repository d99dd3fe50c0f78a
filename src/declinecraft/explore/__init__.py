"""Exploring per-question failures (docs/design.md, goal 2): ``from declinecraft import explore``.

``explore.load(run)`` gives one row per response with everything known about it
(:mod:`~declinecraft.explore.frame`); the filters pick questions for the paper's questions
(:mod:`~declinecraft.explore.filters`); ``explore.show(question_id, frame)`` shows one question
(:mod:`~declinecraft.explore.question`), ``explore.browse(frame)`` pages through them in JupyterLab
(:mod:`~declinecraft.explore.widgets`), and ``python -m declinecraft.explore report PARAMS`` writes
the static pages (:mod:`~declinecraft.explore.report`); the views' outputs sit beside the responses
(:mod:`~declinecraft.explore.protocols`). The explorer reads stage files only.
"""

from declinecraft.explore.filters import (
    CODE_OF,
    CONDITIONS,
    FLAGS,
    LABEL_CODES,
    SEARCH_FIELDS,
    all_failed,
    budget_exhausted,
    flag_counts,
    judge_disagreements,
    judge_rule_disagreements,
    label_counts,
    score_columns,
    search,
    setting_order,
    thinking_changes,
    transitions,
)
from declinecraft.explore.frame import failed_expr, join_tables, load, load_chunks, resolve
from declinecraft.explore.protocols import question_contexts, with_know2guess
from declinecraft.explore.question import QuestionView, hits_of, question_html, question_text, rounds_of, show
from declinecraft.explore.report import question_shards, report_data, report_html, write_explorer, write_report
from declinecraft.explore.widgets import Browser, browse

__all__ = [
    "CODE_OF",
    "CONDITIONS",
    "FLAGS",
    "LABEL_CODES",
    "SEARCH_FIELDS",
    "Browser",
    "QuestionView",
    "all_failed",
    "browse",
    "budget_exhausted",
    "failed_expr",
    "flag_counts",
    "hits_of",
    "join_tables",
    "judge_disagreements",
    "judge_rule_disagreements",
    "label_counts",
    "load",
    "load_chunks",
    "question_contexts",
    "question_html",
    "question_shards",
    "question_text",
    "report_data",
    "report_html",
    "resolve",
    "rounds_of",
    "score_columns",
    "search",
    "setting_order",
    "show",
    "thinking_changes",
    "transitions",
    "with_know2guess",
    "write_explorer",
    "write_report",
]
