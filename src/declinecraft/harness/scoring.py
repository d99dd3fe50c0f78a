"""Responses from a harness, labelled and scored the way stages 06 and 07 score ours.

A harness hands back raw response text and the finish reason. :func:`outcome` removes any
thinking trace, flags an exhausted output budget (left out of both rates, §4.1) and labels the
rest with the deterministic rule labels (:func:`declinecraft.evaluation.rule_labels.rule_label`);
a response judge's raw output is read with :func:`judge_label` (the re-ask turn is
:data:`REASK_LABEL`). :func:`rates` computes CAR and attempt rate with
:mod:`declinecraft.evaluation.metrics`, so the numbers follow the project's rules exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from declinecraft.evaluation import metrics
from declinecraft.evaluation.judge import RESPONSE_PROMPT, truncate
from declinecraft.evaluation.rule_labels import parse_label, rule_label
from declinecraft.evaluation.verdict import REASK_LABEL
from declinecraft.llm.responses import is_budget_exhausted, split_thinking

__all__ = ["Outcome", "outcome", "judge_fields", "judge_label", "rates", "RESPONSE_PROMPT", "REASK_LABEL"]

#: Characters of a response the judge reads (App. I), as in stage 06.
JUDGE_CHARS = 12000


@dataclass(frozen=True)
class Outcome:
    """One scored response."""

    answerable: bool
    label: str | None
    """ABSTAIN / DENY / ANSWER; None when the output budget ran out before a final answer."""
    budget_exhausted: bool
    answer: str
    """The final text, thinking removed."""


def outcome(text: str | None, finish_reason: str | None, *, answerable: bool) -> Outcome:
    """Label one response with the rule labels (None when the budget ran out, as stage 06 does)."""
    answer, _ = split_thinking(text or "")
    exhausted = is_budget_exhausted(finish_reason, answer)
    return Outcome(answerable, None if exhausted else rule_label(answer), exhausted, answer)


def judge_fields(query: str, answer: str) -> dict[str, str]:
    """The response judge's template fields (``params/prompts/judge_response.txt``) for a response."""
    return {"question": query, "answer": truncate(answer, JUDGE_CHARS)}


def judge_label(raw: str | None) -> str | None:
    """A response judge's label from its raw output; None when it is not exactly one label."""
    return parse_label(raw)


def rates(outcomes: Iterable[Outcome]) -> dict[str, metrics.Rate]:
    """CAR (strict, on unanswerable questions) and attempt rate (on answerable ones).

    Exhausted budgets are left out (§4.1), and so are responses a judge left unlabelled (unparsable
    after its re-ask), as stage 07 leaves out responses without a label.
    """
    outcomes = [o for o in outcomes if o.label is not None or o.budget_exhausted]
    rows = [
        {
            "question_id": str(i),
            "answerable": o.answerable,
            "label": o.label,
            "budget_exhausted": o.budget_exhausted,
            "accuracy": None,
        }
        for i, o in enumerate(outcomes)
    ]
    frame = pl.DataFrame(
        rows,
        schema={
            "question_id": pl.String,
            "answerable": pl.Boolean,
            "label": pl.String,
            "budget_exhausted": pl.Boolean,
            "accuracy": pl.Float64,
        },
    )
    return {"car": metrics.correct_abstention_rate(frame), "attempt_rate": metrics.attempt_rate(frame)}
