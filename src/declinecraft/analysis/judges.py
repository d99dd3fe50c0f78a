"""Judges and annotators (Table 5, Figure 20, App. A.1, Table 10).

Accuracy judges' scores are the per-judge columns of the judged table (``<prefix><judge id>``,
one score 0 / 0.5 / 1 per answer). Agreement uses :func:`agreement.cohen_kappa` (quadratic weights)
and :func:`agreement.fleiss_kappa`; self-preference uses :func:`stats.self_preference`.

The human validation (App. I) has two halves: :func:`annotation_sample` draws the balanced shared
set (Part 1: answers to unanswerable questions, equal numbers per response-judge label, spread over
conditions; Part 2: attempted answers to answerable questions, equal numbers per accuracy bin), and
:func:`human_agreement` computes Table 10 from the annotators' files once they exist.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from declinecraft.core import agreement, stats
from declinecraft.core.small_n import counted
from declinecraft.evaluation import metrics

SCORE_LEVELS = (0.0, 0.5, 1.0)
ANSWER_KEYS = ("model", "thinking", "condition", "pipeline", "k", "scenario", "prompt_variant", "question_id")


def judge_columns(frame: pl.DataFrame, prefix: str = "score_") -> list[str]:
    """The per-judge score columns of a judged table, in table order."""
    return [c for c in frame.columns if c.startswith(prefix) and frame.schema[c].is_numeric()]


#: Answers that attempt the question (a premise denial included) within the output budget.
_ATTEMPTED = pl.col("label").is_in(["ANSWER", "DENY"]) & ~pl.col("budget_exhausted")


def _by_rule(frame: pl.DataFrame) -> pl.Expr:
    """Attempted answers whose score a rule fixed at 0 without a judge call (App. I): premise
    denials and empty final texts (``label_source`` "empty" in the judged table)."""
    empty = (pl.col("label_source") == "empty").fill_null(False) if "label_source" in frame.columns else pl.lit(False)
    return (pl.col("label") == "DENY") | empty


def _scored(frame: pl.DataFrame) -> pl.DataFrame:
    """Answers the accuracy judges actually scored: abstentions, premise denials and empty texts
    get 0 by rule, and counting them would make the judges agree on answers none of them read."""
    return frame.filter(_ATTEMPTED & ~_by_rule(frame))


def _rule_rows(frame: pl.DataFrame, judges: Sequence[str]) -> int:
    """Attempted answers with a score from every one of ``judges`` that a rule fixed (left out)."""
    part = frame.filter(_ATTEMPTED & _by_rule(frame))
    return part.select(judges).drop_nulls().drop_nans().height if judges else 0


def _half_points(values: pl.Series) -> np.ndarray:
    return np.round(values.cast(pl.Float64).to_numpy() * 2.0) / 2.0


def judge_agreement(frame: pl.DataFrame, judges: Sequence[str]) -> pl.DataFrame:
    """Table 5: per judge pair the answers both scored, exact agreement, quadratic kappa and the
    mean difference (first minus second, in score units); a final row holds Fleiss' kappa.

    Only answers a judge read count (:func:`_scored`); ``excluded`` counts the attempted answers
    with both scores that a rule fixed at 0 (premise denials, empty texts) and that are left out.
    """
    scored = _scored(frame)
    rows = []
    for a, b in itertools.combinations(judges, 2):
        both = scored.select(a, b).drop_nulls().drop_nans()
        x, y = _half_points(both[a]), _half_points(both[b])
        kappa = (
            agreement.cohen_kappa(x.tolist(), y.tolist(), weights="quadratic", labels=list(SCORE_LEVELS))
            if x.size
            else float("nan")
        )
        note = "" if x.size else "no answer scored by both judges"
        if x.size and np.isnan(kappa):
            note = "both judges give one score only: kappa undefined"
        rows.append(
            dict(
                judge_a=a,
                judge_b=b,
                rows=int(x.size),
                excluded=_rule_rows(frame, [a, b]),
                exact=float(np.mean(x == y)) if x.size else float("nan"),
                kappa=kappa,
                mean_diff=float(np.mean(x - y)) if x.size else float("nan"),
                note=note,
            )
        )
    fleiss, note, n = float("nan"), f"{counted(len(judges), 'judges')}: Fleiss' kappa needs three or more", 0
    if len(judges) >= 3:
        every = scored.select(judges).drop_nulls().drop_nans()
        n = every.height
        if n:
            matrix = np.stack([_half_points(every[j]) for j in judges], axis=1)
            counts = np.stack([(matrix == level).sum(axis=1) for level in SCORE_LEVELS], axis=1)
            fleiss = agreement.fleiss_kappa(counts)
            note = "" if not np.isnan(fleiss) else "every judge gives one score only: kappa undefined"
        else:
            note = "no answer scored by every judge"
    rows.append(
        dict(
            judge_a="all",
            judge_b="all",
            rows=n,
            excluded=_rule_rows(frame, list(judges)) if len(judges) >= 3 else 0,
            exact=float("nan"),
            kappa=fleiss,
            mean_diff=float("nan"),
            note=note,
        )
    )
    schema = {
        "judge_a": pl.String,
        "judge_b": pl.String,
        "rows": pl.Int64,
        "excluded": pl.Int64,
        "exact": pl.Float64,
        "kappa": pl.Float64,
        "mean_diff": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def judge_run_accuracy(frame: pl.DataFrame, judges: Sequence[str], keys: Sequence[str]) -> pl.DataFrame:
    """Figure 20: each run's Answer Accuracy under each judge alone (columns named as the judges)."""
    out = None
    for judge in judges:
        part = metrics.summarize(frame.with_columns(accuracy=pl.col(judge)), by=list(keys), n_resamples=1)
        part = part.select(*keys, pl.col("accuracy").alias(judge))
        out = (
            part
            if out is None
            else out.join(part, on=list(keys), how="full", coalesce=True, nulls_equal=True, maintain_order="left_right")
        )
    return out if out is not None else frame.select(keys).unique()


def judge_leniency(frame: pl.DataFrame, judges: Sequence[str]) -> pl.DataFrame:
    """Each judge's mean score minus the mean of all judges on the answers every judge scored."""
    every = _scored(frame).select(judges).drop_nulls().drop_nans() if judges else pl.DataFrame()
    if not judges or every.height == 0:
        return pl.DataFrame(schema={"judge": pl.String, "rows": pl.Int64, "mean": pl.Float64, "leniency": pl.Float64})
    matrix = every.to_numpy().astype(float)
    overall = matrix.mean()
    return pl.DataFrame(
        {
            "judge": list(judges),
            "rows": [every.height] * len(judges),
            "mean": matrix.mean(axis=0),
            "leniency": matrix.mean(axis=0) - overall,
        }
    )


def self_preference_table(
    frame: pl.DataFrame,
    judges: Mapping[str, str | None],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """App. A.1: self-preference of each judge whose family also wrote evaluated answers.

    ``judges`` maps each score column to the judge's model family (None when unknown).
    ``frame`` must carry a ``family`` column (the answering model's family).
    """
    scored = _scored(frame)
    keys = [k for k in ANSWER_KEYS if k in scored.columns]
    long = scored.unpivot(on=list(judges), index=[*keys, "family"], variable_name="judge", value_name="score")
    families = set(scored["family"].drop_nulls().to_list())
    rows = []
    for judge, family in judges.items():
        if len(judges) < 2:
            result, note = stats.SelfPreference(*(float("nan"),) * 3, 0, 0), "needs at least two judges"
        elif family is None or family not in families:
            result, note = (
                stats.SelfPreference(*(float("nan"),) * 3, 0, 0),
                f"no evaluated model of the judge's family ({family})",
            )
        else:
            result = stats.self_preference(
                long, judge, family, answer_keys=keys, n_resamples=n_resamples, confidence=confidence, seed=seed
            )
            note = "" if result.n_own and result.n_other else "no answers on one side"
        rows.append(
            dict(
                judge=judge,
                family=family,
                estimate=result.estimate,
                low=result.low,
                high=result.high,
                n_own=result.n_own,
                n_other=result.n_other,
                note=note,
            )
        )
    schema = {
        "judge": pl.String,
        "family": pl.String,
        "estimate": pl.Float64,
        "low": pl.Float64,
        "high": pl.Float64,
        "n_own": pl.Int64,
        "n_other": pl.Int64,
        "note": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def other_family_rerank(frame: pl.DataFrame, judges: Mapping[str, str | None], keys: Sequence[str]) -> pl.DataFrame:
    """App. A.1's further check: each configuration's Answer Accuracy from the accuracy judges of
    other families only, against the whole panel's, as a Spearman rho over configurations.

    ``frame`` holds the judged rows of one condition with ``family`` (the answering model's) and
    the score columns named in ``judges`` (column -> judge family; None counts as another
    family). A configuration with no judge of another family keeps the whole panel. One row:
    configurations ranked, how many changed panel (``n_reduced``), rho, p, and a note when the
    ranking cannot change (every judge of the answering family, or none) or is undefined.
    """
    schema = {"n": pl.Int64, "n_reduced": pl.Int64, "rho": pl.Float64, "p": pl.Float64, "note": pl.String}
    cols = [c for c in judges if c in frame.columns]
    parts, reduced = [], 0
    for family in frame["family"].unique(maintain_order=True).to_list() if cols and frame.height else []:
        part = frame.filter(pl.col("family").eq_missing(family))
        others = [c for c in cols if judges[c] is None or judges[c] != family]
        if others and len(others) < len(cols):
            reduced += part.select(keys).unique().height
            complete = pl.all_horizontal(pl.col(c).is_not_null() for c in others)
            part = part.with_columns(accuracy=pl.when(complete).then(pl.mean_horizontal(others)))
        parts.append(part)
    if not parts:
        return pl.DataFrame(
            [dict(n=0, n_reduced=0, rho=float("nan"), p=float("nan"), note="no scored answers")], schema=schema
        )
    full = metrics.summarize(frame, by=list(keys), n_resamples=1).select(*keys, "accuracy")
    other = metrics.summarize(pl.concat(parts), by=list(keys), n_resamples=1).select(
        *keys, pl.col("accuracy").alias("other")
    )
    both = (
        full.join(other, on=list(keys), nulls_equal=True)
        .drop_nulls()
        .filter(pl.col("accuracy").is_not_nan() & pl.col("other").is_not_nan())
    )
    rho, p = stats.spearman(both["accuracy"].to_numpy(), both["other"].to_numpy())
    note = ""
    if reduced == 0:
        rho, p, note = (
            float("nan"),
            float("nan"),
            "no configuration has judges of both its own and another family: nothing to re-rank",
        )
    elif np.isnan(rho):
        note = f"{counted(both.height, 'configurations')} with accuracy: the rank correlation needs 3 that vary"
    return pl.DataFrame([dict(n=both.height, n_reduced=reduced, rho=rho, p=p, note=note)], schema=schema)


# --- human validation ---------------------------------------------------------------------------


def _balanced(frame: pl.DataFrame, stratum: str, spread: str, n: int, seed: int) -> pl.DataFrame:
    """Draw ``n`` rows split evenly over ``stratum`` values, round-robin over ``spread`` values."""
    levels = frame[stratum].unique().sort().to_list()
    if not levels:
        return frame.head(0)
    quota = {lvl: n // len(levels) + (1 if i < n % len(levels) else 0) for i, lvl in enumerate(levels)}
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed).with_row_index("_r")
    ranked = shuffled.with_columns(_k=pl.col("_r").rank("ordinal").over(stratum, spread))
    parts = [ranked.filter(pl.col(stratum) == lvl).sort("_k", "_r").head(q) for lvl, q in quota.items()]
    return pl.concat(parts).drop("_r", "_k")


def annotation_sample(
    frame: pl.DataFrame,
    *,
    part1: int = 70,
    part2: int = 30,
    seed: int = 0,
    texts: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The balanced shared annotation set of App. I (Part 1 response labels, Part 2 scores).

    ``texts`` (optional) holds ``question``, ``response`` and ``reference`` text per answer, keyed
    by the answer columns it shares with ``frame``; missing texts stay empty. Strata with too few
    answers give fewer items (never duplicates).
    """
    ok = frame.filter(~pl.col("budget_exhausted") & pl.col("label").is_not_null())
    p1 = _balanced(ok.filter(~pl.col("answerable")), "label", "condition", part1, seed)
    attempted = ok.filter(
        pl.col("answerable") & pl.col("label").is_in(["ANSWER", "DENY"]) & pl.col("accuracy").is_not_null()
    )
    binned = attempted.with_columns(
        bin=pl.when(pl.col("accuracy") <= 0.25)
        .then(pl.lit("low"))
        .when(pl.col("accuracy") > 0.75)
        .then(pl.lit("high"))
        .otherwise(pl.lit("middle"))
    )
    p2 = _balanced(binned, "bin", "condition", part2, seed)
    keys = [k for k in ANSWER_KEYS if k in frame.columns]
    sample = pl.concat(
        [
            p1.select(*keys, part=pl.lit(1), judge_label=pl.col("label"), judge_score=pl.lit(None, dtype=pl.Float64)),
            p2.select(
                *keys, part=pl.lit(2), judge_label=pl.col("label"), judge_score=(pl.col("accuracy") * 2).round() / 2
            ),
        ]
    ).with_row_index("n", offset=1)
    sample = sample.with_columns(
        item_id=pl.format("P{}-{}", pl.col("part"), pl.col("n").cast(pl.String).str.zfill(3))
    ).drop("n")
    for col in ("question", "response", "reference"):
        if texts is not None and col in texts.columns:
            on = [k for k in keys if k in texts.columns]
            sample = sample.join(texts.select(*on, col).unique(on, keep="first"), on=on, how="left", nulls_equal=True)
        else:
            sample = sample.with_columns(pl.lit(None, dtype=pl.String).alias(col))
    return sample.select("item_id", "part", "question", "response", "reference", *keys, "judge_label", "judge_score")


def _bootstrap(
    stat: Callable[[np.ndarray], float], n_items: int, n_resamples: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile interval of ``stat`` over items resampled with replacement."""
    if n_items == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = np.array([stat(rng.integers(0, n_items, n_items)) for _ in range(n_resamples)])
    if np.all(np.isnan(draws)):
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.nanquantile(draws, [alpha, 1 - alpha])
    return float(low), float(high)


def _mean_kappa(pairs: list[tuple[np.ndarray, np.ndarray]], options: Mapping[str, Any], idx: np.ndarray) -> float:
    values = [agreement.cohen_kappa(list(a[idx]), list(b[idx]), **options) for a, b in pairs]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def _majority(matrix: np.ndarray) -> np.ndarray:
    out = np.full(matrix.shape[0], None, dtype=object)
    for i, row in enumerate(matrix):
        vals, counts = np.unique([v for v in row if v is not None], return_counts=True)
        if counts.size and counts.max() >= 2:
            out[i] = vals[counts.argmax()]
    return out


def human_agreement(
    sample: pl.DataFrame,
    annotations: Mapping[str, pl.DataFrame],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Table 10 from annotators' files: kappas with bootstrap intervals over items.

    Each annotation frame has ``item_id`` and ``label`` (Part 1) and/or ``score`` (Part 2).
    Human-human is the mean over annotator pairs, judge-human the mean over annotators; Part 1 is
    unweighted, Part 2 quadratic-weighted on 0 / 0.5 / 1; "merged" counts DENY as ABSTAIN.
    """
    names = sorted(annotations)
    rows = []
    for part, col, judge_col in ((1, "label", "judge_label"), (2, "score", "judge_score")):
        items = sample.filter(pl.col("part") == part).select("item_id", judge_col)
        for name in names:
            ann = annotations[name]
            ann = (
                ann.select("item_id", pl.col(col).alias(name))
                if col in ann.columns
                else ann.select("item_id", pl.lit(None).alias(name))
            )
            if part == 1:
                ann = ann.with_columns(pl.col(name).cast(pl.String).str.to_uppercase().str.strip_chars())
            else:
                ann = ann.with_columns(pl.col(name).cast(pl.Float64))
            items = items.join(ann, on="item_id", how="left")
        judge = np.array(items[judge_col].to_list(), dtype=object)
        humans = (
            np.array([items[n].to_list() for n in names], dtype=object).T
            if names
            else np.empty((items.height, 0), dtype=object)
        )
        kw: dict[str, Any] = {} if part == 1 else {"weights": "quadratic", "labels": list(SCORE_LEVELS)}
        variants = [("", lambda v: v)]
        if part == 1:
            variants.append(("merged", lambda v: np.array(["ABSTAIN" if x == "DENY" else x for x in v], dtype=object)))
        for suffix, f in variants:
            hh = [(f(humans[:, i]), f(humans[:, j])) for i, j in itertools.combinations(range(len(names)), 2)]
            jh = [(f(judge), f(humans[:, i])) for i in range(len(names))]
            measures = {"human_human": hh, "judge_human": jh}
            if part == 1 and not suffix:
                measures["judge_majority"] = [(judge, _majority(humans))]
            for measure, pairs in measures.items():
                n = items.height
                value = _mean_kappa(pairs, kw, np.arange(n)) if pairs and n else float("nan")
                low, high = _bootstrap(
                    functools.partial(_mean_kappa, pairs, kw), n if pairs else 0, n_resamples, seed, confidence
                )
                need = 2 if measure == "human_human" else 1
                note = "" if len(names) >= need else f"{counted(len(names), 'annotator files')}; needs {need}"
                if not note and np.isnan(value):
                    note = "kappa undefined (no variation or no overlapping items)"
                rows.append(
                    dict(
                        part=part,
                        measure=measure + (f"_{suffix}" if suffix else ""),
                        n_items=n,
                        n_annotators=len(names),
                        kappa=value,
                        low=low,
                        high=high,
                        note=note,
                    )
                )
    schema = {
        "part": pl.Int64,
        "measure": pl.String,
        "n_items": pl.Int64,
        "n_annotators": pl.Int64,
        "kappa": pl.Float64,
        "low": pl.Float64,
        "high": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
