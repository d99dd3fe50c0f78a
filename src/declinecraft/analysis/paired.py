"""Paired comparisons on the same questions (App. H, A.5): exact McNemar tests and BH families.

Every test here pairs two runs on the unanswerable questions they both answered (a budget-exhausted
response on either side drops the pair) and asks whether abstention moved more one way than the
other. The p values come from :func:`stats.mcnemar_exact` and :func:`stats.thinking_transitions`;
q values from :func:`stats.benjamini_hochberg`, one call per family of comparisons:

* ``main_grid``: per configuration single vs no RAG and iterative vs single, and per model and
  condition thinking on vs off (all paired comparisons of the main grid at temperature 0);
* ``main_grid_lenient``: the same under the lenient rule (App. I);
* ``pipeline_ablation``, ``k_sweep``, ``scenario_ablation``: one family per ablation;
* thinking answer changes: one family per retrieval condition and kind of change (A<->D, A<->X).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from declinecraft.core import stats

#: Columns of a paired-test table, in order.
PAIRED_COLUMNS = (
    "family",
    "comparison",
    "model",
    "thinking",
    "condition",
    "base",
    "other",
    "n_pairs",
    "lost",
    "gained",
    "car_base",
    "car_other",
    "diff",
    "p",
    "q",
    "significant",
    "direction",
    "note",
)


def _hit(lenient: bool) -> pl.Expr:
    """Per-response abstention indicator; null where the budget ran out (left out of pairs)."""
    hit = pl.col("label").is_in(["ABSTAIN", "DENY"]) if lenient else pl.col("label") == "ABSTAIN"
    return pl.when(pl.col("budget_exhausted") | pl.col("label").is_null()).then(None).otherwise(hit)


def paired_abstention(
    frame: pl.DataFrame,
    *,
    group: Sequence[str],
    column: str,
    base: Any,
    other: Any,
    lenient: bool = False,
    comparison: str | None = None,
) -> pl.DataFrame:
    """Exact McNemar test of abstention, ``column == other`` against ``column == base``, per group.

    ``lost`` counts questions abstained on in the base run only, ``gained`` in the other run only.
    A group present on one side only gets NaN p and a note naming the missing side; a group
    without discordant pairs gets p = 1 (no evidence of a shift).
    """
    group = list(group)
    unans = frame.filter(~pl.col("answerable")).select(*group, column, "question_id", hit=_hit(lenient))
    sides = {}
    for name, value in (("a", base), ("b", other)):
        side = unans.filter(pl.col(column) == value).drop(column)
        # Groups keep the order they first appear in, so the table's rows are the same every run.
        sides[name] = side.group_by([*group, "question_id"], maintain_order=True).agg(pl.col("hit").first().alias(name))
    groups = pl.concat([sides["a"].select(group), sides["b"].select(group)]).unique(maintain_order=True)
    pairs = sides["a"].join(sides["b"], on=[*group, "question_id"], how="inner", nulls_equal=True)
    pairs = pairs.drop_nulls(["a", "b"])
    counts = pairs.group_by(group).agg(
        n_pairs=pl.len(),
        lost=(pl.col("a") & ~pl.col("b")).sum(),
        gained=(~pl.col("a") & pl.col("b")).sum(),
        car_base=pl.col("a").mean(),
        car_other=pl.col("b").mean(),
    )
    present = {n: s.select(group).unique().with_columns(pl.lit(True).alias(f"has_{n}")) for n, s in sides.items()}
    out = groups.join(counts, on=group, how="left", nulls_equal=True, maintain_order="left")
    for has in present.values():
        out = out.join(has, on=group, how="left", nulls_equal=True, maintain_order="left")
    out = out.with_columns(
        pl.col("n_pairs", "lost", "gained").fill_null(0).cast(pl.Int64),
        pl.col("has_a", "has_b").fill_null(False),
    )
    p_values, notes = [], []
    for row in out.iter_rows(named=True):
        if not row["has_a"] or not row["has_b"]:
            missing = base if not row["has_a"] else other
            p_values.append(float("nan"))
            notes.append(f"no {column}={missing} responses to pair with")
        elif row["n_pairs"] == 0:
            p_values.append(float("nan"))
            notes.append("no question answered in both runs within the budget")
        else:
            p_values.append(stats.mcnemar_exact(row["lost"], row["gained"]))
            notes.append("" if row["lost"] + row["gained"] else "no discordant pairs")
    direction = (
        pl.when(pl.col("gained") > pl.col("lost"))
        .then(pl.lit("increase"))
        .when(pl.col("gained") < pl.col("lost"))
        .then(pl.lit("decrease"))
        .otherwise(pl.lit("none"))
    )
    out = out.with_columns(
        pl.Series("p", p_values, dtype=pl.Float64),
        pl.Series("note", notes, dtype=pl.String),
        comparison=pl.lit(comparison or f"{other}_vs_{base}"),
        base=pl.lit(str(base)),
        other=pl.lit(str(other)),
        diff=pl.col("car_other") - pl.col("car_base"),
        direction=direction,
    ).drop("has_a", "has_b")
    return _conform(out)


def _dtype(name: str) -> pl.DataType:
    if name in ("n_pairs", "lost", "gained"):
        return pl.Int64()
    if name == "significant":
        return pl.Boolean()
    return pl.Float64() if name in ("car_base", "car_other", "diff", "p", "q") else pl.String()


def _conform(table: pl.DataFrame) -> pl.DataFrame:
    """Give a paired-test table every column of :data:`PAIRED_COLUMNS` (missing ones null)."""
    if table.height == 0:
        return pl.DataFrame(schema={name: _dtype(name) for name in PAIRED_COLUMNS})
    cols = []
    for name in PAIRED_COLUMNS:
        dtype = _dtype(name)
        expr = pl.col(name) if name in table.columns else pl.lit(None)
        cols.append(expr.cast(dtype).alias(name))
    return table.select(cols)


def with_bh(table: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """Add BH q values within each ``family`` and ``significant = q < alpha``."""
    if table.height == 0:
        return table
    parts = []
    for (_,), part in table.group_by(["family"], maintain_order=True):
        q = stats.benjamini_hochberg(part["p"].fill_null(np.nan).to_numpy())
        parts.append(part.with_columns(pl.Series("q", q, dtype=pl.Float64)))
    out = pl.concat(parts)
    return out.with_columns(significant=pl.when(pl.col("q").is_nan()).then(None).otherwise(pl.col("q") < alpha))


def main_grid_tests(main: pl.DataFrame, *, lenient: bool = False, alpha: float = 0.05) -> pl.DataFrame:
    """The main grid's family: single vs no RAG, iterative vs single, thinking on vs off."""
    family = "main_grid_lenient" if lenient else "main_grid"
    config = ["model", "thinking"]
    parts = [
        paired_abstention(main, group=config, column="condition", base="no_rag", other="single", lenient=lenient),
        paired_abstention(main, group=config, column="condition", base="single", other="iterative", lenient=lenient),
    ]
    both = main.group_by("model").agg(pl.col("thinking").n_unique().alias("n")).filter(pl.col("n") > 1)
    pairs = main.filter(pl.col("model").is_in(both["model"].implode()))
    if pairs.height:
        parts.append(
            paired_abstention(
                pairs,
                group=["model", "condition"],
                column="thinking",
                base="off",
                other="on",
                lenient=lenient,
                comparison="thinking_on_vs_off",
            )
        )
    table = pl.concat(parts).with_columns(family=pl.lit(family))
    return with_bh(table, alpha=alpha)


def ablation_tests(single: pl.DataFrame, *, family: str, column: str, base: Any, alpha: float = 0.05) -> pl.DataFrame:
    """One ablation family: every other value of ``column`` against ``base``, per configuration.

    ``single`` holds the single-shot runs of the ablation; configurations without a ``base`` run
    get NaN p with a note. An ablation absent from the run gives an empty table.
    """
    if single.height == 0 or column not in single.columns:
        return _conform(pl.DataFrame())
    # Only configurations run under two or more values of the ablated column are compared.
    varied = single.group_by("model", "thinking").agg(pl.col(column).n_unique().alias("_n")).filter(pl.col("_n") > 1)
    single = single.join(varied.select("model", "thinking"), on=["model", "thinking"], how="semi")
    others = [v for v in single[column].unique(maintain_order=True).to_list() if v != base and v is not None]
    if not others:
        return _conform(pl.DataFrame())
    parts = [paired_abstention(single, group=["model", "thinking"], column=column, base=base, other=o) for o in others]
    table = pl.concat(parts).with_columns(family=pl.lit(family), condition=pl.lit("single"))
    return with_bh(table, alpha=alpha)


def thinking_transitions_table(main: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """Table 8 / Figure 25: matched label changes per model and condition when thinking is on.

    q values: one BH family per retrieval condition and kind of change (``q_ad``, ``q_ax``).
    ``net_shift`` is (A->D - D->A) / n; models without both thinking settings are left out.
    """
    unans = main.filter(~pl.col("answerable")).select(
        "model",
        "thinking",
        "condition",
        "question_id",
        label=pl.when(pl.col("budget_exhausted")).then(None).otherwise(pl.col("label")),
    )
    keys = ["model", "condition", "question_id"]
    off = unans.filter(pl.col("thinking") == "off").drop("thinking").unique(keys, keep="first")
    on = unans.filter(pl.col("thinking") == "on").drop("thinking").unique(keys, keep="first")
    joined = off.join(on, on=keys, how="inner", suffix="_on").sort(keys)
    rows = []
    for (model, condition), part in joined.group_by(["model", "condition"], maintain_order=True):
        result = stats.thinking_transitions(part["label"].to_list(), part["label_on"].to_list())
        rows.append({"model": model, "condition": condition, **result})
    schema = {"model": pl.String, "condition": pl.String, "n": pl.Int64}
    schema |= {c: pl.Int64 for c in ("a_to_d", "d_to_a", "a_to_x", "x_to_a")}
    schema |= {"p_ad": pl.Float64, "p_ax": pl.Float64}
    table = pl.DataFrame(rows, schema=schema)
    if table.height == 0:
        return table.with_columns(
            *(pl.lit(None, dtype=pl.Float64).alias(c) for c in ("q_ad", "q_ax", "net_shift")),
            *(pl.lit(None, dtype=pl.Boolean).alias(c) for c in ("sig_ad", "sig_ax")),
        )
    parts = []
    for (_,), part in table.group_by(["condition"], maintain_order=True):
        parts.append(
            part.with_columns(
                pl.Series("q_ad", stats.benjamini_hochberg(part["p_ad"].to_numpy()), dtype=pl.Float64),
                pl.Series("q_ax", stats.benjamini_hochberg(part["p_ax"].to_numpy()), dtype=pl.Float64),
            )
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        return pl.concat(parts).with_columns(
            sig_ad=pl.col("q_ad") < alpha,
            sig_ax=pl.col("q_ax") < alpha,
            net_shift=(pl.col("a_to_d") - pl.col("d_to_a")) / pl.col("n").cast(pl.Float64),
        )


def significance_counts(paired: pl.DataFrame) -> pl.DataFrame:
    """Per family and comparison: tests run, significant increases and decreases (q < alpha)."""
    sig = pl.col("significant").fill_null(False)
    return paired.group_by(["family", "comparison"], maintain_order=True).agg(
        n_tests=pl.col("p").is_not_nan().sum(),
        n_increase=(sig & (pl.col("direction") == "increase")).sum(),
        n_decrease=(sig & (pl.col("direction") == "decrease")).sum(),
        n_all_decrease=(pl.col("direction") == "decrease").sum(),
        n_all_increase=(pl.col("direction") == "increase").sum(),
    )
