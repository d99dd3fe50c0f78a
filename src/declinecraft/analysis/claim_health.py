"""What the run health rules out: a claim is not tested on a run whose own calls say it can't be.

The claims check (:mod:`declinecraft.analysis.claims`) reads the run health
(:mod:`declinecraft.analysis.run_health`) before it reads any n. A claim is ``not testable``, with
the run health's counts as the reason, when:

- more than :data:`MAX_BROKEN_SHARE` of the answer calls failed, or of the response judge's labels
  stayed unparsable after the re-ask (every claim rests on the labels);
- more than :data:`MAX_CUT_SHARE` of the answers stopped at the output budget in mid-answer: the
  paper's budget left 1.9% exhausted, and a cut answer is labelled as the fragment it is;
- a claim about iterative RAG, when no iterative answer retrieved a second time: the condition then
  equals single-shot RAG and says nothing about iterating;
- a claim about Answer Accuracy, when more than :data:`MAX_BROKEN_SHARE` of the accuracy judges'
  scores stayed unparsable, when an accuracy judge failed the judges' check set
  (:mod:`declinecraft.evaluation.judge_check`), or when no configuration's accuracy rests on as many questions as the
  small-n rule asks for.

The shares are the project's choice: 5% is well above the paper's 1.9% exhausted answers and far
below the shares that broke the default run before its judges were constrained (30%).
"""

from __future__ import annotations

from typing import cast

import polars as pl

from declinecraft.analysis import run_health
from declinecraft.core.small_n import counted, is_finding

#: The largest share of failed answer calls or unparsable labels/scores a claim is tested on.
MAX_BROKEN_SHARE = 0.05
#: The largest share of answers cut at the output budget a claim is tested on.
MAX_CUT_SHARE = 0.05
#: Claims that compare iterative RAG with another condition.
ITERATIVE_CLAIMS = frozenset({"iter_lowers_car", "iter_lowers_car_sig"})
#: Claims that rest on Answer Accuracy.
ACCURACY_CLAIMS = frozenset({"accuracy_total_params", "car_accuracy"})


def _too_many(health: pl.DataFrame, measure: str, stage: str, share: float, what: str) -> str:
    """ "k of n <what> (x%)" when more than ``share`` of them are bad, else ''; ``what`` holds
    ``{n}`` where the total goes."""
    bad, total = run_health.total(health, measure, stage)
    if total and bad / total > share:
        return f"{bad} of {what.format(n=total)} ({100 * bad / total:.0f}%)"
    return ""


def run_reasons(health: pl.DataFrame) -> list[str]:
    """Why no claim can be tested on this run (empty when the run's calls allow it)."""
    found = [
        _too_many(health, "failed_calls", run_health.ANSWER_STAGE, MAX_BROKEN_SHARE, "{n} answer calls failed"),
        _too_many(
            health,
            "label_unparsable",
            run_health.JUDGE_STAGE,
            MAX_BROKEN_SHARE,
            "{n} responses unlabelled after the re-ask",
        ),
        _too_many(health, "truncated", run_health.ANSWER_STAGE, MAX_CUT_SHARE, "{n} answers cut at the output budget"),
    ]
    return [reason for reason in found if reason]


def claim_reasons(claim_id: str, health: pl.DataFrame, min_n: int) -> list[str]:
    """Why the run health rules out this one claim, beyond :func:`run_reasons`."""
    reasons = []
    if claim_id in ITERATIVE_CLAIMS:
        rounds = health.filter(pl.col("measure") == "further_rounds")
        if rounds.height and int(rounds.filter(pl.col("detail") != "0")["numerator"].sum()) == 0:
            answers = counted(int(rounds["numerator"].sum()), "iterative answers")
            reasons.append(f"iterative RAG never retrieved twice (none of {answers}), so it equals single-shot RAG")
    if claim_id in ACCURACY_CLAIMS:
        reasons.append(
            _too_many(
                health,
                "score_unparsable",
                run_health.JUDGE_STAGE,
                MAX_BROKEN_SHARE,
                "{n} scores unparsable after the re-ask",
            )
        )
        reasons += [
            f"accuracy judge {who} scores {k} of {n} check-set items as labelled, below judge.check_min_agreement"
            for who, k, n in run_health.failed_judges(health)
        ]
        scored = health.filter(pl.col("measure") == "accuracy_questions").drop_nulls("numerator")
        if scored.height and not any(is_finding(int(n), min_n) for n in scored["numerator"]):
            most = int(cast(int, scored["numerator"].max()))
            reasons.append(
                f"accuracy on at most {counted(most, 'questions')} per configuration (the small-n rule needs {min_n})"
            )
    return [r for r in reasons if r]


def reason(claim_id: str, health: pl.DataFrame | None, min_n: int) -> str:
    """The run health's reason why ``claim_id`` is not testable, or '' (see the module docstring)."""
    if health is None:
        return ""
    reasons = [*run_reasons(health), *claim_reasons(claim_id, health, min_n)]
    return ("run health: " + "; ".join(reasons)) if reasons else ""
