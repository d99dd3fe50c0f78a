"""The view's tables per model, thinking setting and prompt, from the annotated responses.

All rates use the responses with an ESB class (``esb_judge`` not null); the others are counted
in ``n_unclassified``. Intervals are percentile bootstraps over questions
(:func:`calibration.cluster_interval`, ESB §5.4: 2,000 resamples); tests are exact McNemar
(``core.stats.mcnemar_exact``) with Benjamini-Hochberg q values over the whole prompt-effect table
(``core.stats.benjamini_hochberg``).

The curve and the summary weigh each response by :func:`calibration.main_weights` (column
``weight``), assigned after unclassified responses are dropped: the two classified orders of an
L5 conflict pair count ½ each, and an order left alone by an unclassified twin counts 1, so every
question's L5 counts once (ESB's main grid); ``position_bias`` and ``l5_types`` keep both orders
at full weight.

Every McNemar test has one pair per question (:func:`question_pairs`). The one-pair rule: a
question's outcome under one side of a comparison is the mean of its classified responses there
(L5's two orders combined first: 0, ½ or 1; every other level has one response, 0 or 1); the
question is discordant when the two sides' outcomes differ, and counts for the side with the
higher one. The exact McNemar test runs on those counts (with one response a side it is the
classical test; with L5's halves it is the exact sign test on the per-question differences).
Position bias compares the two orders themselves, one pair per question by construction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
import polars as pl

from declinecraft.core import stats
from declinecraft.views.evidence import calibration
from declinecraft.views.evidence.classes import L5_TYPES

GROUP = ("model", "thinking", "prompt")


class Boot:
    """Bootstrap settings shared by every interval of a run."""

    def __init__(self, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0) -> None:
        self.n_resamples, self.confidence, self.seed = n_resamples, confidence, seed

    def rate(self, part: pl.DataFrame, hit: pl.Expr, value: pl.Expr | None = None) -> tuple[float, float, float, int]:
        """(rate, low, high, n) of ``hit`` (or mean of ``value``) over ``part``'s rows, by question,
        each row weighted by its ``weight`` column when there is one; n counts responses."""
        expr = (value if value is not None else hit.cast(pl.Float64)).alias("v")
        weight = (pl.col("weight") if "weight" in part.columns else pl.lit(1.0)).alias("w")
        per = (
            part.select("question_id", expr, weight)
            .drop_nulls("v")
            .group_by("question_id")
            .agg(s=(pl.col("v") * pl.col("w")).sum(), n=pl.col("w").sum(), rows=pl.len())
            .sort("question_id")
        )
        if per.height == 0:
            return float("nan"), float("nan"), float("nan"), 0
        num, den = per["s"].to_numpy().astype(float), per["n"].to_numpy().astype(float)
        low, high = calibration.cluster_interval(
            [num, den], calibration.ratio, n_resamples=self.n_resamples, confidence=self.confidence, seed=self.seed
        )
        return float(num.sum() / den.sum()), low, high, int(per["rows"].sum())

    def b_ece(self, part: pl.DataFrame, ideal: dict[str, float]) -> tuple[float, float, float]:
        """(B-ECE, low, high) over ``part``'s classified responses at the levels of ``ideal``."""
        rows = part.filter(pl.col("level").is_in(list(ideal)))
        if "weight" not in rows.columns:
            rows = rows.with_columns(weight=pl.lit(1.0))
        point = calibration.b_ece(
            rows["level"].to_list(), rows["abstained"].to_list(), ideal=ideal, weights=rows["weight"].to_list()
        )
        qids = sorted(rows["question_id"].unique().to_list())
        index = {q: i for i, q in enumerate(qids)}
        counts = np.zeros((2, len(ideal), len(qids)))
        for q, lv, a, w in rows.select("question_id", "level", "abstained", "weight").iter_rows():
            j = list(ideal).index(lv)
            counts[0, j, index[q]] += w * bool(a)
            counts[1, j, index[q]] += w
        statistic = calibration.b_ece_statistic(list(ideal.values()))
        low, high = calibration.cluster_interval(
            [*counts[0], *counts[1]],
            statistic,
            n_resamples=self.n_resamples,
            confidence=self.confidence,
            seed=self.seed,
        )
        return point, low, high


def _groups(frame: pl.DataFrame, keys: Sequence[str] = GROUP) -> Iterator[tuple[dict[str, Any], pl.DataFrame]]:
    for key, part in frame.sort(list(keys)).group_by(list(keys), maintain_order=True):
        yield dict(zip(keys, key, strict=True)), part


def _classified(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("esb_judge").is_not_null())


def weighted(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with a ``weight`` column: :func:`calibration.main_weights` per model, thinking
    setting and prompt, assigned after unclassified responses are dropped (½ for each classified
    order of an L5 pair, 1 for an order whose twin is unclassified, 1 elsewhere). An unclassified
    response enters no rate of classified responses; its weight is 1 / its question's responses
    at its level."""
    window = (*GROUP, "question_id", "level")
    classified = pl.col("esb_judge").is_not_null()
    n_classified = classified.sum().over(*window).cast(pl.Float64)
    return frame.with_columns(
        weight=pl.when(classified).then(1.0 / n_classified).otherwise(1.0 / pl.len().over(*window).cast(pl.Float64))
    )


def curve(frame: pl.DataFrame, boot: Boot) -> pl.DataFrame:
    """The evidence-sufficiency curve: abstention per level L1-L5 and T, per model and prompt."""
    rows = []
    for key, part in _groups(weighted(frame)):
        for level in calibration.LEVELS:
            at = part.filter(pl.col("level") == level)
            ok = _classified(at)
            rate, low, high, n = boot.rate(ok, pl.col("abstained"))
            rows.append(
                {
                    **key,
                    "level": level,
                    "n_responses": at.height,
                    "n": n,
                    "n_abstain": int(ok["abstained"].sum()),
                    "n_answer": int(ok["answered"].sum()),
                    "n_invalid": int((ok["esb_judge"] == "INVALID").sum()),
                    "n_unclassified": at.height - ok.height,
                    "abstention": rate,
                    "low": low,
                    "high": high,
                    "ideal": calibration.SCORED_IDEAL_WITH_T.get(level),
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            **{k: pl.String for k in GROUP},
            "level": pl.String,
            "n_responses": pl.Int64,
            "n": pl.Int64,
            "n_abstain": pl.Int64,
            "n_answer": pl.Int64,
            "n_invalid": pl.Int64,
            "n_unclassified": pl.Int64,
            "abstention": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "ideal": pl.Float64,
        },
    )


def summary(frame: pl.DataFrame, boot: Boot) -> pl.DataFrame:
    """Per model and prompt: accuracy (L1: :data:`calibration.ANSWER_EXPECTED`, our L2 being
    abstention-acceptable), the accuracy of answers given at L3-L4 (``memory_accuracy``),
    over-answer (L3-L5), wrong-answer (L5), B-ECE over L1 and L3-L5 with and without T
    (:data:`calibration.SCORED_IDEAL`), each with its interval, and the counts left out."""
    rows = []
    for key, part in _groups(weighted(frame)):
        ok = _classified(part)
        row: dict[str, Any] = {
            **key,
            "n_questions": part["question_id"].n_unique(),
            "n_responses": part.height,
            "n_unclassified": part.height - ok.height,
            "n_invalid": int((ok["esb_judge"] == "INVALID").sum()),
        }
        sufficient = part.filter(pl.col("level").is_in(calibration.ANSWER_EXPECTED))
        acc = boot.rate(sufficient, pl.lit(True), pl.col("accuracy"))
        row |= {
            "accuracy": acc[0],
            "accuracy_low": acc[1],
            "accuracy_high": acc[2],
            "n_accuracy": acc[3],
            "n_accuracy_missing": sufficient.height - acc[3],
        }
        # ESB §7.6's second failure mode: answering from memory when the evidence does not support
        # it. The accuracy of the answers given at L3-L4 (judged against the reference).
        memory = ok.filter(pl.col("level").is_in(["L3", "L4"]), pl.col("answered"))
        mem = boot.rate(memory, pl.lit(True), pl.col("accuracy"))
        row |= {
            "memory_accuracy": mem[0],
            "memory_accuracy_low": mem[1],
            "memory_accuracy_high": mem[2],
            "n_memory_accuracy": mem[3],
            "n_memory_answers": memory.height,
        }
        for name, levels, hit in (
            ("over_answer", calibration.INSUFFICIENT, pl.col("answered")),
            ("wrong_answer", ("L5",), pl.col("known_wrong").fill_null(False)),
        ):
            rate = boot.rate(ok.filter(pl.col("level").is_in(levels)), hit)
            row |= {name: rate[0], f"{name}_low": rate[1], f"{name}_high": rate[2], f"n_{name}": rate[3]}
        for name, ideal in (("b_ece", calibration.SCORED_IDEAL), ("b_ece_t", calibration.SCORED_IDEAL_WITH_T)):
            point, low, high = boot.b_ece(ok, ideal)
            row |= {name: point, f"{name}_low": low, f"{name}_high": high}
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(schema={k: pl.String for k in GROUP})


def _paired(part: pl.DataFrame, left: str, right: str, on: str, column: str, flag: str) -> pl.DataFrame:
    """Rows of ``part`` with ``column == left`` and ``== right`` paired on ``on`` (both with ``flag``)."""
    a = part.filter(pl.col(column) == left).select(on, pl.col(flag).alias("a"))
    b = part.filter(pl.col(column) == right).select(on, pl.col(flag).alias("b"))
    return a.join(b, on=on).drop_nulls(["a", "b"])


def question_pairs(part: pl.DataFrame, left: str, right: str, column: str, flag: str) -> pl.DataFrame:
    """One pair per question (the module's one-pair rule): ``a`` and ``b`` are the means of
    ``flag`` over each question's classified responses with ``column == left`` and ``== right``
    (L5's two orders combined first); questions without a value on both sides are left out."""

    def side(value: str, name: str) -> pl.DataFrame:
        rows = part.filter(pl.col(column) == value, pl.col(flag).is_not_null())
        return rows.group_by("question_id").agg(pl.col(flag).cast(pl.Float64).mean().alias(name))

    return side(left, "a").join(side(right, "b"), on="question_id").sort("question_id")


def _mcnemar(pairs: pl.DataFrame) -> dict[str, Any]:
    """Exact McNemar over one pair per row: discordant when ``a`` and ``b`` differ (booleans, or
    per-question means), counted for the higher side."""
    a, b_ = pairs["a"].cast(pl.Float64), pairs["b"].cast(pl.Float64)
    b = int((a > b_).sum())
    c = int((a < b_).sum())
    n = pairs.height
    rate_a = float(cast(float, a.mean())) if n else float("nan")
    rate_b = float(cast(float, b_.mean())) if n else float("nan")
    return {
        "n_pairs": n,
        "a": rate_a,
        "b": rate_b,
        "diff": rate_a - rate_b,
        "only_a": b,
        "only_b": c,
        "p": stats.mcnemar_exact(b, c),
    }


def position_bias(frame: pl.DataFrame) -> pl.DataFrame:
    """L5 by order: abstention and gold adoption with gold first vs conflict first (the same
    question's pair), exact McNemar on the discordant pairs; known-wrong rates by order too."""
    rows = []
    l5 = _classified(frame.filter(pl.col("level") == "L5"))
    for key, part in _groups(l5):
        row: dict[str, Any] = dict(key)
        for name, flag in (("abstain", "abstained"), ("gold", "gold_adopted"), ("wrong", "known_wrong")):
            m = _mcnemar(_paired(part, "gold_first", "conflict_first", "question_id", "order", flag))
            row |= {
                f"{name}_gold_first": m["a"],
                f"{name}_conflict_first": m["b"],
                f"{name}_diff": m["diff"],
                f"{name}_only_gold_first": m["only_a"],
                f"{name}_only_conflict_first": m["only_b"],
                f"{name}_p": m["p"],
                "n_pairs": m["n_pairs"],
            }
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(schema={k: pl.String for k in GROUP})


def prompt_effects(frame: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """P2, P3 and J2 against P1 on the same questions, per model and level: abstention rates, the
    change (points as a proportion), exact McNemar p over one pair per question (L5's two orders
    combined first, :func:`question_pairs`) and Benjamini-Hochberg q over the table."""
    rows = []
    ok = _classified(frame)
    for key, part in _groups(ok, ("model", "thinking")):
        prompts = set(part["prompt"].unique().to_list())
        for level in calibration.LEVELS:
            at = part.filter(pl.col("level") == level)
            for other in ("P2", "P3", "J2"):
                if "P1" not in prompts or other not in prompts:
                    continue
                m = _mcnemar(question_pairs(at, other, "P1", "prompt", "abstained"))
                rows.append(
                    {
                        **key,
                        "level": level,
                        "prompt": other,
                        "n_pairs": m["n_pairs"],
                        "abstention_p1": m["b"],
                        "abstention": m["a"],
                        "change": m["diff"],
                        "only_prompt": m["only_a"],
                        "only_p1": m["only_b"],
                        "p": m["p"],
                    }
                )
    schema = {
        "model": pl.String,
        "thinking": pl.String,
        "level": pl.String,
        "prompt": pl.String,
        "n_pairs": pl.Int64,
        "abstention_p1": pl.Float64,
        "abstention": pl.Float64,
        "change": pl.Float64,
        "only_prompt": pl.Int64,
        "only_p1": pl.Int64,
        "p": pl.Float64,
    }
    table = pl.DataFrame(rows, schema=schema)
    q = stats.benjamini_hochberg(table["p"].to_numpy()) if table.height else np.array([])
    return table.with_columns(q=pl.Series(q, dtype=pl.Float64), significant=pl.Series(q < alpha, dtype=pl.Boolean))


def l5_types(frame: pl.DataFrame) -> pl.DataFrame:
    """The L5 response distribution: count and share of each type per model, prompt and order
    (``all`` pools both orders)."""
    l5 = frame.filter(pl.col("level") == "L5", pl.col("l5_type").is_not_null())
    both = pl.concat([l5, l5.with_columns(order=pl.lit("all"))])
    rows = []
    for key, part in _groups(both, (*GROUP, "order")):
        for kind in L5_TYPES:
            n = int((part["l5_type"] == kind).sum())
            rows.append({**key, "type": kind, "n": n, "share": n / part.height})
    schema = {**{k: pl.String for k in (*GROUP, "order")}, "type": pl.String, "n": pl.Int64, "share": pl.Float64}
    return pl.DataFrame(rows, schema=schema)
