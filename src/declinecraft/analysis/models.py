"""Comparisons across models and configurations (§4.2–4.4, App. A.5–A.7, Table 4).

Inputs are tidy per-run summaries (one row per model, thinking setting and condition, with the
columns of :func:`metrics.summarize`) joined with model facts (family, sizes, release month).
Statistics come from :mod:`declinecraft.core.stats`: Spearman's rho, the partial rank association,
Wilcoxon signed-rank tests and t intervals over models, and the observed trade-off frontier.
An association or mean that a run cannot support (too few models, no release dates) is a row
with NaN and a ``note`` saying why, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from declinecraft.core import small_n, stats
from declinecraft.core.small_n import counted, plural
from declinecraft.evaluation import metrics

CONFIG = ("model", "thinking")
#: Metrics averaged over configurations per retrieval condition.
MEAN_METRICS = (
    "car",
    "attempt",
    "accuracy",
    "accuracy_when_attempted",
    "bal_f1",
    "car_lenient",
    "share_deny",
    "share_answer",
)


def _note(n: int, need: int, what: str) -> str:
    return "" if n >= need else f"{counted(n, what)} with data; needs at least {need}"


def _rank_note(n: int, need: int, what: str) -> str:
    """Why a rank correlation from ``n`` points is no finding ('' from ``need`` on)."""
    return "" if n >= need else f"{counted(n, what)} with data; a rank correlation needs {need} to reach p < alpha"


def condition_means(main_grid: pl.DataFrame, *, confidence: float = 0.95) -> pl.DataFrame:
    """Mean of each metric over configurations per condition, with a t interval over them."""
    rows = []
    for condition in main_grid["condition"].unique(maintain_order=True).to_list():
        part = main_grid.filter(pl.col("condition") == condition)
        for metric in MEAN_METRICS:
            values = part[metric].cast(pl.Float64).fill_null(np.nan).to_numpy()
            n = int(np.sum(~np.isnan(values)))
            mean, low, high = stats.t_interval(values, confidence)
            note = "" if n else "no configuration with data"
            rows.append(dict(condition=condition, metric=metric, n=n, mean=mean, low=low, high=high, note=note))
    return pl.DataFrame(rows, schema=_MEANS_SCHEMA)


_MEANS_SCHEMA = {
    "condition": pl.String,
    "metric": pl.String,
    "n": pl.Int64,
    "mean": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
    "note": pl.String,
}


def _paired_values(
    main_grid: pl.DataFrame, keys: Sequence[str], column: str, a: str, b: str, metric: str
) -> pl.DataFrame:
    """Per ``keys``: metric at ``column == b`` minus metric at ``column == a`` (rows with both)."""
    left = main_grid.filter(pl.col(column) == a).select(*keys, pl.col(metric).alias("_a"))
    right = main_grid.filter(pl.col(column) == b).select(*keys, pl.col(metric).alias("_b"))
    return left.join(right, on=list(keys), how="inner").with_columns(d=pl.col("_b") - pl.col("_a"))


def _difference_row(quantity: str, condition: str, d: np.ndarray, confidence: float) -> dict:
    d = d[~np.isnan(d)]
    mean, low, high = stats.t_interval(d, confidence)
    w, p = stats.wilcoxon_signed_rank(d) if d.size >= 2 else (float("nan"), float("nan"))
    note = _note(d.size, 2, "models") or ("" if np.any(d != 0) else "every difference is zero")
    return dict(
        quantity=quantity,
        condition=condition,
        n=int(d.size),
        mean=mean,
        low=low,
        high=high,
        wilcoxon_stat=w,
        wilcoxon_p=p,
        note=note,
    )


def model_differences(main_grid: pl.DataFrame, transitions: pl.DataFrame, *, confidence: float = 0.95) -> pl.DataFrame:
    """Mean per-model (or per-configuration) differences with t intervals and Wilcoxon p.

    Thinking on minus off per condition (CAR, lenient CAR, accuracy), the net shift A->D minus
    D->A from the matched pairs, and the condition changes per configuration (single minus no RAG,
    iterative minus single) for CAR, attempt and accuracy.
    """
    rows = []
    for condition in main_grid["condition"].unique(maintain_order=True).to_list():
        part = main_grid.filter(pl.col("condition") == condition)
        for metric in ("car", "car_lenient", "accuracy", "attempt"):
            d = _paired_values(part, ["model"], "thinking", "off", "on", metric)["d"]
            rows.append(_difference_row(f"thinking_{metric}", condition, d.fill_null(np.nan).to_numpy(), confidence))
        shift = (
            transitions.filter(pl.col("condition") == condition)["net_shift"]
            if transitions.height
            else pl.Series([], dtype=pl.Float64)
        )
        rows.append(
            _difference_row(
                "thinking_net_shift_ad", condition, shift.fill_null(np.nan).to_numpy().astype(float), confidence
            )
        )
    for a, b in (("no_rag", "single"), ("single", "iterative")):
        for metric in ("car", "attempt", "accuracy", "car_lenient"):
            d = _paired_values(main_grid, ["model", "thinking"], "condition", a, b, metric)["d"]
            rows.append(_difference_row(f"{b}_minus_{a}_{metric}", "", d.fill_null(np.nan).to_numpy(), confidence))
    schema = {
        "quantity": pl.String,
        "condition": pl.String,
        "n": pl.Int64,
        "mean": pl.Float64,
        "low": pl.Float64,
        "high": pl.Float64,
        "wilcoxon_stat": pl.Float64,
        "wilcoxon_p": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def thinking_by_family(main_grid: pl.DataFrame) -> pl.DataFrame:
    """Descriptive mean CAR change (thinking on minus off) per family and condition (App. A.5)."""
    parts = []
    for condition in main_grid["condition"].unique(maintain_order=True).to_list():
        part = main_grid.filter(pl.col("condition") == condition)
        d = _paired_values(part, ["model", "family"], "thinking", "off", "on", "car")
        parts.append(
            d.group_by("family")
            .agg(n=pl.len(), car_change=pl.col("d").mean())
            .with_columns(condition=pl.lit(condition))
        )
    if not parts:
        return pl.DataFrame(
            schema={"family": pl.String, "n": pl.UInt32, "car_change": pl.Float64, "condition": pl.String}
        )
    return pl.concat(parts).sort("condition", "family")


def complete_sweep(ablation: pl.DataFrame, column: str = "k") -> pl.DataFrame:
    """The rows of the configurations run at every value of ``column`` in the ablation.

    Figure 21's middle and bottom panels, Figure 6 and the k-sweep means compare the same models
    at every k (the paper: "models run at every k"); a model run at some k only would move the
    mean between positions for a reason that is not k.
    """
    if ablation.height == 0:
        return ablation
    values = ablation[column].drop_nulls().n_unique()
    counts = ablation.group_by(CONFIG).agg(pl.col(column).drop_nulls().n_unique().alias("_n"))
    full = counts.filter(pl.col("_n") == values).select(CONFIG)
    return ablation.join(full, on=list(CONFIG), how="semi", maintain_order="left")


def model_points(main_grid: pl.DataFrame, condition: str = "single") -> pl.DataFrame:
    """One point per model under ``condition``: thinking enabled where the model has both settings."""
    part = main_grid.filter(pl.col("condition") == condition)
    return (
        part.sort("model", pl.col("thinking") == "on").unique("model", keep="last", maintain_order=True).sort("model")
    )


def _assoc(name: str, unit: str, x: str, y: str, frame: pl.DataFrame, *, min_n: int) -> dict:
    xs = frame[x].cast(pl.Float64).fill_null(np.nan).to_numpy() if frame.height else np.array([])
    ys = frame[y].cast(pl.Float64).fill_null(np.nan).to_numpy() if frame.height else np.array([])
    n = int(np.sum(~np.isnan(xs) & ~np.isnan(ys)))
    rho, p = stats.spearman(xs, ys) if xs.size else (float("nan"), float("nan"))
    note = _rank_note(n, min_n, plural(unit))
    if not note and np.isnan(rho):
        note = "constant input: rank correlation undefined"
    missing = int(np.sum(np.isnan(xs))) if xs.size else 0
    if missing and not note:
        note = f"{counted(missing, plural(unit))} without {x} left out"
    return dict(name=name, unit=unit, x=x, y=y, n=n, rho=rho, p=p, note=note)


def associations(main_grid: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """Spearman associations of §4.3 and App. A.6 / App. I, plus the partial rank association.

    A row from fewer points than a rank correlation needs to reach p < ``alpha``
    (:func:`~declinecraft.core.small_n.min_n_rank`, the paper's one threshold for it) says so in
    its ``note``; rho is still computed from 3 points on.

    ``main_grid`` must carry ``family``, ``params_total_b``, ``params_active_b``,
    ``release_month`` and ``open_weight`` columns (see :func:`~declinecraft.analysis.analyze.model_facts`).
    """
    single = main_grid.filter(pl.col("condition") == "single")
    points = model_points(main_grid, "single")
    open_points = points.filter(pl.col("open_weight"))
    best = (
        points.drop_nulls("car").sort("family", "car").unique("family", keep="last", maintain_order=True)
        if points.height
        else points
    )
    need = small_n.min_n_rank(alpha)
    rows = [
        _assoc("car_total_params", "model", "params_total_b", "car", open_points, min_n=need),
        _assoc("car_active_params", "model", "params_active_b", "car", open_points, min_n=need),
        _assoc("accuracy_total_params", "model", "params_total_b", "accuracy", open_points, min_n=need),
        _assoc("car_release_month", "model", "release_month", "car", points, min_n=need),
        _assoc("car_release_month_best_per_family", "family", "release_month", "car", best, min_n=need),
        _assoc("car_lenient_release_month", "model", "release_month", "car_lenient", points, min_n=need),
        _assoc("car_accuracy", "configuration", "car", "accuracy", single, min_n=need),
        _assoc("car_accuracy_when_attempted", "configuration", "car", "accuracy_when_attempted", single, min_n=need),
        _assoc("release_month_accuracy", "configuration", "release_month", "accuracy", single, min_n=need),
        _assoc("release_month_car", "configuration", "release_month", "car", single, min_n=need),
    ]
    cols = [
        single[c].cast(pl.Float64).fill_null(np.nan).to_numpy() if single.height else np.array([])
        for c in ("car", "accuracy", "release_month")
    ]
    n = int(np.sum(np.logical_and.reduce([~np.isnan(c) for c in cols]))) if single.height else 0
    r, p = stats.partial_rank_association(*cols) if single.height else (float("nan"), float("nan"))
    note = _note(n, 4, "configurations") or ("" if not np.isnan(r) else "constant residuals: undefined")
    rows.append(
        dict(
            name="car_accuracy_partial_release", unit="configuration", x="car", y="accuracy", n=n, rho=r, p=p, note=note
        )
    )
    schema = {
        "name": pl.String,
        "unit": pl.String,
        "x": pl.String,
        "y": pl.String,
        "n": pl.Int64,
        "rho": pl.Float64,
        "p": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def frontier_table(main_grid: pl.DataFrame, *, min_attempt: float = 0.95) -> pl.DataFrame:
    """Per condition, each configuration's place on the observed trade-off frontier (App. A.7).

    ``best_at_min_attempt`` marks the configuration with the highest CAR among those attempting
    at least ``min_attempt`` of the answerable questions (ties: the higher attempt rate).
    """
    parts = []
    for condition in main_grid["condition"].unique(maintain_order=True).to_list():
        part = main_grid.filter(pl.col("condition") == condition).select(
            "model", "thinking", "condition", "attempt", "car"
        )
        attempt = part["attempt"].fill_null(np.nan).to_numpy()
        car = part["car"].fill_null(np.nan).to_numpy()
        on = stats.pareto_frontier(attempt, car)
        eligible = np.where(attempt >= min_attempt, car, np.nan)
        best = np.zeros(part.height, dtype=bool)
        if np.any(~np.isnan(eligible)):
            order = np.lexsort((np.nan_to_num(attempt, nan=-1), np.nan_to_num(eligible, nan=-1)))
            best[order[-1]] = True
        parts.append(part.with_columns(pl.Series("on_frontier", on), pl.Series("best_at_min_attempt", best)))
    if not parts:
        return pl.DataFrame(
            schema={
                "model": pl.String,
                "thinking": pl.String,
                "condition": pl.String,
                "attempt": pl.Float64,
                "car": pl.Float64,
                "on_frontier": pl.Boolean,
                "best_at_min_attempt": pl.Boolean,
            }
        )
    return pl.concat(parts)


def direction_counts(main_grid: pl.DataFrame, a: str = "no_rag", b: str = "single") -> dict[str, int]:
    """How many configurations move each way in CAR and attempt from ``a`` to ``b`` (App. A.7)."""
    car = _paired_values(main_grid, ["model", "thinking"], "condition", a, b, "car").select("model", "thinking", dc="d")
    att = _paired_values(main_grid, ["model", "thinking"], "condition", a, b, "attempt").select(
        "model", "thinking", da="d"
    )
    both = (
        car.join(att, on=["model", "thinking"])
        .drop_nulls()
        .filter(pl.col("dc").is_not_nan() & pl.col("da").is_not_nan())
    )
    return {
        "n": both.height,
        "both_higher": both.filter((pl.col("dc") > 0) & (pl.col("da") > 0)).height,
        "car_higher_attempt_lower": both.filter((pl.col("dc") > 0) & (pl.col("da") <= 0)).height,
        "car_lower_attempt_higher": both.filter((pl.col("dc") <= 0) & (pl.col("da") > 0)).height,
        "both_lower": both.filter((pl.col("dc") <= 0) & (pl.col("da") <= 0)).height,
    }


def family_label_shares(main_grid: pl.DataFrame) -> pl.DataFrame:
    """Figure 17: mean label shares on unanswerable questions per family and condition."""
    return (
        main_grid.group_by("family", "condition", maintain_order=True)
        .agg(pl.len().alias("n_configs"), *(pl.col(c).mean() for c in ("share_abstain", "share_deny", "share_answer")))
        .with_columns(deny_gt_abstain=pl.col("share_deny") > pl.col("share_abstain"))
        .sort("family", "condition")
    )


def leakage(
    frame: pl.DataFrame,
    facts: pl.DataFrame,
    *,
    by: Sequence[str],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Table 4 / Figure 19: accuracy on the unanswerable questions without retrieval.

    The unanswerable no-RAG responses are scored like answerable ones with a premise denial
    counted as not attempted (scoring 0), through :func:`metrics.summarize`, so the interval is
    the same bootstrap over questions. ``by`` is ``("model", "thinking")`` or ``("family",)``.
    ``n`` counts the responses and ``dropped`` those left out for want of a judge score.
    """
    rows = frame.filter(~pl.col("answerable") & (pl.col("condition") == "no_rag"))
    rows = rows.join(facts.select("model", "family"), on="model", how="left").with_columns(
        answerable=pl.lit(True),
        label=pl.when(pl.col("label") == "DENY").then(pl.lit("ABSTAIN")).otherwise(pl.col("label")),
    )
    if rows.height == 0:
        return pl.DataFrame(
            schema={
                **{k: pl.String for k in by},
                "runs": pl.Int64,
                "n": pl.Int64,
                "dropped": pl.Int64,
                "attempt": pl.Float64,
                "accuracy": pl.Float64,
                "accuracy_low": pl.Float64,
                "accuracy_high": pl.Float64,
                "accuracy_when_attempted": pl.Float64,
            }
        )
    summary = metrics.summarize(rows, by=list(by), n_resamples=n_resamples, confidence=confidence, seed=seed)
    run_cols = list(dict.fromkeys([*by, "model", "thinking"]))
    # An answer lacking a score from some accuracy judge has no accuracy and drops out of the
    # mean (abstentions, denials and exhausted budgets score 0 by rule): count it, not hide it.
    has_score = pl.col("budget_exhausted") | (pl.col("label") == "ABSTAIN") | pl.col("accuracy").is_not_null()
    runs = rows.group_by(list(by)).agg(
        runs=pl.struct(run_cols).n_unique().cast(pl.Int64),
        n=pl.len().cast(pl.Int64),
        dropped=(~has_score).sum().cast(pl.Int64),
    )
    cols = ["attempt", "accuracy", "accuracy_low", "accuracy_high", "accuracy_when_attempted"]
    # Ties in accuracy keep the summary's order, so the table's rows are the same every run.
    joined = summary.join(runs, on=list(by), maintain_order="left")
    return joined.select(*by, "runs", "n", "dropped", *cols).sort(
        "accuracy", descending=True, nulls_last=True, maintain_order=True
    )
