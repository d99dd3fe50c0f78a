"""Parser and prompt sensitivity (K2G §4.3, §6.5–6.6): paired per-item differences with paired
item-bootstrap intervals.

Both compare one configuration with another that differs in one column only (the parser, or
the prompt), item by item: the difference of the two per-item values, averaged over the items
both have, with a percentile interval from resampling questions (the pairs stay together) and a
paired bootstrap p value (:func:`bootstrap_p`; K2G §6.5 reports "paired p < 10^-4" at 10,000
resamples, a bootstrap p's floor).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from declinecraft.views.know2guess.protocol import KEY, RUN_KEY, STANDARD
from declinecraft.views.know2guess.reliability import intervals, item_matrix, row_means

#: Rates compared between the parsers, and between each control prompt and the standard prompt.
PARSER_METRICS: tuple[str, ...] = ("reliability", "coverage", "parse_error_rate", "productive_abstention")
PROMPT_METRICS: tuple[str, ...] = (
    "reliability",
    "answerable_accuracy",
    "productive_abstention",
    "unnecessary_abstention",
    "coverage",
)

_SCHEMA_TAIL = {
    "metric": pl.String,
    "n_pairs": pl.Int64,
    "base_value": pl.Float64,
    "value": pl.Float64,
    "difference": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
    "p": pl.Float64,
}


def bootstrap_p(diffs: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Two-sided paired bootstrap p of each row's mean difference: twice the smaller share of
    resampled means at or beyond zero on either side, at least 1 / n_resamples (the resolution),
    at most 1. Rows are per-item differences (NaN: the pair is missing); items are resampled
    together across rows. NaN for a row without pairs."""
    diffs = np.atleast_2d(np.asarray(diffs, dtype=float))
    rows, n = diffs.shape
    if n == 0 or n_resamples < 1:
        return np.full(rows, np.nan)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(float)  # resamples x items
    present = ~np.isnan(diffs)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (weights @ np.where(present, diffs, 0.0).T) / (weights @ present.T.astype(float))
        below = np.nanmean(np.where(np.isnan(means), np.nan, means <= 0), axis=0)
        above = np.nanmean(np.where(np.isnan(means), np.nan, means >= 0), axis=0)
    p = np.clip(2 * np.minimum(below, above), 1.0 / n_resamples, 1.0)
    return np.where(present.any(axis=1), p, np.nan)


def paired(
    decisions: pl.DataFrame,
    metrics: Sequence[str],
    *,
    vary: str,
    base: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> pl.DataFrame:
    """Per-item differences (configuration minus its ``base``) where only column ``vary`` differs.

    One row per configuration whose ``vary`` is not ``base`` and metric: ``n_pairs`` (items both
    have), ``base_value`` and ``value`` (their means over those items), ``difference``, and the
    paired bootstrap interval ``low``/``high`` and p value ``p`` (:func:`bootstrap_p`).
    """
    rows: list[dict[str, object]] = []
    diffs: list[np.ndarray] = []
    for metric in metrics:
        configs, matrix = item_matrix(decisions, metric)
        index = {tuple(r): i for i, r in enumerate(configs.iter_rows())}
        for i, r in enumerate(configs.iter_rows(named=True)):
            j = index.get(tuple(base if k == vary else r[k] for k in KEY))
            if r[vary] == base or j is None:
                continue
            both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
            diffs.append(np.where(both, matrix[i] - matrix[j], np.nan))
            mean = row_means(np.vstack([np.where(both, matrix[j], np.nan), np.where(both, matrix[i], np.nan)]))
            rows.append({**r, "metric": metric, "n_pairs": int(both.sum()), "base_value": mean[0], "value": mean[1]})
    schema = {**{k: pl.String for k in KEY}, **_SCHEMA_TAIL}
    if not rows:
        return pl.DataFrame(schema=schema)
    stacked = np.vstack(diffs)
    low, high = intervals(stacked, n_resamples, confidence, seed)
    frame = pl.DataFrame(rows).with_columns(
        difference=pl.Series(row_means(stacked)),
        low=pl.Series(low),
        high=pl.Series(high),
        p=pl.Series(bootstrap_p(stacked, n_resamples, seed)),
    )
    return frame.select(list(schema)).cast(pl.Schema(schema))


def parser_sensitivity(decisions: pl.DataFrame, *, n_resamples: int, confidence: float, seed: int) -> pl.DataFrame:
    """Normalized minus strict parsing per run (K2G §6.6), and how many items changed state or answer.

    ``base_value`` is the strict value, ``value`` the normalized one.
    """
    table = paired(
        decisions,
        PARSER_METRICS,
        vary="parser",
        base="strict",
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    ).drop("parser")
    wide = decisions.filter(pl.col("error").is_null()).pivot(
        on="parser", index=[*RUN_KEY, "question_id"], values=["state", "answer"], aggregate_function="first"
    )
    if not {"state_strict", "state_normalized"} <= set(wide.columns):
        return table.with_columns(n_state_changed=pl.lit(0, pl.Int64), n_answer_changed=pl.lit(0, pl.Int64))
    changes = wide.group_by(RUN_KEY).agg(
        n_state_changed=(pl.col("state_strict") != pl.col("state_normalized")).sum().cast(pl.Int64),
        n_answer_changed=(pl.col("answer_strict").fill_null("") != pl.col("answer_normalized").fill_null(""))
        .sum()
        .cast(pl.Int64),
    )
    return table.join(changes, on=list(RUN_KEY), how="left").sort([*RUN_KEY, "metric"])


def prompt_sensitivity(decisions: pl.DataFrame, *, n_resamples: int, confidence: float, seed: int) -> pl.DataFrame:
    """Each control prompt minus the standard prompt, per model, thinking, condition and parser
    (K2G §6.5). ``base_value`` is the standard prompt's value."""
    table = paired(
        decisions,
        PROMPT_METRICS,
        vary="prompt",
        base=STANDARD,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    return table.sort([*KEY, "metric"])
