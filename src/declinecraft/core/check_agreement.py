"""How often each judge scored the judges' check set as labelled (:mod:`declinecraft.evaluation.judge_check`).

Here, below both the judge stage that scores the set and the analysis that reads it, so the
analysis counts a judge's agreement without importing the judge stage's prompts.
"""

from __future__ import annotations

import polars as pl

#: Columns of the scored check set (``06_judge/judge_check.parquet``).
SCHEMA = {
    "item_id": pl.String,
    "kind": pl.String,
    "judge": pl.String,
    "expected": pl.Float64,
    "score": pl.Float64,
    "agrees": pl.Boolean,
    "unparsable": pl.Boolean,
    "error": pl.String,
}


def check_agreement(scored: pl.DataFrame, min_agreement: float) -> pl.DataFrame:
    """Per judge: items scored, items scored as labelled, the share, and whether it passes
    (share at least ``min_agreement``); per kind in ``by_kind`` ("correct 15/17; ...")."""
    if scored.height == 0:
        return pl.DataFrame(
            schema={
                "judge": pl.String,
                "items": pl.Int64,
                "agree": pl.Int64,
                "share": pl.Float64,
                "passed": pl.Boolean,
                "by_kind": pl.String,
            }
        )
    kinds = (
        scored.group_by("judge", "kind")
        .agg(k=pl.col("agrees").sum(), n=pl.len())
        .sort("judge", "kind")
        .group_by("judge", maintain_order=True)
        .agg(by_kind=pl.concat_str(pl.col("kind"), pl.lit(" "), pl.col("k"), pl.lit("/"), pl.col("n")).str.join("; "))
    )
    return (
        scored.group_by("judge", maintain_order=True)
        .agg(items=pl.len().cast(pl.Int64), agree=pl.col("agrees").sum().cast(pl.Int64))
        .with_columns(share=pl.col("agree") / pl.col("items"))
        .with_columns(passed=pl.col("share") >= min_agreement)
        .join(kinds, on="judge", how="left")
        .sort("judge")
    )
