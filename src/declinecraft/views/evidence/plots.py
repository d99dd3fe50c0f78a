"""The view's figures, one function per figure, each from one table of ``09_evidence/``.

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

from declinecraft.core import drawn_parts  # noqa: E402
from declinecraft.core.palette import model_styles  # noqa: E402
from declinecraft.views.evidence.calibration import LEVELS, SCORED_IDEAL_WITH_T  # noqa: E402
from declinecraft.views.evidence.classes import L5_TYPES  # noqa: E402

WIDTH_IN = 6.9
"""Width of every figure, inches: within the page's 7 in (``paper/main.tex`` prints them at the
full width), so LaTeX never scales their type down."""
ROW_IN = 0.1
"""Height of one configuration's row in a panel of rows, inches: 27 rows of 6 pt labels stay apart
and the figure stays within 0.42 of the text's height (``figure_check.FULL_BOX_IN``)."""
ROWS_FIXED_IN = 0.95
"""Height of a figure of rows besides its rows (title, axis label, legend), inches."""
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
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
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


def _pct(value: float | None) -> float:
    """A proportion as percent; a missing value (None) as NaN, never 0."""
    return float("nan") if value is None else float(value) * 100


def _config(row: dict[str, object]) -> str:
    """A configuration's name: its model, with its thinking setting when one is on."""
    return f"{row['model']}" + ("" if row.get("thinking") in (None, "off") else f" ({row['thinking']})")


def _configs(frame: pl.DataFrame) -> list[tuple[object, object]]:
    """The (model, thinking) configurations of a table, in its order."""
    return [tuple(k) for k in frame.select("model", "thinking").unique(maintain_order=True).rows()]


def _prompts(frame: pl.DataFrame) -> list[str]:
    """The prompts of a table, P1 first (one panel each)."""
    return sorted((str(p) for p in frame["prompt"].unique().to_list()), key=lambda p: (p.startswith("J"), p))


def _style(frame: pl.DataFrame) -> Callable[[object, object], dict[str, Any]]:
    """A configuration's marker style: its model's colour and marker in every panel, open with
    thinking on."""
    styles = model_styles(sorted(str(m) for m in frame["model"].unique().to_list()))

    def style(model: object, thinking: object) -> dict[str, Any]:
        color, marker = styles[str(model)]
        face = color if thinking in (None, "off") else "white"
        return {"color": color, "marker": marker, "markerfacecolor": face}

    return style


def _prompt_panels(prompts: list[str], height: float, *, sharey: bool = True) -> tuple[Figure, list[plt.Axes]]:
    """One panel per prompt side by side, the full width; with ``sharey`` only the first carries
    the y labels (the rows of configurations)."""
    fig, axes = plt.subplots(
        1, len(prompts), figsize=(WIDTH_IN, height), sharey=sharey, squeeze=False, layout="constrained"
    )
    for ax, prompt in zip(axes[0], prompts, strict=True):
        ax.set_title(prompt)
    return fig, list(axes[0])


def _rows_height(n: int) -> float:
    """The height of a figure of ``n`` configuration rows (:data:`ROW_IN` each)."""
    return ROWS_FIXED_IN + ROW_IN * max(1, n)


def _legend_columns(labels: list[str]) -> int:
    """How many columns of ``labels`` the page's width holds (at 6 pt, with their handles)."""
    longest = max((len(label) for label in labels), default=1)
    return max(1, min(len(labels), int(WIDTH_IN / (0.45 + 0.05 * longest))))


def _legend_height(labels: list[str]) -> float:
    """The height :func:`_legend_below` takes for ``labels``, inches."""
    return 0.15 * -(-len(labels) // _legend_columns(labels))


def _legend_below(fig: Figure, handles: list[Any], labels: list[str]) -> None:
    """One legend under the panels, in as many columns as the page's width holds its longest label."""
    if not labels:
        return
    ncols = _legend_columns(labels)
    fig.legend(handles, labels, loc="outside lower center", ncols=ncols, frameon=False)


@_styled
def plot_sufficiency_curve(frame: pl.DataFrame) -> Figure:
    """Abstention rate per level with its interval, one panel per prompt and one line per
    configuration; the ideal behaviour (0 on L1, 1 on L3-L5 and T; none on our L2, where abstaining
    and answering are both acceptable) as a grey step."""
    if frame.is_empty():
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "responses")
    prompts = _prompts(frame)
    configs = _configs(frame)
    names = ["ideal", *(_config({"model": m, "thinking": t}) for m, t in configs)]
    fig, axes = _prompt_panels(prompts, 1.6 + _legend_height(names))
    x = np.arange(len(LEVELS))
    where = {lv: i for i, lv in enumerate(LEVELS)}
    ideal = [100 * SCORED_IDEAL_WITH_T.get(lv, float("nan")) for lv in LEVELS]
    style = _style(frame)
    for prompt, ax in zip(prompts, axes, strict=True):
        ax.step(x, ideal, where="mid", color="#bbbbbb", lw=0.8, label="ideal")
        for (model, thinking), part in frame.filter(pl.col("prompt") == prompt).group_by(
            ["model", "thinking"], maintain_order=True
        ):
            part = part.with_columns(x=pl.col("level").replace_strict(where, return_dtype=pl.Int64)).sort("x")
            y = part["abstention"].to_numpy() * 100
            err = np.vstack([y - part["low"].to_numpy() * 100, part["high"].to_numpy() * 100 - y])
            ax.errorbar(
                part["x"].to_numpy(),
                y,
                yerr=np.nan_to_num(err),
                ms=2.5,
                lw=0.8,
                capsize=1.0,
                ls="-" if thinking in (None, "off") else "--",
                clip_on=False,
                label=_config({"model": model, "thinking": thinking}),
                **style(model, thinking),
            )
        ax.axvline(1.5, color="#888888", lw=0.5, ls=":")  # ESB's sufficiency boundary, between L2 and L3
        ax.set(xticks=x, xticklabels=LEVELS, ylim=RATE_LIMITS, xlabel="evidence level")
    axes[0].set_ylabel("abstention (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:  # a configuration asked only some prompts is named too
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles, labels = [*handles, handle], [*labels, label]
    _legend_below(fig, handles, labels)
    return fig


@_styled
def plot_l5_distribution(frame: pl.DataFrame) -> Figure:
    """Stacked shares of the L5 response types, one panel per prompt and one bar per configuration
    (both orders pooled)."""
    rows = frame.filter(pl.col("order") == "all") if "order" in frame.columns else frame
    if rows.is_empty():
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "L5 responses")
    prompts = _prompts(rows)
    configs = _configs(rows)
    fig, axes = _prompt_panels(prompts, _rows_height(len(configs)))
    for prompt, ax in zip(prompts, axes, strict=True):
        part = rows.filter(pl.col("prompt") == prompt)
        left = np.zeros(len(configs))
        for kind in L5_TYPES:
            share = np.array(
                [
                    float(
                        part.filter(pl.col("model") == m, pl.col("thinking") == t, pl.col("type") == kind)[
                            "share"
                        ].sum()
                    )
                    for m, t in configs
                ]
            )
            ax.barh(range(len(configs)), share * 100, left=left, color=_TYPE_COLORS[kind], label=kind, height=0.7)
            left += share * 100
        ax.set(xlim=(0, 100), xlabel="L5 responses (%)")
    axes[0].set(yticks=range(len(configs)), yticklabels=[_config({"model": m, "thinking": t}) for m, t in configs])
    axes[0].invert_yaxis()
    fig.legend(*axes[0].get_legend_handles_labels(), frameon=False, ncols=len(L5_TYPES), loc="outside upper center")
    return fig


@_styled
def plot_prompt_heatmap(frame: pl.DataFrame) -> Figure:
    """Abstention (%) per configuration row and level column, one panel per prompt, numbers in the
    cells."""
    if frame.is_empty():
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "responses")
    prompts = _prompts(frame)
    configs = _configs(frame)
    fig, axes = _prompt_panels(prompts, _rows_height(len(configs)) - 0.3)  # no legend
    for prompt, ax in zip(prompts, axes, strict=True):
        part = frame.filter(pl.col("prompt") == prompt)
        grid = np.full((len(configs), len(LEVELS)), np.nan)
        for i, (model, thinking) in enumerate(configs):
            mine = part.filter(pl.col("model") == model, pl.col("thinking") == thinking)
            for j, level in enumerate(LEVELS):
                cell = mine.filter(pl.col("level") == level)["abstention"]
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
        ax.set(xticks=range(len(LEVELS)), xticklabels=LEVELS)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
    axes[0].set(yticks=range(len(configs)), yticklabels=[_config({"model": m, "thinking": t}) for m, t in configs])
    fig.suptitle("abstention (%)", fontsize=7)
    drawn_parts.mark(fig, *prompts)  # the caption names only these prompts
    return fig


def _stars(p: float | None) -> str:
    if p is None or np.isnan(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "ns"


@_styled
def plot_position_bias(frame: pl.DataFrame) -> Figure:
    """L5 abstention with the gold passage first vs the conflicting copy first, one panel per
    prompt and a pair of bars per configuration, with the exact McNemar result over the pairs
    (* p<0.05, ** p<0.01, *** p<0.001) beside the panel, on the configuration's row."""
    if frame.is_empty() or "abstain_gold_first" not in frame.columns:
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "L5 pairs")
    prompts = _prompts(frame)
    configs = _configs(frame)
    fig, axes = _prompt_panels(prompts, _rows_height(len(configs)))
    for prompt, ax in zip(prompts, axes, strict=True):
        rows = {(r["model"], r["thinking"]): r for r in frame.filter(pl.col("prompt") == prompt).to_dicts()}
        y = np.array([i for i, c in enumerate(configs) if c in rows], dtype=np.float64)
        mine = [rows[c] for c in configs if c in rows]
        gold = np.nan_to_num([_pct(r["abstain_gold_first"]) for r in mine])
        conflict = np.nan_to_num([_pct(r["abstain_conflict_first"]) for r in mine])
        ax.barh(y - 0.2, gold, 0.4, color="#1f5fa8", label="gold first")
        ax.barh(y + 0.2, conflict, 0.4, color="#c0392b", label="conflict first")
        beside = ax.get_yaxis_transform()  # x in axes fraction, y in data: a column right of the panel
        for i, r in zip(y, mine, strict=True):
            ax.text(1.02, i, _stars(r["abstain_p"]), ha="left", va="center", fontsize=6, transform=beside)
        ax.set(xlim=RATE_LIMITS, xlabel="L5 abstention (%)")
    axes[0].set(yticks=range(len(configs)), yticklabels=[_config({"model": m, "thinking": t}) for m, t in configs])
    axes[0].set_ylim(len(configs) - 0.5, -0.5)
    fig.legend(*axes[0].get_legend_handles_labels(), frameon=False, ncols=2, loc="outside upper center")
    return fig


@_styled
def plot_helpfulness_safety(frame: pl.DataFrame) -> Figure:
    """Accuracy on L1 (helpfulness; our L2 states no answer, so it is left out) against
    over-answer rate on L3-L5 (lack of safety), one panel per prompt and one point per
    configuration with both intervals."""
    if frame.is_empty() or "accuracy" not in frame.columns:
        return _empty(*plt.subplots(figsize=(WIDTH_IN, 1.0)), "responses")
    prompts = _prompts(frame)
    configs = _configs(frame)
    fig, axes = _prompt_panels(
        prompts, 1.7 + _legend_height([_config({"model": m, "thinking": t}) for m, t in configs])
    )
    style = _style(frame)
    named: dict[str, Any] = {}
    for prompt, ax in zip(prompts, axes, strict=True):
        for r in frame.filter(pl.col("prompt") == prompt).to_dicts():
            x, y = _pct(r["over_answer"]), _pct(r["accuracy"])
            xerr = np.nan_to_num([[x - _pct(r["over_answer_low"])], [_pct(r["over_answer_high"]) - x]]).clip(0)
            yerr = np.nan_to_num([[y - _pct(r["accuracy_low"])], [_pct(r["accuracy_high"]) - y]]).clip(0)
            bars = ax.errorbar(
                x,
                y,
                xerr=xerr,
                yerr=yerr,
                ls="none",
                ms=3,
                lw=0.6,
                capsize=1.0,
                clip_on=False,
                label=_config(r),
                **style(r["model"], r["thinking"]),
            )
            named.setdefault(_config(r), bars)
        ax.set(xlim=RATE_LIMITS, ylim=RATE_LIMITS, xlabel="over-answer rate, L3-L5 (%)")
    axes[0].set_ylabel("accuracy, L1 (%)")
    _legend_below(fig, list(named.values()), list(named))
    return fig
