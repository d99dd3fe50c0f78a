"""ESB's human-validation sample (§7.7): 40 responses per evidence level, as an annotation sheet.

ESB's authors reviewed 200 stratified samples, 40 per level, checking that each evidence item is
valid for its level and that the automatic response class is right (its Table 6). We draw the
same: per level L1-L5 (and T, ours) up to ``per_level`` classified responses, seeded, and write
them with the context the model read and two empty columns for the annotator, like the sheet of
App. I (``analysis.annotation``):

- ``level_valid``: yes / no, whether the context is what its level says (L1 full support, L2
  partial support, L3 irrelevant, L4 none, L5 conflicting, T on topic but before the answer);
- ``human_class``: ANSWER / ABSTAIN / INVALID, ESB's class of the response.

Agreement of ``human_class`` with ``esb_judge`` per level is ESB's Table 6.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from declinecraft.views.evidence.calibration import LEVELS

#: ESB §7.7: 40 per level.
PER_LEVEL = 40
COLUMNS = (
    "item_id",
    "level",
    "order",
    "model",
    "prompt",
    "question_id",
    "query",
    "context",
    "response",
    "esb_judge",
    "l5_type",
    "level_valid",
    "human_class",
)


def validation_sample(
    judged: pl.DataFrame, instances: pl.DataFrame, *, per_level: int = PER_LEVEL, seed: int = 0
) -> pl.DataFrame:
    """Up to ``per_level`` classified responses of each level (seeded, without replacement), with
    their contexts and the annotator's empty columns (:data:`COLUMNS`), levels in order."""
    schema = {c: pl.String for c in COLUMNS}
    ok = judged.filter(pl.col("esb_judge").is_not_null())
    if ok.is_empty():
        return pl.DataFrame(schema=schema)
    ok = ok.join(instances.select("instance_id", "context"), on="instance_id", how="left")
    rng = np.random.default_rng(seed)
    parts = []
    for level in LEVELS:
        at = ok.filter(pl.col("level") == level).sort("response_id")
        if at.height:
            picked = np.sort(rng.permutation(at.height)[:per_level])
            parts.append(at[picked.tolist()])
    if not parts:
        return pl.DataFrame(schema=schema)
    sample = pl.concat(parts, how="diagonal_relaxed")
    return sample.select(
        pl.col("response_id").alias("item_id"),
        "level",
        "order",
        "model",
        "prompt",
        "question_id",
        "query",
        pl.col("context").fill_null(""),
        "response",
        "esb_judge",
        pl.col("l5_type").cast(pl.String),
        level_valid=pl.lit("", pl.String),
        human_class=pl.lit("", pl.String),
    ).cast(schema)
