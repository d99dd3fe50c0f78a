"""Correctness of a FINAL_ANSWER (K2G §4.1, graded our way): the run's accuracy judges (App. J.3).

Only ANSWER decisions on answerable questions are judged, each against the oracle reference of
``06_judge/references.parquet``, with :func:`declinecraft.evaluation.judge.score_responses` and
the judge stage's budget and temperature, so a call identical to one the judge stage made is read
from the cache. A (question, answer) pair is judged once, whichever run or parser produced it.
The panel's mean is the item's accuracy; an item with any missing score has none (counted).

Every other item gets its credit without a call: an abstention on an unanswerable question
earns 1, any other decision there 0 (a missed abstention); on answerable questions abstention,
refusal and parse errors score 0. REFUSE_POLICY and PARSE_ERROR never earn abstention credit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import polars as pl

from declinecraft.evaluation.judge import score_responses
from declinecraft.llm.calls import Ask
from declinecraft.views.know2guess.decisions import ABSTAIN, ANSWER


def answer_id(question_id: str, answer: str) -> str:
    """A stable 16-hex id of one (question, answer) pair: the unit the judges score."""
    return hashlib.sha256(json.dumps(["k2g", question_id, answer]).encode()).hexdigest()[:16]


def judge_items(decisions: pl.DataFrame, references: pl.DataFrame) -> pl.DataFrame:
    """The distinct answered (question, answer) pairs of answerable questions, with references.

    The frame has the columns :func:`score_responses` reads; a question without a reference
    keeps a null one (scored null, ``no_reference``).
    """
    answered = decisions.filter(pl.col("state") == ANSWER, pl.col("answerable"), pl.col("error").is_null())
    items = answered.select("question_id", "query", pl.col("answer").fill_null("").alias("response")).unique(
        ["question_id", "response"], keep="first", maintain_order=True
    )
    ids = [answer_id(q, a) for q, a in zip(items["question_id"], items["response"], strict=True)]
    refs = references.select("question_id", "reference")
    return items.with_columns(
        response_id=pl.Series(ids, dtype=pl.String),
        label=pl.lit(ANSWER),
        answerable=pl.lit(True),
        budget_exhausted=pl.lit(False),
        error=pl.lit(None, dtype=pl.String),
    ).join(refs, on="question_id", how="left", maintain_order="left")


def score_items(
    items: pl.DataFrame, judges: Mapping[str, Ask], *, constrain: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Score every item with every judge (in the given order; re-asks constrained as the judge
    stage's, ``judge.constrain_reask``); return (scores, accuracy).

    ``scores`` has one row per (item, judge) (:data:`~declinecraft.evaluation.judge.SCORE_SCHEMA`); ``accuracy`` one row
    per item: the panel mean, null when a judge's score is missing.
    """
    parts = [score_responses(items, ask, judge=name, constrain=constrain) for name, ask in judges.items()]
    if not parts or not items.height:
        empty = pl.DataFrame(schema={"response_id": pl.String, "accuracy": pl.Float64, "score_source": pl.String})
        return (pl.concat(parts) if parts else pl.DataFrame()), empty
    scores = pl.concat(parts)
    accuracy = scores.group_by("response_id", maintain_order=True).agg(
        accuracy=pl.when(pl.col("score").is_not_null().all()).then(pl.col("score").mean()),
        score_source=pl.col("source").first(),
    )
    return scores, accuracy


def credit(decisions: pl.DataFrame, accuracy: pl.DataFrame) -> pl.DataFrame:
    """Add ``accuracy`` (judged items only) and ``credit`` (the item's reliability credit).

    Credit is null for a failed call and for a judged item without a complete panel score.
    """
    ids = [answer_id(q, a or "") for q, a in zip(decisions["question_id"], decisions["answer"], strict=True)]
    judged = pl.col("state") == ANSWER
    frame = decisions.with_columns(answer_id=pl.Series(ids, dtype=pl.String)).join(
        accuracy.rename({"response_id": "answer_id"}), on="answer_id", how="left", maintain_order="left"
    )
    frame = frame.with_columns(
        accuracy=pl.when(judged & pl.col("answerable")).then(pl.col("accuracy")),
        score_source=pl.when(judged & pl.col("answerable")).then(pl.col("score_source")),
    )
    value = (
        pl.when(pl.col("error").is_not_null())
        .then(None)
        .when(~pl.col("answerable"))
        .then((pl.col("state") == ABSTAIN).cast(pl.Float64))
        .when(judged)
        .then(pl.col("accuracy"))
        .otherwise(0.0)
    )
    return frame.with_columns(credit=value).drop("answer_id")
