"""The judges' check set: labelled items every accuracy judge scores before its scores count.

``data/judge_check/accuracy.csv`` (``judge.check_file``) holds items we wrote ourselves, each a
question, a reference answer, a response and the score the accuracy prompt (App. J.3) asks for:
correct answers (1.0), partially correct ones (0.5), wrong answers, abstentions, premise denials
and generic non-answers that never name the answer, such as a list of steps (0.0); ``label`` is the
response label each one should get. The judge stage asks every accuracy judge model of the run to
score every item once, through the same prompt, client and cache as the run's own scores
(:func:`score_check_set`); :func:`check_agreement` gives each judge's share of items scored as
labelled. A judge below ``judge.check_min_agreement`` fails: its scores are printed as not
interpretable and no accuracy number resting on it is read as a finding.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core.check_agreement import SCHEMA, check_agreement
from declinecraft.evaluation import judge
from declinecraft.evaluation.rule_labels import LABELS, SCORES
from declinecraft.llm.calls import Ask

#: Columns of the check-set file, in order.
COLUMNS = ("item_id", "kind", "label", "score", "question", "reference", "response")
#: Kinds of item the set must hold (the check's coverage), each with the score it must carry.
KINDS = {
    "correct": 1.0,
    "partial": 0.5,
    "wrong": 0.0,
    "abstention": 0.0,
    "premise_denial": 0.0,
    "generic": 0.0,
}


def read_check_set(path: Path) -> pl.DataFrame:
    """The check set at ``path``, validated.

    Raises:
        ValueError: a missing column, a duplicated item id, an unknown kind or label, a score off
            the 0/0.5/1 scale or unlike its kind's, an empty text, or a kind the set lacks; the
            message names the file and the item.
    """
    if not path.is_file():
        raise ValueError(f"{path}: the judges' check set is missing (judge.check_file)")
    frame = pl.read_csv(path, schema_overrides={"score": pl.Float64}, infer_schema_length=0)
    lacking = [c for c in COLUMNS if c not in frame.columns]
    if lacking:
        raise ValueError(f"{path}: the check set lacks column(s) {', '.join(lacking)} (needs {', '.join(COLUMNS)})")
    seen: set[str] = set()
    for row in frame.iter_rows(named=True):
        item = row["item_id"]
        where = f"{path}: item {item!r}"
        if not item or item in seen:
            raise ValueError(f"{where}: item ids must be unique and nonempty")
        seen.add(item)
        if row["kind"] not in KINDS:
            raise ValueError(f"{where}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
        if row["label"] not in LABELS:
            raise ValueError(f"{where}: label {row['label']!r} is not one of {', '.join(LABELS)}")
        if row["score"] not in SCORES or row["score"] != KINDS[row["kind"]]:
            raise ValueError(f"{where}: score {row['score']!r} must be {KINDS[row['kind']]} for a {row['kind']} item")
        if not all((row[c] or "").strip() for c in ("question", "reference", "response")):
            raise ValueError(f"{where}: question, reference and response must be nonempty")
    missing = sorted(set(KINDS) - set(frame["kind"]))
    if missing:
        raise ValueError(f"{path}: the check set has no {', '.join(missing)} item")
    return frame.select(COLUMNS)


def sample_check_set(items: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """``n`` items of the set, as many of each kind as ``n`` allows (the first kinds in
    :data:`KINDS` order take the remainder), drawn with ``seed``; every item when ``n`` is 0 or
    at least the set's size. Rows keep the file's order."""
    if n <= 0 or n >= items.height:
        return items
    kinds = [k for k in KINDS if k in set(items["kind"])]
    quota = {k: n // len(kinds) + (1 if i < n % len(kinds) else 0) for i, k in enumerate(kinds)}
    drawn = items.with_columns(_draw=pl.int_range(pl.len()).shuffle(seed=seed).over("kind"))
    keep = drawn.filter(pl.col("_draw") < pl.col("kind").replace_strict(quota, return_dtype=pl.Int64))
    return keep.drop("_draw")


def score_check_set(items: pl.DataFrame, ask: Ask, *, judge_id: str, constrain: bool = False) -> pl.DataFrame:
    """Every item scored by one accuracy judge (one call each, re-asked once when unparsable, as
    :func:`~declinecraft.evaluation.judge.score_responses` scores the run's answers); one row per
    item (:data:`SCHEMA`). An unparsable or failed score does not agree."""
    asked = items.select(
        response_id="item_id",
        query="question",
        response="response",
        reference="reference",
        label=pl.lit(None, pl.String),  # the judge reads every item, abstentions included
        answerable=pl.lit(True),
        budget_exhausted=pl.lit(False),
        error=pl.lit(None, pl.String),
    )
    scored = judge.score_responses(asked, ask, judge=judge_id, constrain=constrain)
    return (
        items.select("item_id", "kind", expected="score")
        .join(
            scored.select("response_id", "judge", "score", "unparsable", "error"),
            left_on="item_id",
            right_on="response_id",
        )
        .with_columns(agrees=(pl.col("score") == pl.col("expected")).fill_null(False))
        .select(list(SCHEMA))
        .cast(pl.Schema(SCHEMA))
    )


__all__ = ["COLUMNS", "KINDS", "SCHEMA", "check_agreement", "read_check_set", "sample_check_set", "score_check_set"]
