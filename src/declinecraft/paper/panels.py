"""Panels and labels more than one figure module draws: thinking on/off arrows, size scatters,
the trade-off frontier, the association caption and the retrieval pipelines' names."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from declinecraft.core import drawn_parts, flat_panel, stats
from declinecraft.paper.drawing import BLUE, GRAY, ORANGE, pct, rate_axis

PIPELINE_ORDER = ("bm25", "dense", "hybrid", "hybrid+rerank", "hybrid+rewrite", "hybrid+rewrite+rerank")
"""Retrieval pipelines from simplest to most elaborate: the x order of every pipeline panel."""
PIPELINE_NAMES = {
    "bm25": "BM25",
    "dense": "Dense",
    "hybrid": "Hybrid",
    "hybrid+rerank": "+rerank",
    "hybrid+rewrite": "+rewrite",
    "hybrid+rewrite+rerank": "+rewrite\n+rerank",
}
"""Tick labels of the pipelines (two lines for the longest)."""


def thinking_pairs(main_grid: pl.DataFrame, paired: pl.DataFrame | None, condition: str, metric: str) -> pl.DataFrame:
    """Per model with both settings: the metric off and on, and whether the McNemar change is significant."""
    part = main_grid.filter(pl.col("condition") == condition)
    wide = part.pivot(on="thinking", index=["model", "display_name"], values=metric, aggregate_function="first")
    if "off" not in wide.columns or "on" not in wide.columns:
        return pl.DataFrame(
            schema={
                "model": pl.String,
                "label": pl.String,
                "off": pl.Float64,
                "on": pl.Float64,
                "significant": pl.Boolean,
            }
        )
    wide = wide.drop_nulls(["off", "on"]).with_columns(label=pl.col("display_name").fill_null(pl.col("model")))
    sig = pl.lit(False).alias("significant")
    if paired is not None and paired.height and metric == "car":
        tests = paired.filter(
            (pl.col("family") == "main_grid")
            & (pl.col("comparison") == "thinking_on_vs_off")
            & (pl.col("condition") == condition)
        )
        wide = wide.join(tests.select("model", pl.col("significant").cast(pl.Boolean)), on="model", how="left")
        sig = pl.col("significant").fill_null(False)
    return wide.with_columns(sig).select(
        "model", "label", pl.col("off").cast(pl.Float64), pl.col("on").cast(pl.Float64), "significant"
    )


def arrows_panel(ax: Axes, frame: pl.DataFrame, *, metric: str, title: str) -> None:
    """Gray dot at thinking off, arrowhead at thinking on; orange lower, blue higher, faded if not significant."""
    frame = frame.sort("off")
    for i, row in enumerate(frame.iter_rows(named=True)):
        off, on = 100 * row["off"], 100 * row["on"]
        if np.isnan(off) or np.isnan(on):
            continue
        color = ORANGE if on < off else BLUE
        alpha = 1.0 if row.get("significant") else 0.35
        ax.plot(off, i, "o", color=GRAY, ms=3, zorder=3)
        ax.annotate(
            "",
            xy=(on, i),
            xytext=(off, i),
            arrowprops=dict(arrowstyle="-|>", color=color, alpha=alpha, lw=1.1, mutation_scale=7),
        )
    ax.set_yticks(range(frame.height), frame["label"].to_list())
    ax.set_xlabel(metric)
    rate_axis(ax, "x")
    ax.set_title(title)
    ax.grid(axis="x")


def assoc_text(associations: pl.DataFrame | None, name: str) -> str:
    """Panel title with the Spearman rho and p of one association (empty when there are none)."""
    if associations is None or associations.height == 0:
        return ""
    row = associations.filter(pl.col("name") == name)
    if row.height == 0 or row["rho"][0] is None or np.isnan(row["rho"][0]):
        return "ρ = n/a"
    return f"ρ = {row['rho'][0]:+.2f}, p = {row['p'][0]:.2f}"


def size_panel(
    ax: Axes,
    points: pl.DataFrame,
    *,
    x: str,
    y: str,
    xlabel: str,
    ylabel: str,
    log: bool,
    text: str,
    value: Callable[[float], str] = "{:g}".format,
) -> bool:
    """One point per model; closed models (no parameter count) in orange when x is the release month.
    Models that all share one x value leave no axis to draw: the panel says so, naming the value
    (``value`` formats it) and the count (:mod:`declinecraft.core.flat_panel`). True when it drew."""
    xs = points[x].cast(pl.Float64).fill_null(np.nan).to_numpy()
    one = flat_panel.one_value(xs)
    if one is not None:
        n = int(np.isfinite(xs).sum())
        quantity = xlabel[:1].lower() + xlabel[1:]
        what = {"car": "CAR", "accuracy": "Answer Accuracy"}.get(y) or re.sub(r"\s*\([^)]*\)$", "", ylabel)
        said = (
            f"one model in this run ({quantity}: {value(one)})"
            if n == 1
            else f"all {n} models have the same {quantity}: {value(one)}"
        )
        flat_panel.say(ax, f"{said},\nso {what} is not drawn against it")
        return False
    ys = pct(points[y])
    closed = (
        ~points["open_weight"].fill_null(False).to_numpy()
        if "open_weight" in points.columns
        else np.zeros(len(xs), bool)
    )
    ax.scatter(xs[~closed], ys[~closed], s=14, color=BLUE, edgecolor="white", lw=0.4, zorder=3, label="open weights")
    if closed.any():
        ax.scatter(xs[closed], ys[closed], s=14, color=ORANGE, edgecolor="white", lw=0.4, zorder=3, label="closed")
        ax.legend(loc="best")
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    rate_axis(ax, "y")
    ax.set_title(text)
    ax.grid(True)
    return True


def frontier_line(
    ax: Axes, attempt: np.ndarray, car: np.ndarray, *, color: str = GRAY, label: str = "frontier"
) -> None:
    """The observed trade-off frontier (highest CAR at or above each attempt rate) as a step line."""
    on = stats.pareto_frontier(attempt, car)
    if on.sum() == 0:
        return
    order = np.argsort(attempt[on])
    xs, ys = 100 * attempt[on][order], 100 * car[on][order]
    if len(set(zip(xs, ys, strict=True))) > 1:  # one point draws no line: the caption may not say "dashed"
        drawn_parts.mark(ax.figure, "frontier")
    ax.step(xs, ys, where="post", color=color, lw=0.8, ls="--", label=label, zorder=1)
