"""Per-configuration metrics from labelled responses (paper §4.1 and Appendix I).

Input is a polars frame with one row per response:

====================  ==========================================================================
``question_id``       question identifier
``answerable``        bool; False for the unanswerable (post-cut-off) questions
``label``             "ABSTAIN" | "DENY" | "ANSWER", or null when the budget was exhausted
``budget_exhausted``  bool; the output budget ran out without a final answer
``accuracy``          mean of the accuracy judges' scores (0 / 0.5 / 1); may be null where unjudged
====================  ==========================================================================

Rules (§4.1, App. I): budget-exhausted responses are left out of CAR and Attempt and score 0 in
accuracy; CAR counts only ABSTAIN on unanswerable questions (strict) or ABSTAIN and DENY
(``lenient=True``); on answerable questions DENY counts as an attempt and ABSTAIN scores 0.
Rates and accuracies are proportions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast, overload

import numpy as np
import polars as pl
from numpy.typing import NDArray

from declinecraft.core.stats import LABELS, bootstrap_means, wilson_arrays

COLUMNS = ("question_id", "answerable", "label", "budget_exhausted", "accuracy")

_ANS = pl.col("answerable")
_UNANS = ~pl.col("answerable")
_OK = ~pl.col("budget_exhausted")
_ABSTAIN = pl.col("label") == "ABSTAIN"
_DENY = pl.col("label") == "DENY"
_ANSWER = pl.col("label") == "ANSWER"
_ATTEMPTED = _DENY | _ANSWER


class Rate(NamedTuple):
    """A proportion with its counts, so a Wilson interval can be computed from it."""

    rate: float
    """k / n, NaN when n is 0."""
    k: int
    """Responses counted as successes."""
    n: int
    """Responses in the denominator."""


@overload
def balanced_f1(attempt_rate: float, car: float) -> float: ...
@overload
def balanced_f1(attempt_rate: NDArray[np.float64], car: NDArray[np.float64]) -> NDArray[np.float64]: ...
def balanced_f1(
    attempt_rate: float | NDArray[np.float64], car: float | NDArray[np.float64]
) -> float | NDArray[np.float64]:
    """Balanced F1 of Tables 2, 6 and 7: 2A / (A + 2 - C), proportions in and out.

    It is the F1 of "attempt" when each answerability class has unit weight: true positives A
    (answerable attempted), false negatives 1 - A, false positives 1 - C (unanswerable not
    correctly abstained), so neither class dominates through its size. NaN propagates.
    """
    a = np.asarray(attempt_rate, dtype=np.float64)
    c = np.asarray(car, dtype=np.float64)
    if np.any((a < 0) | (a > 1) | (c < 0) | (c > 1)):
        raise ValueError("balanced_f1 takes proportions in [0, 1] (not percentages)")
    out = 2.0 * a / (a + 2.0 - c)
    return float(out) if out.ndim == 0 else out


def _prepare(responses: pl.DataFrame) -> pl.DataFrame:
    """Check the response frame and add the per-response score used by every accuracy."""
    if missing := [c for c in COLUMNS if c not in responses.columns]:
        raise ValueError(f"responses frame lacks columns {missing}; needs {list(COLUMNS)}")
    if responses.schema["label"] == pl.Object:
        raise ValueError("responses column 'label' has dtype Object; build it as pl.String")
    frame = responses.with_columns(
        pl.col("label").cast(pl.String),
        pl.col("answerable").cast(pl.Boolean),
        pl.col("budget_exhausted").cast(pl.Boolean).fill_null(False),
        pl.col("accuracy").cast(pl.Float64).fill_nan(None),
    )
    bad = frame.filter(pl.col("label").is_not_null() & ~pl.col("label").is_in(LABELS))
    if bad.height:
        raise ValueError(
            f"unknown label {bad['label'][0]!r} for question {bad['question_id'][0]!r}; "
            f"expected one of {LABELS} or null"
        )
    unlabelled = frame.filter(pl.col("label").is_null() & _OK)
    if unlabelled.height:
        ids = unlabelled["question_id"].head(5).to_list()
        raise ValueError(
            f"{unlabelled.height} responses have no label but did not exhaust the budget "
            f"(questions {ids}); label them or mark budget_exhausted"
        )
    # Exhausted budgets and abstentions score 0; other responses keep the judges' mean.
    score = pl.when(~_OK | _ABSTAIN).then(0.0).otherwise(pl.col("accuracy"))
    return frame.with_columns(score=score)


def _rate(frame: pl.DataFrame, hit: pl.Expr, pool: pl.Expr) -> Rate:
    row = frame.select(k=(pool & hit).sum(), n=pool.sum()).row(0)
    k, n = int(row[0] or 0), int(row[1] or 0)
    return Rate(k / n if n else float("nan"), k, n)


def correct_abstention_rate(responses: pl.DataFrame, *, lenient: bool = False) -> Rate:
    """Correct Abstention Rate on unanswerable questions, budget-exhausted responses left out.

    Strict (the paper's headline): only ABSTAIN counts. ``lenient=True`` also counts DENY
    (App. I's alternative rule).
    """
    hit = (_ABSTAIN | _DENY) if lenient else _ABSTAIN
    return _rate(_prepare(responses), hit, _UNANS & _OK)


def attempt_rate(responses: pl.DataFrame) -> Rate:
    """Answerable Attempt Rate: ANSWER or DENY on answerable questions, exhausted left out."""
    return _rate(_prepare(responses), _ATTEMPTED, _ANS & _OK)


def answer_accuracy(responses: pl.DataFrame, *, answerable: bool = True) -> float:
    """Answer Accuracy: mean per-question score, abstentions and exhausted budgets scoring 0.

    ``answerable=False`` scores the unanswerable questions instead (leakage audit, Table 4).
    Unjudged (null) scores of attempted answers are left out; no question gives NaN.
    """
    frame = _prepare(responses).filter(_ANS if answerable else _UNANS)
    scores = frame.group_by("question_id").agg(pl.col("score").mean())["score"]
    value = scores.mean()
    return float("nan") if value is None else float(cast(float, value))


def accuracy_when_attempted(responses: pl.DataFrame) -> float:
    """Mean score over the answerable questions attempted (ANSWER or DENY, budget not exhausted)."""
    frame = _prepare(responses).filter(_ANS & _OK & _ATTEMPTED)
    value = frame["score"].mean()
    return float("nan") if value is None else float(cast(float, value))


def label_shares(responses: pl.DataFrame) -> dict[str, float]:
    """Share of each label among labelled responses to unanswerable questions (Figs. 17, 18).

    Returns ``{"ABSTAIN": ..., "DENY": ..., "ANSWER": ...}`` summing to 1, or NaNs when empty.
    """
    frame = _prepare(responses)
    return {label: _rate(frame, pl.col("label") == label, _UNANS & _OK).rate for label in LABELS}


def _group_counts(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    pool_u, pool_a = _UNANS & _OK, _ANS & _OK
    return frame.group_by(keys, maintain_order=True).agg(
        n_answerable=_ANS.sum(),
        n_unanswerable=_UNANS.sum(),
        n_budget_exhausted=pl.col("budget_exhausted").sum(),
        car_k=(pool_u & _ABSTAIN).sum(),
        car_n=pool_u.sum(),
        car_lenient_k=(pool_u & (_ABSTAIN | _DENY)).sum(),
        deny_k=(pool_u & _DENY).sum(),
        answer_k=(pool_u & _ANSWER).sum(),
        attempt_k=(pool_a & _ATTEMPTED).sum(),
        attempt_n=pool_a.sum(),
        accuracy_when_attempted=pl.col("score").filter(pool_a & _ATTEMPTED).mean(),
    )


def _accuracy_matrix(frame: pl.DataFrame, groups: pl.DataFrame, keys: list[str]) -> NDArray[np.float64]:
    """Groups x questions matrix of per-question mean scores on answerable questions (NaN: none)."""
    per_question = (
        frame.filter(_ANS)
        .group_by([*keys, "question_id"])
        .agg(pl.col("score").mean())
        .join(groups.with_row_index("_row"), on=keys, nulls_equal=True)
        .with_columns(_col=pl.col("question_id").rank("dense") - 1)
    )
    last = per_question["_col"].max()
    n_questions = 0 if last is None else int(cast(int, last)) + 1
    matrix = np.full((groups.height, n_questions), np.nan)
    scores = per_question["score"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    matrix[per_question["_row"].to_numpy(), per_question["_col"].to_numpy()] = scores
    return matrix


def summarize(
    responses: pl.DataFrame,
    by: Sequence[str] = ("model", "thinking", "condition"),
    *,
    complete: bool = False,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """One tidy row of every metric per group, with 95% intervals (Tables 2, 3, 6, 7).

    Rates carry Wilson intervals and their counts; Answer Accuracy carries a percentile
    bootstrap over questions drawn with one shared seed, so all groups see the same resamples.
    A group with no unanswerable (or answerable) responses gets NaN for those metrics and counts
    of 0. ``complete=True`` adds a row for every combination of observed ``by`` values (e.g. a
    model missing one retrieval condition), filled the same way.
    """
    keys = list(by)
    if missing := [k for k in keys if k not in responses.columns]:
        raise ValueError(f"summarize: group columns {missing} not in responses frame")
    frame = _prepare(responses)
    if not keys:
        frame, keys = frame.with_columns(_all=pl.lit(True)), ["_all"]
    counts = _group_counts(frame, keys)
    if keys == ["_all"] and counts.height == 0:
        counts = pl.DataFrame({"_all": [True]}).join(counts, on="_all", how="left")
    if complete and counts.height:
        grid = counts.select(pl.col(keys[0]).unique(maintain_order=True))
        for key in keys[1:]:
            grid = grid.join(counts.select(pl.col(key).unique(maintain_order=True)), how="cross")
        counts = grid.join(counts, on=keys, how="left", nulls_equal=True)
    count_cols = [c for c in counts.columns if c not in keys and c != "accuracy_when_attempted"]
    counts = counts.with_columns(pl.col(count_cols).fill_null(0).cast(pl.Int64))

    matrix = _accuracy_matrix(frame, counts.select(keys), keys)
    acc_low, acc_high = bootstrap_means(matrix, n_resamples, confidence, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.nansum(matrix, axis=1) / (~np.isnan(matrix)).sum(axis=1)

    col = {c: counts[c].to_numpy().astype(np.float64) for c in count_cols}
    car_low, car_high = wilson_arrays(col["car_k"], col["car_n"], confidence)
    len_low, len_high = wilson_arrays(col["car_lenient_k"], col["car_n"], confidence)
    att_low, att_high = wilson_arrays(col["attempt_k"], col["attempt_n"], confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        car = col["car_k"] / col["car_n"]
        attempt = col["attempt_k"] / col["attempt_n"]
        derived = {
            "car": car,
            "car_low": car_low,
            "car_high": car_high,
            "attempt": attempt,
            "attempt_low": att_low,
            "attempt_high": att_high,
            "accuracy": accuracy,
            "accuracy_low": acc_low,
            "accuracy_high": acc_high,
            "bal_f1": balanced_f1(attempt, car),
            "share_abstain": car,
            "share_deny": col["deny_k"] / col["car_n"],
            "share_answer": col["answer_k"] / col["car_n"],
            "car_lenient": col["car_lenient_k"] / col["car_n"],
            "car_lenient_low": len_low,
            "car_lenient_high": len_high,
        }
    out = counts.with_columns(
        pl.Series(name, values, dtype=pl.Float64, nan_to_null=False) for name, values in derived.items()
    ).with_columns(
        pl.col("accuracy_when_attempted").cast(pl.Float64).fill_null(np.nan),
        # Questions behind each accuracy (the small-n rule, core.small_n): scored answerable ones.
        accuracy_n=pl.Series((~np.isnan(matrix)).sum(axis=1), dtype=pl.Int64),
    )
    order = [
        *keys,
        *("n_answerable", "n_unanswerable", "n_budget_exhausted"),
        *("car_k", "car_n", "car", "car_low", "car_high"),
        *("attempt_k", "attempt_n", "attempt", "attempt_low", "attempt_high"),
        *("accuracy", "accuracy_low", "accuracy_high", "accuracy_n", "accuracy_when_attempted", "bal_f1"),
        *("share_abstain", "share_deny", "share_answer"),
        *("car_lenient_k", "car_lenient", "car_lenient_low", "car_lenient_high"),
    ]
    out = out.select(order)
    return out.drop("_all") if keys == ["_all"] else out
