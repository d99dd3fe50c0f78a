"""Beyond K2G: the same questions under both protocols, item by item.

A K2G decision (declared by the model, read by the strict parser) is set beside our response
judge's label of the same model's answer to the same question in the same condition
(``06_judge/judged.parquet``: no retrieval, or single-shot RAG at the answer stage's pipeline and
k; scenario on, App. J.2 prompt). The table reports how often the declared abstention matches the
judged one (ABSTAIN alone, and ABSTAIN or DENY, since K2G has no premise-denial state), Cohen's
κ of each, and the Correct Abstention Rate under each protocol on the unanswerable questions
both cover, with a paired bootstrap interval of its shift. Items where either side has no
decision (a failed call; an exhausted budget or unparsable label) are left out and counted.

An empty reply at the answer stage carries the judged label ANSWER without a judge call
(:func:`declinecraft.evaluation.judge.outcome`: ``label_source`` "empty"): it states no
abstention, so it counts as an answer on the judged side here, as in the main sections.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl

from declinecraft.core.agreement import cohen_kappa
from declinecraft.evaluation.metrics import correct_abstention_rate
from declinecraft.views.know2guess.decisions import ABSTAIN
from declinecraft.views.know2guess.protocol import RUN_KEY
from declinecraft.views.know2guess.reliability import intervals

POOLED = "all"


def with_judge_labels(decisions: pl.DataFrame, judged: pl.DataFrame, *, pipeline: str, k: int) -> pl.DataFrame:
    """Add ``judge_label``: our response judge's label of the same model, thinking, condition and question."""
    same = judged.filter(
        pl.col("scenario"),
        pl.col("prompt_variant") == "default",
        (pl.col("condition") == "no_rag")
        | ((pl.col("condition") == "single") & (pl.col("pipeline") == pipeline) & (pl.col("k") == k)),
    ).select("model", "thinking", "condition", "question_id", pl.col("label").alias("judge_label"))
    same = same.unique(["model", "thinking", "condition", "question_id"], keep="first")
    return decisions.join(same, on=["model", "thinking", "condition", "question_id"], how="left", maintain_order="left")


def _row(part: pl.DataFrame) -> dict[str, object]:
    """Agreement, κ and CAR of one group of paired items (strict parser, both sides decided)."""
    k2g = (part["state"] == ABSTAIN).to_list()
    out: dict[str, object] = {"n_pairs": part.height}
    for name, judged in (
        ("abstain", part["judge_label"] == "ABSTAIN"),
        ("decline", part["judge_label"].is_in(["ABSTAIN", "DENY"])),
    ):
        values = judged.to_list()
        out[f"agreement_{name}"] = float(np.mean([a == b for a, b in zip(k2g, values, strict=True)])) if k2g else None
        out[f"kappa_{name}"] = cohen_kappa(k2g, values, labels=[False, True]) if k2g else None
    unans = part.filter(~pl.col("answerable"))
    rates = unans.select(
        "question_id",
        "answerable",
        pl.col("judge_label").alias("label"),
        budget_exhausted=pl.lit(False),
        accuracy=pl.lit(None, pl.Float64),
    )
    out["n_unanswerable_pairs"] = unans.height
    out["car_k2g"] = float(cast(float, (unans["state"] == ABSTAIN).mean())) if unans.height else None
    out["car_judge"] = correct_abstention_rate(rates).rate
    out["car_judge_lenient"] = correct_abstention_rate(rates, lenient=True).rate
    ans = part.filter(pl.col("answerable"))
    out["abstain_answerable_k2g"] = float(cast(float, (ans["state"] == ABSTAIN).mean())) if ans.height else None
    out["abstain_answerable_judge"] = (
        float(cast(float, (ans["judge_label"] == "ABSTAIN").mean())) if ans.height else None
    )
    return out


#: What identifies one paired item: the same question asked of one configuration in one condition.
ITEM_KEY: tuple[str, ...] = ("model", "thinking", "condition", "question_id")


def _shift_sums(paired: pl.DataFrame) -> dict[str, tuple[float, int]]:
    """Per question: the sum of the CAR shifts (K2G abstained minus judge abstained) of its
    unanswerable items, one item per model, thinking and condition, and how many items there are."""
    unans = paired.filter(~pl.col("answerable"))
    if unans.select(ITEM_KEY).is_duplicated().any():
        raise ValueError("cross_protocol: two decisions of one model, thinking, condition and question in one group")
    shift = (pl.col("state") == ABSTAIN).cast(pl.Float64) - (pl.col("judge_label") == "ABSTAIN").cast(pl.Float64)
    per_question = unans.group_by("question_id").agg(total=shift.sum(), n=pl.len())
    return {r["question_id"]: (float(r["total"]), int(r["n"])) for r in per_question.iter_rows(named=True)}


def _shift_matrices(shifts: list[dict[str, tuple[float, int]]]) -> tuple[np.ndarray, np.ndarray]:
    """Rows x questions: summed shifts (NaN where a row has no item of the question) and item counts."""
    questions = sorted({q for s in shifts for q in s})
    total = np.full((len(shifts), len(questions)), np.nan)
    items = np.zeros((len(shifts), len(questions)))
    for i, row in enumerate(shifts):
        for j, q in enumerate(questions):
            if q in row:
                total[i, j], items[i, j] = row[q]
    return total, items


def cross_protocol(decisions: pl.DataFrame, *, n_resamples: int, confidence: float, seed: int) -> pl.DataFrame:
    """One row per run (strict parser) and one pooled row (model and thinking ``all``) per condition
    and prompt: agreement and κ of the declared with the judged abstention, CAR under each protocol,
    ``car_shift`` = K2G's CAR minus the judge's with its paired bootstrap interval, and the items
    left out (``n_unpaired``). ``decisions`` needs ``judge_label`` (:func:`with_judge_labels`).

    An item is a model, thinking, condition and question (:data:`ITEM_KEY`), so the pooled shift is
    the mean over every configuration's items; its interval resamples questions with all their
    items (a cluster bootstrap), the same resampled questions for every row."""
    strict = decisions.filter(pl.col("parser") == "strict")
    both = pl.col("state").is_not_null() & pl.col("judge_label").is_not_null()
    groups = [(dict(zip(RUN_KEY, key, strict=True)), part) for key, part in strict.group_by(RUN_KEY)]
    groups += [
        ({"model": POOLED, "thinking": POOLED, "condition": c, "prompt": p}, part)
        for (c, p), part in strict.group_by(["condition", "prompt"])
    ]
    rows, shifts = [], []
    for key, part in groups:
        paired = part.filter(both)
        rows.append({**key, **_row(paired), "n_unpaired": part.height - paired.height})
        shifts.append(_shift_sums(paired))
    total, items = _shift_matrices(shifts)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = np.nansum(total, axis=1) / items.sum(axis=1)
    low, high = intervals(total, n_resamples, confidence, seed, items=items)
    schema = {
        **{k: pl.String for k in RUN_KEY},
        "n_pairs": pl.Int64,
        "agreement_abstain": pl.Float64,
        "kappa_abstain": pl.Float64,
        "agreement_decline": pl.Float64,
        "kappa_decline": pl.Float64,
        "n_unanswerable_pairs": pl.Int64,
        "car_k2g": pl.Float64,
        "car_judge": pl.Float64,
        "car_judge_lenient": pl.Float64,
        "abstain_answerable_k2g": pl.Float64,
        "abstain_answerable_judge": pl.Float64,
        "n_unpaired": pl.Int64,
    }
    frame = pl.DataFrame(rows, schema=schema).with_columns(
        car_shift=pl.Series(point, dtype=pl.Float64),
        car_shift_low=pl.Series(low, dtype=pl.Float64),
        car_shift_high=pl.Series(high, dtype=pl.Float64),
    )
    return frame.sort([pl.col("model") == POOLED, *RUN_KEY])


def crosstab(decisions: pl.DataFrame) -> pl.DataFrame:
    """Counts of (K2G state, judge label) per run and answerability (strict parser); a missing side is "none"."""
    strict = decisions.filter(pl.col("parser") == "strict")
    return (
        strict.group_by(
            *RUN_KEY,
            "answerable",
            pl.col("state").fill_null("none").alias("k2g_state"),
            pl.col("judge_label").fill_null("none"),
        )
        .len("n")
        .sort([*RUN_KEY, "answerable", "k2g_state", "judge_label"])
    )
