"""How each number the paper quotes is read off the analysis tables.

Every function here but :func:`table`, :func:`one` and :func:`thinking_significant` builds a
getter: a function of the analysis tables (by name, as the paper stage reads them back) that
returns one value or raises :class:`Missing` with the reason the run cannot supply it.
:mod:`declinecraft.paper.numbers` pairs each getter with its macro and format.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, cast

import polars as pl

Tables = Mapping[str, pl.DataFrame]
Getter = Callable[[Tables], Any]

#: Columns of a numbers table (computed numbers and run settings alike), as ``numbers.csv`` has them.
#: ``n`` is what a number rests on (questions, configurations; null when not applicable) and
#: ``small`` the small-n caveat when n is below the rule's threshold (empty otherwise).
SCHEMA = {
    "macro": pl.String,
    "what": pl.String,
    "value": pl.Float64,
    "text": pl.String,
    "reason": pl.String,
    "reported": pl.String,
    "fmt": pl.String,
    "n": pl.Float64,
    "small": pl.String,
}


class Missing(Exception):
    """A number the run's results cannot supply; the message is the reason."""


def table(t: Tables, name: str) -> pl.DataFrame:
    """The analysis table ``name``; :class:`Missing` when the run has none or it is empty."""
    found = t.get(name)
    if found is None or found.height == 0:
        raise Missing(f"no {name} results in this run")
    return found


def _where(frame: pl.DataFrame, where: Mapping[str, Any]) -> pl.DataFrame:
    """Keep the rows whose columns equal the given values."""
    for key, value in where.items():
        frame = frame.filter(pl.col(key) == value)
    return frame


def one(frame: pl.DataFrame, col: str, what: str, **where: Any) -> Any:
    """The value of ``col`` in the first row matching ``where``; :class:`Missing` (with the row's
    ``note`` when it has one) when no row matches or the value is null or NaN."""
    frame = _where(frame, where)
    if frame.height == 0:
        raise Missing(f"no row for {what}")
    value = frame[col][0]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        note = frame["note"][0] if "note" in frame.columns and frame["note"][0] else "undefined for this run"
        raise Missing(f"{what}: {note}")
    return value


def mean(condition: str, metric: str = "car") -> Getter:
    """Mean of ``metric`` over configurations under ``condition`` (``condition_means``)."""
    return lambda t: one(
        table(t, "condition_means"), "mean", f"mean {metric} ({condition})", condition=condition, metric=metric
    )


def significant(comparison: str, direction: str, family: str = "main_grid") -> Getter:
    """How many configurations a comparison significantly moves ``up`` or down (``significance_counts``)."""
    col = "n_increase" if direction == "up" else "n_decrease"
    return lambda t: one(
        table(t, "significance_counts"), col, f"{family} {comparison}", family=family, comparison=comparison
    )


def association(name: str, col: str = "rho") -> Getter:
    """One column (rho, p, n) of a named rank association (``associations``)."""
    return lambda t: one(table(t, "associations"), col, name, name=name)


def difference(quantity: str, condition: str = "", col: str = "mean") -> Getter:
    """One column of a mean paired difference over models (``model_differences``)."""

    def get(t: Tables) -> Any:
        frame = table(t, "model_differences").with_columns(pl.col("condition").fill_null(""))
        return one(frame, col, f"{quantity} {condition}".strip(), quantity=quantity, condition=condition)

    return get


def transitions(condition: str, expr: Callable[[pl.DataFrame], Any]) -> Getter:
    """``expr`` of the matched thinking on/off pairs under ``condition`` (``thinking_transitions``)."""

    def get(t: Tables) -> Any:
        part = table(t, "thinking_transitions").filter(pl.col("condition") == condition)
        if part.height == 0:
            raise Missing(f"no matched thinking pairs under {condition}")
        return expr(part)

    return get


def count_rows(name: str, what: str, **where: Any) -> Getter:
    """How many rows of table ``name`` match ``where`` (``what`` names them for the reader)."""
    return lambda t: _where(table(t, name), where).height


def n_unique(name: str, col: str, **where: Any) -> Getter:
    """How many distinct values ``col`` takes in the rows of table ``name`` matching ``where``."""
    return lambda t: _where(table(t, name), where)[col].n_unique()


def frontier(condition: str, col: str) -> Getter:
    """The configuration with the highest CAR at the attempt-rate requirement (``frontier``):
    its ``col``, or its printed label when ``col`` is ``label``."""

    def get(t: Tables) -> Any:
        row = table(t, "frontier").filter((pl.col("condition") == condition) & pl.col("best_at_min_attempt"))
        if row.height == 0:
            raise Missing(f"no {condition} configuration reaches the attempt-rate requirement")
        if col == "label":
            grid = table(t, "main_grid").filter(pl.col("condition") == condition)
            hit = grid.join(row.select("model", "thinking"), on=["model", "thinking"])
            return hit["config_label"][0] if hit.height else row["model"][0]
        return row[col][0]

    return get


def ablation_mean(name: str, col: str, metric: str = "car", **where: Any) -> Getter:
    """Mean ``metric`` over the rows of ablation table ``name`` matching ``where``."""

    def get(t: Tables) -> Any:
        values = _where(table(t, name), where)[metric].drop_nulls().drop_nans()
        if values.len() == 0:
            raise Missing(f"no {name} rows with {where}")
        return values.mean()

    return get


def grid_extreme(metric: str, fn: str) -> Getter:
    """The ``min`` or ``max`` of ``metric`` over single-shot configurations (``main_grid``)."""

    def get(t: Tables) -> Any:
        values = table(t, "main_grid").filter(pl.col("condition") == "single")[metric].drop_nulls().drop_nans()
        if values.len() == 0:
            raise Missing("no single-shot results")
        return getattr(values, fn)()

    return get


def judge_agreement(col: str, judge_a: str = "all") -> Getter:
    """One column of the accuracy judges' agreement (``judge_agreement``; ``all`` is Fleiss')."""
    return lambda t: one(table(t, "judge_agreement"), col, f"judge agreement {judge_a}", judge_a=judge_a)


def widest_judge_pair(col: str) -> Getter:
    """A column of the pair of accuracy judges whose mean score difference is farthest from 0
    (``judge_agreement``, as Table 5 prints it: first judge minus second); ``judges`` gives the
    pair as Table 5 names it ("a vs b"), so the text's sign and Table 5's are one number."""

    def get(t: Tables) -> Any:
        pairs = table(t, "judge_agreement").filter(pl.col("judge_a") != "all").drop_nulls("mean_diff")
        if pairs.height == 0:
            raise Missing("fewer than two accuracy judges scored the same answers")
        row = pairs.sort(pl.col("mean_diff").abs(), descending=True, maintain_order=True).row(0, named=True)
        if col == "judges":
            return " vs ".join(row[c].removeprefix("score_") for c in ("judge_a", "judge_b"))
        return row[col]

    return get


def human_kappa(part: int, measure: str) -> Getter:
    """A kappa of Table 10 (``human_agreement``)."""
    return lambda t: one(table(t, "human_agreement"), "kappa", f"Table 10 {measure}", part=part, measure=measure)


def leakage_top(col: str) -> Getter:
    """The model most accurate on unanswerable questions without retrieval (``leakage_model``):
    its ``col``, or its display name when ``col`` is ``model``."""

    def get(t: Tables) -> Any:
        frame = table(t, "leakage_model").drop_nulls("accuracy").sort("accuracy", descending=True, maintain_order=True)
        if frame.height == 0:
            raise Missing("no scored leakage answers")
        if col == "model":
            facts = t.get("facts")
            hit = facts.filter(pl.col("model") == frame["model"][0]) if facts is not None else pl.DataFrame()
            return hit["display_name"][0] if hit.height else frame["model"][0]
        return frame[col][0]

    return get


def families_denying(condition: str) -> Getter:
    """How many families deny the premise more often than they abstain (``family_label_shares``)."""
    return lambda t: int(
        table(t, "family_label_shares").filter(pl.col("condition") == condition)["deny_gt_abstain"].sum()
    )


def corpus(side: str, col: str) -> Getter:
    """A statistic of one corpus side, ``pre`` or ``post`` (``corpus_stats``)."""
    return lambda t: one(table(t, "corpus_stats"), col, f"corpus {side} {col}", corpus=side)


def retrieval_audit(audit: str, col: str = "rate") -> Getter:
    """A rate (or its ``n``) of the verify stage's retrieval audit (``audit_retrieval``)."""
    return lambda t: one(table(t, "audit_retrieval"), col, f"retrieval audit {audit}", audit=audit)


def _fates(t: Tables, answerable: bool) -> pl.DataFrame:
    """The verify stage's fate counts (``audit_fates``) of one half."""
    return table(t, "audit_fates").filter(pl.col("answerable") == answerable)


def kept(answerable: bool) -> Getter:
    """Questions of one half in the benchmark (candidates the verify stage kept)."""
    return lambda t: int(_fates(t, answerable).filter(pl.col("fate") == "kept")["n"].sum())


def drafts(answerable: bool) -> Getter:
    """Candidates of one half the generator drafted, whatever their fate (``audit_fates``)."""
    return lambda t: int(_fates(t, answerable)["n"].sum())


def style_auc(variant: str) -> Getter:
    """The AUC of a classifier telling the halves apart by style or full text (``audit_style``)."""
    return lambda t: one(table(t, "audit_style"), "auc", f"style AUC {variant}", variant=variant)


def second_judge(col: str) -> Getter:
    """Mean agreement (or kappa, or ``n`` responses) of the second response judges with the response judge."""

    def get(t: Tables) -> Any:
        frame = table(t, "response_judge_agreement").filter(
            (pl.col("scope") == "all") & (pl.col("comparison") != "rule_label")
        )
        if frame.height == 0:
            raise Missing("no second response judge in this run")
        return frame[col].mean()

    return get


def thinking_significant(t: Tables, condition: str, direction: str) -> int:
    """How many models switching thinking on significantly ``increase`` or ``decrease`` CAR."""
    tests = table(t, "paired_tests").filter(
        (pl.col("family") == "main_grid")
        & (pl.col("comparison") == "thinking_on_vs_off")
        & (pl.col("condition") == condition)
    )
    if tests.height == 0:
        raise Missing(f"no thinking on/off pairs under {condition}")
    return int((tests["significant"].fill_null(False) & (tests["direction"] == direction)).sum())


# --- how many questions a number rests on (the small-n rule, declinecraft.core.small_n) ---------

#: The count column of ``main_grid`` behind each per-configuration metric.
QUESTIONS_OF = {
    "car": "car_n",
    "car_lenient": "car_n",
    "share_deny": "car_n",
    "share_answer": "car_n",
    "attempt": "attempt_n",
    "accuracy": "accuracy_n",
    "accuracy_when_attempted": "attempt_k",
}


def questions(condition: str, metric: str = "car") -> Getter:
    """The fewest questions any configuration's ``metric`` rests on under ``condition`` (a mean over
    configurations is no firmer than its thinnest one); configurations without data are left out."""
    column = QUESTIONS_OF[metric]

    def get(t: Tables) -> Any:
        grid = table(t, "main_grid").filter(pl.col("condition") == condition)
        if column not in grid.columns:
            raise Missing(f"main_grid has no {column}")
        counts = grid[column].drop_nulls()
        counts = counts.filter(counts > 0)
        return int(cast(int, counts.min())) if counts.len() else 0

    return get


def style_questions(variant: str) -> Getter:
    """Questions in the smaller half of the style classifier's data (``audit_style``): an AUC
    ranks every pair of one answerable and one unanswerable question, so the smaller half bounds it."""

    def get(t: Tables) -> Any:
        halves = [
            one(table(t, "audit_style"), c, f"style AUC {variant}", variant=variant)
            for c in ("n_answerable", "n_unanswerable")
        ]
        return int(min(halves))

    return get


def leakage_top_questions(t: Tables) -> Any:
    """Scored answers behind the top leakage accuracy (:func:`leakage_top`): its ``n`` less ``dropped``."""
    frame = table(t, "leakage_model").drop_nulls("accuracy").sort("accuracy", descending=True, maintain_order=True)
    if frame.height == 0:
        raise Missing("no scored leakage answers")
    return int(frame["n"][0]) - int(frame["dropped"][0] if "dropped" in frame.columns else 0)


def ablation_questions(name: str, metric: str = "car", **where: Any) -> Getter:
    """The fewest questions behind a mean of :func:`ablation_mean`: the smallest count column of
    ``metric`` (:data:`QUESTIONS_OF`) over the matching rows with data."""

    def get(t: Tables) -> Any:
        counts = _where(table(t, name), where)[QUESTIONS_OF[metric]].drop_nulls()
        counts = counts.filter(counts > 0)
        return int(cast(int, counts.min())) if counts.len() else 0

    return get


# --- getters named in the table of quoted numbers (paper/quoted/numbers.tsv) that have no other home


def cell(name: str, col: str, what: str, **where: Any) -> Getter:
    """The one value of ``col`` in the row of table ``name`` matching ``where`` (:func:`one`)."""
    return lambda t: one(table(t, name), col, what, **where)


def thinking_count(condition: str, direction: str) -> Getter:
    """:func:`thinking_significant` as a getter."""
    return lambda t: thinking_significant(t, condition, direction)


def transition_sum(condition: str, *cols: str) -> Getter:
    """The matched thinking pairs' total of ``cols`` under ``condition``."""
    return transitions(condition, lambda p: sum(int(cast(int, p[c].sum())) for c in cols))


def transition_more(condition: str, more: str, than: str, significant: str = "") -> Getter:
    """Models with more ``more`` than ``than`` transitions (and, when named, a true ``significant`` flag)."""

    def count(p: pl.DataFrame) -> int:
        more_than = p[more] > p[than]
        return int((p[significant] & more_than).sum() if significant else more_than.sum())

    return transitions(condition, count)


def transition_share(condition: str, part: str, *whole: str) -> Getter:
    """``part`` transitions as a share of the ``whole`` ones, over the matched pairs."""

    def share(p: pl.DataFrame) -> float:
        return cast(int, p[part].sum()) / (cast(int, p[whole[0]].sum()) + cast(int, p[whole[1]].sum()))

    return transitions(condition, share)


def configurations(name: str) -> Getter:
    """How many (model, thinking) configurations table ``name`` holds."""
    return lambda t: table(t, name).select("model", "thinking").unique().height


def switchable_models() -> Getter:
    """How many models of the main grid run with thinking switched on."""
    return lambda t: (
        table(t, "main_grid").filter(pl.col("thinking") == "on").filter(pl.col("switchable"))["model"].n_unique()
    )


def column_max(name: str, col: str) -> Getter:
    """The largest ``col`` of table ``name``, as an integer."""
    return lambda t: int(cast(int, table(t, name)[col].max()))


def budget_exhausted_share() -> Getter:
    """Responses that used their whole output budget, as a share of all asked (``summary``)."""

    def get(t: Tables) -> float:
        summary = table(t, "summary")
        asked = cast(int, summary["n_answerable"].sum()) + cast(int, summary["n_unanswerable"].sum())
        return cast(int, summary["n_budget_exhausted"].sum()) / asked

    return get


def significant_count(family: str) -> Getter:
    """How many paired tests of ``family`` are significant."""
    return lambda t: int(
        table(t, "paired_tests").filter(pl.col("family") == family)["significant"].fill_null(False).sum()
    )
