"""The view's figures, one function per figure, each from one table of ``10_evidence/``.

=====================================  ==================  ==========================================
function                               table               shows
=====================================  ==================  ==========================================
:func:`plot_sufficiency_curve`         curve.csv           abstention per level L1-L5, T (ESB Fig. 3)
:func:`plot_l5_distribution`           l5_types.csv        L5 response types (ESB Fig. 4, Table 4)
:func:`plot_prompt_heatmap`            curve.csv           abstention per prompt x level (ESB Fig. 5)
:func:`plot_position_bias`             position_bias.csv   L5 abstention by order (ESB Fig. 6)
:func:`plot_helpfulness_safety`        summary.csv         accuracy vs over-answer (ESB Fig. 7)
=====================================  ==================  ==========================================

Rates are proportions in the tables and percent on the axes. Every function returns a
matplotlib Figure (Agg backend) and draws a note instead of failing on an empty table.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import functools  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.typing import RcKeyType  # noqa: E402

from declinecraft.core.palette import model_styles  # noqa: E402
from declinecraft.views.evidence.calibration import LEVELS, SCORED_IDEAL_WITH_T  # noqa: E402
from declinecraft.views.evidence.classes import L5_TYPES  # noqa: E402

WIDTH_IN = 3.4
"""One column of the paper, inches."""
_STYLES = {"P1": "-", "P2": "--", "P3": ":", "J2": "-."}
_TYPE_COLORS = {
    "abstain": "#2b8a3e",
    "pick_gold": "#1f5fa8",
    "pick_conflict": "#c0392b",
    "conflict_aware": "#e07b1a",
    "both_values": "#8e6bbf",
    "other": "#9a9a9a",
    "invalid": "#d0d0d0",
}


_RC: dict[RcKeyType, Any] = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6.5,
    "ytick.labelsize": 6.5,
    "legend.fontsize": 6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
}


def _styled(draw: Callable[[pl.DataFrame], Figure]) -> Callable[[pl.DataFrame], Figure]:
    """Draw under the paper's small type (the figures are one column wide)."""

    @functools.wraps(draw)
    def wrapper(frame: pl.DataFrame) -> Figure:
        with plt.rc_context(_RC):
            return draw(frame)

    return wrapper


def _empty(fig: Figure, ax: plt.Axes, what: str) -> Figure:
    ax.axis("off")
    ax.text(0.5, 0.5, f"no {what} in this run", ha="center", va="center", fontsize=7)
    return fig


#: Every rate axis shows 0-100 % with a margin, so a marker at 0 or 100 % sits inside the frame.
RATE_LIMITS = (-4.0, 104.0)
#: Colours of the series (model and prompt), one each, so two prompts of one model differ.
SERIES_COLORS = ("#1f5fa8", "#e07b1a", "#2b8a3e", "#c0392b", "#7b4ea3", "#8c564b", "#e377c2", "#17becf")


def series_colors(keys: list[tuple[object, ...]]) -> dict[tuple[object, ...], str]:
    """One distinct colour per series key, in order (cycling past :data:`SERIES_COLORS`)."""
    return {key: SERIES_COLORS[i % len(SERIES_COLORS)] for i, key in enumerate(dict.fromkeys(keys))}


def _pct(value: float | None) -> float:
    """A proportion as percent; a missing value (None) as NaN, never 0."""
    return float("nan") if value is None else float(value) * 100


def _name(row: dict[str, object]) -> str:
    thinking = "" if row.get("thinking") in (None, "off") else f" ({row['thinking']})"
    return f"{row['model']}{thinking} {row['prompt']}"


@_styled
def plot_sufficiency_curve(frame: pl.DataFrame) -> Figure:
    """Abstention rate per level with its interval, one line per model and prompt; the ideal
    behaviour (0 on L1, 1 on L3-L5 and T; none on our L2, where abstaining and answering are both
    acceptable) as a grey step."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.3))
    if frame.is_empty():
        return _empty(fig, ax, "responses")
    x = np.arange(len(LEVELS))
    ideal = [100 * SCORED_IDEAL_WITH_T.get(lv, float("nan")) for lv in LEVELS]
    ax.step(x, ideal, where="mid", color="#bbbbbb", lw=0.8, label="ideal")
    styles = model_styles(sorted(frame["model"].unique().to_list()))
    colors = series_colors(
        [tuple(k) for k in frame.select("model", "thinking", "prompt").unique(maintain_order=True).rows()]
    )
    for (model, thinking, prompt), part in frame.group_by(["model", "thinking", "prompt"], maintain_order=True):
        where = {lv: i for i, lv in enumerate(LEVELS)}
        part = part.with_columns(x=pl.col("level").replace_strict(where, return_dtype=pl.Int64)).sort("x")
        y = part["abstention"].to_numpy() * 100
        err = np.vstack([y - part["low"].to_numpy() * 100, part["high"].to_numpy() * 100 - y])
        ax.errorbar(
            part["x"].to_numpy(),
            y,
            yerr=np.nan_to_num(err),
            marker=styles[model][1],
            ms=3,
            lw=1,
            capsize=1.5,
            ls=_STYLES.get(str(prompt), "-"),
            color=colors[(model, thinking, prompt)],
            clip_on=False,
            label=_name({"model": model, "thinking": thinking, "prompt": prompt}),
        )
    ax.axvline(1.5, color="#888888", lw=0.5, ls=":")  # ESB's sufficiency boundary, between L2 and L3
    ax.set(xticks=x, xticklabels=LEVELS, ylim=RATE_LIMITS, ylabel="abstention (%)", xlabel="evidence level")
    ax.legend(frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))  # beside the axes, off the lines
    fig.tight_layout()
    return fig


@_styled
def plot_l5_distribution(frame: pl.DataFrame) -> Figure:
    """Stacked shares of the L5 response types per model and prompt (both orders pooled)."""
    rows = frame.filter(pl.col("order") == "all") if "order" in frame.columns else frame
    if rows.is_empty():
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "L5 responses")
    groups = rows.select("model", "thinking", "prompt").unique(maintain_order=True).to_dicts()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.9 + 0.22 * len(groups)))
    left = np.zeros(len(groups))
    for kind in L5_TYPES:
        share = [
            float(rows.filter(*[pl.col(k) == g[k] for k in g], pl.col("type") == kind)["share"].sum()) for g in groups
        ]
        ax.barh(range(len(groups)), np.array(share) * 100, left=left, color=_TYPE_COLORS[kind], label=kind, height=0.7)
        left += np.array(share) * 100
    ax.set(yticks=range(len(groups)), yticklabels=[_name(g) for g in groups], xlim=(0, 100), xlabel="L5 responses (%)")
    ax.invert_yaxis()
    ax.legend(frameon=False, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout()
    return fig


@_styled
def plot_prompt_heatmap(frame: pl.DataFrame) -> Figure:
    """Abstention (%) per model-and-prompt row and level column, numbers in the cells."""
    if frame.is_empty():
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "responses")
    groups = frame.select("model", "thinking", "prompt").unique(maintain_order=True).to_dicts()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.6 + 0.28 * len(groups)))
    grid = np.full((len(groups), len(LEVELS)), np.nan)
    for i, g in enumerate(groups):
        part = frame.filter(*[pl.col(k) == g[k] for k in ("model", "thinking", "prompt")])
        for j, level in enumerate(LEVELS):
            cell = part.filter(pl.col("level") == level)["abstention"]
            grid[i, j] = cell[0] * 100 if cell.len() and cell[0] is not None else np.nan
    ax.imshow(np.ma.masked_invalid(grid), cmap="Greens", vmin=0, vmax=100, aspect="auto")
    for (i, j), value in np.ndenumerate(grid):
        ax.text(
            j,
            i,
            "–" if np.isnan(value) else f"{value:.0f}",
            ha="center",
            va="center",
            fontsize=6,
            color="white" if value > 60 else "black",
        )
    ax.set(
        xticks=range(len(LEVELS)), xticklabels=LEVELS, yticks=range(len(groups)), yticklabels=[_name(g) for g in groups]
    )
    ax.set_title("abstention (%)", fontsize=7)
    fig.tight_layout()
    return fig


def _stars(p: float | None) -> str:
    if p is None or np.isnan(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "ns"


@_styled
def plot_position_bias(frame: pl.DataFrame) -> Figure:
    """L5 abstention with the gold passage first vs the conflicting copy first, per model and
    prompt, with the exact McNemar result over the pairs (* p<0.05, ** p<0.01, *** p<0.001)."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.2))
    if frame.is_empty() or "abstain_gold_first" not in frame.columns:
        return _empty(fig, ax, "L5 pairs")
    rows = frame.to_dicts()
    x = np.arange(len(rows))
    gold = np.nan_to_num([_pct(r["abstain_gold_first"]) for r in rows])
    conflict = np.nan_to_num([_pct(r["abstain_conflict_first"]) for r in rows])
    ax.bar(x - 0.18, gold, 0.36, color="#1f5fa8", label="gold first")
    ax.bar(x + 0.18, conflict, 0.36, color="#c0392b", label="conflict first")
    for i, r in enumerate(rows):
        ax.text(i, max(gold[i], conflict[i]) + 2, _stars(r["abstain_p"]), ha="center", fontsize=6, clip_on=False)
    ax.set(xticks=x, ylim=RATE_LIMITS, ylabel="L5 abstention (%)")
    ax.set_xticklabels([_name(r) for r in rows], rotation=30, ha="right", fontsize=6)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


@_styled
def plot_helpfulness_safety(frame: pl.DataFrame) -> Figure:
    """Accuracy on L1 (helpfulness; our L2 states no answer, so it is left out) against
    over-answer rate on L3-L5 (lack of safety), one point per model and prompt with both intervals."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.6))
    if frame.is_empty() or "accuracy" not in frame.columns:
        return _empty(fig, ax, "responses")
    prompts = sorted(frame["prompt"].unique().to_list())
    colors = series_colors([(r["model"], r["thinking"], r["prompt"]) for r in frame.to_dicts()])
    for r in frame.to_dicts():
        x, y = _pct(r["over_answer"]), _pct(r["accuracy"])
        xerr = np.nan_to_num([[x - _pct(r["over_answer_low"])], [_pct(r["over_answer_high"]) - x]]).clip(0)
        yerr = np.nan_to_num([[y - _pct(r["accuracy_low"])], [_pct(r["accuracy_high"]) - y]]).clip(0)
        marker = ["o", "s", "^", "D", "v"][
            prompts.index(r["prompt"]) % 5
        ]  # the colour is the model's, the marker the prompt's
        ax.errorbar(
            x,
            y,
            xerr=xerr,
            yerr=yerr,
            fmt=marker,
            color=colors[(r["model"], r["thinking"], r["prompt"])],
            ms=3.5,
            lw=0.7,
            capsize=1.5,
            clip_on=False,
            label=_name(r),
        )
    ax.set(xlim=RATE_LIMITS, ylim=RATE_LIMITS, xlabel="over-answer rate, L3-L5 (%)", ylabel="accuracy, L1 (%)")
    ax.legend(frameon=False, loc="lower left")
    fig.tight_layout()
    return fig
