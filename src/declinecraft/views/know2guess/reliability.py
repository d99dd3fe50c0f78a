"""K2G's scores of a run (§4.1, §4.4, §6.7, §6.9), with item-bootstrap percentile intervals.

Every rate is a mean of a per-item value over the items it applies to (:data:`METRICS`), so one
item-by-question matrix gives every interval through :func:`~declinecraft.core.stats.bootstrap_means`, with
the same resampled questions for every configuration. A failed call is left out of every rate
(``n_error``); a judged answer without a complete panel score is left out of the three
accuracy-based rates (``n_unscored``). Accuracy credit is our judges' 0 / 0.5 / 1 mean, so
"correct" counts are sums of credit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from declinecraft.core import stats
from declinecraft.views.know2guess.decisions import ABSTAIN, ANSWER, PARSE_ERROR, REFUSE
from declinecraft.views.know2guess.protocol import KEY

_ANS, _ERR = pl.col("answerable"), pl.col("error").is_not_null()
_STATE = pl.col("state")


def _on(pool: pl.Expr, value: pl.Expr) -> pl.Expr:
    """A per-item value where ``pool`` holds, null elsewhere and for failed calls."""
    return pl.when(pool & ~_ERR).then(value.cast(pl.Float64))


#: Each rate as (per-item value, null where it does not apply): K2G's companion metrics.
METRICS: dict[str, pl.Expr] = {
    "reliability": _on(pl.lit(True), pl.col("credit")),
    "answerable_accuracy": _on(_ANS, pl.col("credit")),
    "productive_abstention": _on(~_ANS, _STATE == ABSTAIN),
    "unnecessary_abstention": _on(_ANS, _STATE == ABSTAIN),
    "refusal_rate": _on(pl.lit(True), _STATE == REFUSE),
    "parse_error_rate": _on(pl.lit(True), _STATE == PARSE_ERROR),
    "coverage": _on(pl.lit(True), _STATE == ANSWER),
    "answered_accuracy": _on(_STATE == ANSWER, pl.col("credit")),
    # K2G §1, §6.7: hallucination among answered items, the complement of answered accuracy (an
    # answer to an unanswerable question earns no credit, so it counts as hallucinated).
    "hallucination_rate": _on(_STATE == ANSWER, 1.0 - pl.col("credit")),
}


def reliability_from_counts(
    correct_answerable: float, n_answerable: int, abstained_unanswerable: float, n_unanswerable: int, lam: float = 1.0
) -> float:
    """Cost-sensitive reliability R_λ (K2G §4.4): (correct + λ·abstained) / (n_ans + λ·n_unans).

    λ = 1 is the plain reliability. NaN when there is nothing to score.

    Raises:
        ValueError: a negative λ or count, or a count above its total.
    """
    if lam < 0 or min(correct_answerable, n_answerable, abstained_unanswerable, n_unanswerable) < 0:
        raise ValueError("reliability_from_counts takes non-negative counts and lambda")
    if correct_answerable > n_answerable or abstained_unanswerable > n_unanswerable:
        raise ValueError(
            f"counts above their totals: {correct_answerable}/{n_answerable}, {abstained_unanswerable}/{n_unanswerable}"
        )
    denominator = n_answerable + lam * n_unanswerable
    return float("nan") if denominator == 0 else (correct_answerable + lam * abstained_unanswerable) / denominator


def calibration_bins(confidence: ArrayLike, correct: ArrayLike, bins: int = 10) -> pl.DataFrame:
    """Equal-width confidence bins: count, mean confidence and mean correctness of each (empty bins too).

    Bins are closed on the right, (0.8, 0.9], the first one [0, 0.1], as in Guo et al. (2017)
    and scikit-learn's ``calibration_curve``: a stated 90 falls with the values below it, not
    with 91–100. Pairs with a NaN are left out.

    Raises:
        ValueError: lengths differ, fewer than one bin, or a confidence outside [0, 1].
    """
    c = np.asarray(confidence, dtype=np.float64).ravel()
    y = np.asarray(correct, dtype=np.float64).ravel()
    if c.size != y.size or bins < 1:
        raise ValueError(f"calibration needs equal lengths and bins >= 1, got {c.size}, {y.size}, bins={bins}")
    keep = ~(np.isnan(c) | np.isnan(y))
    c, y = c[keep], y[keep]
    if np.any((c < 0) | (c > 1)):
        raise ValueError("confidence must lie in [0, 1]")
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.searchsorted(edges[1:-1], c, side="left")
    count = np.bincount(index, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_c = np.bincount(index, weights=c, minlength=bins) / count
        mean_y = np.bincount(index, weights=y, minlength=bins) / count
    return pl.DataFrame(
        {
            "bin": np.arange(bins),
            "low": edges[:-1],
            "high": edges[1:],
            "n": count,
            "confidence": mean_c,
            "accuracy": mean_y,
        }
    )


def ece(confidence: ArrayLike, correct: ArrayLike, bins: int = 10) -> float:
    """Expected calibration error: Σ_b (n_b / n) · |accuracy_b − confidence_b| over equal-width bins.

    K2G §6.7 computes it over answered items and states no bin count; 10 equal-width bins is our
    choice (a common default, Guo et al. 2017). NaN for no items.
    """
    table = calibration_bins(confidence, correct, bins).filter(pl.col("n") > 0)
    n = int(table["n"].sum())
    if n == 0:
        return float("nan")
    gap = (table["accuracy"] - table["confidence"]).abs() * table["n"]
    return float(gap.sum() / n)


def item_matrix(decisions: pl.DataFrame, metric: str, keys: Sequence[str] = KEY) -> tuple[pl.DataFrame, np.ndarray]:
    """One row per configuration (``keys``), one column per question (sorted): the metric's per-item value.

    NaN where the metric does not apply or the item is missing; returns (configurations, matrix).
    """
    questions = sorted(decisions["question_id"].unique().to_list())
    frame = decisions.select(*keys, "question_id", value=METRICS[metric])
    wide = frame.pivot(on="question_id", index=list(keys), values="value", aggregate_function="first")
    for q in questions:
        if q not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(q))
    wide = wide.sort(list(keys))
    matrix = wide.select(questions).cast(pl.Float64).to_numpy() if questions else np.zeros((wide.height, 0))
    return wide.select(keys), np.asarray(matrix, dtype=np.float64)


def row_means(matrix: np.ndarray) -> np.ndarray:
    """Mean of each row over its non-NaN entries (NaN for a row without any)."""
    present = ~np.isnan(matrix)
    n = present.sum(axis=1)
    total = np.where(present, matrix, 0.0).sum(axis=1)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def intervals(
    matrix: np.ndarray,
    n_resamples: int,
    confidence: float,
    seed: int,
    batch: int = 256,
    *,
    items: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of row means, a batch of rows at a time (memory stays bounded;
    every batch resamples the same questions, as the seed fixes them). ``items``: how many items
    each entry sums (:func:`~declinecraft.core.stats.bootstrap_means`)."""
    if matrix.shape[0] == 0:
        return np.zeros(0), np.zeros(0)
    lows, highs = [], []
    for start in range(0, matrix.shape[0], batch):
        part = None if items is None else items[start : start + batch]
        low, high = stats.bootstrap_means(matrix[start : start + batch], n_resamples, confidence, seed, items=part)
        lows.append(low)
        highs.append(high)
    return np.concatenate(lows), np.concatenate(highs)


def summary(decisions: pl.DataFrame, *, n_resamples: int, confidence: float, seed: int, bins: int = 10) -> pl.DataFrame:
    """One row per configuration × condition × prompt × parser: counts, every rate with its interval, ECE.

    ECE is over answered items (their confidence against their credit) and has no interval.
    ``boundary_sharpness`` is reliability on the unanswerable half (productive abstention, K2G's
    Zone D) minus reliability on the answerable half (judged accuracy, K2G's Zones A-C pooled);
    negative when a policy separates the halves the wrong way round. It has no interval. K2G's
    own boundary sharpness is Zone D minus Zone C (§6.2: Llama-3-8B's 0.1127 - 0.4037 = -0.2910);
    our questions have no zones, so like with like is Llama's Zone D minus its pooled A-C accuracy,
    0.1127 - 0.4141 = -0.3014 (§6.1), which the paper prints beside ours.
    """
    counts = (
        decisions.group_by(KEY)
        .agg(
            n=pl.len(),
            n_answerable=(_ANS & ~_ERR).sum(),
            n_unanswerable=(~_ANS & ~_ERR).sum(),
            n_error=_ERR.sum(),
            n_unscored=(pl.col("credit").is_null() & ~_ERR).sum(),
            **{f"n_{s.lower()}": (_STATE == s).sum() for s in (ANSWER, ABSTAIN, REFUSE, PARSE_ERROR)},
            n_budget_exhausted=pl.col("budget_exhausted").sum(),
            n_truncated=pl.col("truncated").sum(),
        )
        .sort(list(KEY))
    )
    for metric in METRICS:
        configs, matrix = item_matrix(decisions, metric)
        point = row_means(matrix)
        low, high = intervals(matrix, n_resamples, confidence, seed)
        part = configs.with_columns(
            **{metric: pl.Series(point), f"{metric}_low": pl.Series(low), f"{metric}_high": pl.Series(high)}
        )
        counts = counts.join(part, on=list(KEY), how="left", nulls_equal=True)
    answered = decisions.filter(_STATE == ANSWER, pl.col("credit").is_not_null())
    errors = [
        {**dict(zip(KEY, key, strict=True)), "ece": ece(g["confidence"], g["credit"], bins)}
        for key, g in answered.group_by(KEY)
    ]
    ece_frame = pl.DataFrame(errors, schema={**{k: pl.String for k in KEY}, "ece": pl.Float64})
    counts = counts.with_columns(boundary_sharpness=pl.col("productive_abstention") - pl.col("answerable_accuracy"))
    return counts.join(ece_frame, on=list(KEY), how="left").sort(list(KEY))


def cost_sensitive(decisions: pl.DataFrame, lambdas: Sequence[float]) -> pl.DataFrame:
    """R_λ of every configuration at each λ, with its rank among the configurations (model ×
    thinking) of the same condition, prompt and parser (1 = best; ties share the best rank)."""
    scored = decisions.filter(~_ERR, pl.col("credit").is_not_null())
    counts = scored.group_by(KEY).agg(
        correct_answerable=pl.col("credit").filter(_ANS).sum(),
        n_answerable=_ANS.sum(),
        abstained_unanswerable=pl.col("credit").filter(~_ANS).sum(),
        n_unanswerable=(~_ANS).sum(),
    )
    rows = []
    for r in counts.iter_rows(named=True):
        for lam in lambdas:
            value = reliability_from_counts(
                r["correct_answerable"], r["n_answerable"], r["abstained_unanswerable"], r["n_unanswerable"], lam
            )
            rows.append({**r, "lam": float(lam), "reliability": value})
    schema = {
        **{k: pl.String for k in KEY},
        "correct_answerable": pl.Float64,
        "n_answerable": pl.UInt32,
        "abstained_unanswerable": pl.Float64,
        "n_unanswerable": pl.UInt32,
        "lam": pl.Float64,
        "reliability": pl.Float64,
    }
    frame = pl.DataFrame(rows, schema=schema)
    group = ["condition", "prompt", "parser", "lam"]
    rank = pl.col("reliability").rank("min", descending=True).over(group).cast(pl.Int64)
    return frame.with_columns(rank=rank).sort([*group, "rank", "model", "thinking"])


def outcomes(decisions: pl.DataFrame) -> pl.DataFrame:
    """The outcome profile (K2G §6.7), one outcome per item: correct / wrong answers and unnecessary
    abstention on answerable items, productive / missed abstention on unanswerable ones, and policy
    refusals and parse errors as outcomes of their own on either half (K2G keeps refusal apart from
    wrong answers and missed abstentions; ``refusal_answerable`` etc. split them by half). Correct
    and wrong split each judged answer by its credit; ``unscored`` answers lack a panel score. The
    outcomes sum to ``n`` (failed calls left out)."""
    ok = decisions.filter(~_ERR)
    ans, unans = _ANS, ~_ANS
    scored = pl.col("credit").is_not_null()
    answered = _STATE == ANSWER
    return (
        ok.group_by(KEY)
        .agg(
            correct=pl.col("credit").filter(ans & scored & answered).sum(),
            wrong=(1.0 - pl.col("credit")).filter(ans & scored & answered).sum(),
            unnecessary_abstention=(ans & (_STATE == ABSTAIN)).sum(),
            productive_abstention=(unans & (_STATE == ABSTAIN)).sum(),
            missed_abstention=(unans & answered).sum(),
            refusal=(_STATE == REFUSE).sum(),
            parse_error=(_STATE == PARSE_ERROR).sum(),
            refusal_answerable=(ans & (_STATE == REFUSE)).sum(),
            refusal_unanswerable=(unans & (_STATE == REFUSE)).sum(),
            parse_error_answerable=(ans & (_STATE == PARSE_ERROR)).sum(),
            parse_error_unanswerable=(unans & (_STATE == PARSE_ERROR)).sum(),
            unscored=(ans & answered & ~scored).sum(),
            n=pl.len(),
        )
        .sort(list(KEY))
    )


def calibration(decisions: pl.DataFrame, bins: int = 10) -> pl.DataFrame:
    """The reliability diagram's table: per configuration, the answered items' confidence bins."""
    answered = decisions.filter(_STATE == ANSWER, pl.col("credit").is_not_null())
    parts = [
        calibration_bins(g["confidence"], g["credit"], bins).with_columns(
            **{k: pl.lit(v) for k, v in zip(KEY, key, strict=True)}
        )
        for key, g in answered.group_by(KEY)
    ]
    if not parts:
        return pl.DataFrame(
            schema={
                **{k: pl.String for k in KEY},
                "bin": pl.Int64,
                "low": pl.Float64,
                "high": pl.Float64,
                "n": pl.Int64,
                "confidence": pl.Float64,
                "accuracy": pl.Float64,
            }
        )
    return pl.concat(parts).select(*KEY, "bin", "low", "high", "n", "confidence", "accuracy").sort([*KEY, "bin"])
