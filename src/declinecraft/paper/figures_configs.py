"""Per-configuration views of the appendix: Figures 8–16 and 26–28 (conditions, thinking and
accuracy, attempt against CAR and accuracy, size, per-model rates, the trade-off frontier)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from declinecraft.analysis.models import model_points
from declinecraft.core import drawn_parts, stats
from declinecraft.core.palette import family_colors
from declinecraft.paper.drawing import (
    BLUE,
    CONDITION_NAMES,
    FULL_IN,
    GRAY,
    MIN_FONT,
    ORANGE,
    key_below,
    label_points,
    lines_panel,
    new_figure,
    pct,
    rate_axis,
    rows_height,
    styled,
)
from declinecraft.paper.figure_spec import FigureSpec, needs
from declinecraft.paper.panels import arrows_panel, assoc_text, frontier_line, size_panel, thinking_pairs

CONDITIONS = ("no_rag", "single", "iterative")


@styled
def plot_conditions(main_grid: pl.DataFrame) -> Figure:
    """Figure 8: CAR (left) and Answer Accuracy (right) under the three conditions, per configuration."""
    fig, axes = new_figure(2, width=FULL_IN * 0.7, height=2.1)
    names = {c: CONDITION_NAMES[c] for c in CONDITIONS}
    lines_panel(
        axes[0],
        main_grid,
        x="condition",
        y="car",
        order=CONDITIONS,
        names=names,
        ylabel="Correct Abstention Rate (%)",
        unit="config_label",
    )
    lines_panel(
        axes[1],
        main_grid,
        x="condition",
        y="accuracy",
        order=CONDITIONS,
        names=names,
        ylabel="Answer Accuracy (%)",
        unit="config_label",
    )
    return fig


@styled
def plot_thinking_accuracy(main_grid: pl.DataFrame) -> Figure:
    """Figure 9: Answer Accuracy with thinking off and on, without retrieval and with single-shot RAG."""
    frames = {
        c: thinking_pairs(main_grid, None, c, "accuracy").with_columns(significant=pl.lit(True))
        for c in ("no_rag", "single")
    }
    n = max(f.height for f in frames.values())
    fig, axes = new_figure(2, width=FULL_IN, height=0.9 + 0.17 * n)
    for ax, (condition, frame) in zip(axes, frames.items(), strict=True):
        arrows_panel(
            ax, frame, metric="Answer Accuracy (%)", title="No RAG" if condition == "no_rag" else "Single-shot RAG"
        )
    return fig


def config_scatter(
    ax: Axes,
    frame: pl.DataFrame,
    *,
    x: str,
    y: str,
    colors: Mapping[str, str],
    bars: bool = True,
    labels: np.ndarray | None = None,
) -> list[tuple[float, float, str]]:
    """One marker per configuration: color by family, square with thinking on, optional interval
    bars. Returns the points ``labels`` marks with their names, for :func:`label_points` once the
    axes' limits and legend are final."""
    named = []
    for row_i, row in enumerate(frame.iter_rows(named=True)):
        xv, yv = 100 * (row[x] if row[x] is not None else np.nan), 100 * (row[y] if row[y] is not None else np.nan)
        color = colors.get(row["family"], GRAY)
        marker = "s" if row["thinking"] == "on" else "o"
        if bars and f"{x}_low" in row and f"{y}_low" in row:
            xerr = [[max(0, xv - 100 * (row[f"{x}_low"] or np.nan))], [max(0, 100 * (row[f"{x}_high"] or np.nan) - xv)]]
            yerr = [[max(0, yv - 100 * (row[f"{y}_low"] or np.nan))], [max(0, 100 * (row[f"{y}_high"] or np.nan) - yv)]]
            ax.errorbar(
                xv, yv, xerr=np.nan_to_num(xerr), yerr=np.nan_to_num(yerr), color=color, lw=0.4, alpha=0.35, zorder=2
            )
        ax.scatter(xv, yv, s=16, marker=marker, color=color, edgecolor="white", lw=0.4, zorder=3)
        if labels is not None and labels[row_i]:
            named.append((xv, yv, row.get("config_label") or row["model"]))
    return named


def thinks(frame: pl.DataFrame) -> bool:
    """Whether any configuration of ``frame`` has thinking on (so the legend's marker for it is drawn)."""
    return "thinking" in frame.columns and bool((frame["thinking"] == "on").any())


#: The most entries of one legend column beside a figure's axes.
LEGEND_ROWS = 12


def family_legend(ax: Axes, colors: Mapping[str, str], *, thinking: bool = True) -> None:
    """Legend of family colors plus, when a configuration thinks, the thinking marker (a legend
    lists only what is drawn), outside the axes at the right, in columns of at most
    :data:`LEGEND_ROWS` entries (a run of 27 models has more families than one column holds)."""
    handles = [Line2D([], [], marker="o", ls="", color=c, label=f) for f, c in colors.items()]
    if thinking:
        handles.append(Line2D([], [], marker="s", ls="", color=GRAY, label="thinking on"))
    ncols = -(-len(handles) // LEGEND_ROWS)
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), ncols=ncols, columnspacing=0.8)


def _label_mask(frame: pl.DataFrame, y: str) -> np.ndarray:
    """Label each family's best ``y`` and every configuration no other exceeds on both axes."""

    if frame.height == 0:
        return np.zeros(0, bool)
    best = (
        frame.with_row_index("_i").sort(y, nulls_last=True).group_by("family").agg(pl.col("_i").last())["_i"].to_list()
    )
    mask = np.zeros(frame.height, bool)
    mask[best] = True
    return mask | _frontier(frame, y)


def _frontier(frame: pl.DataFrame, y: str) -> np.ndarray:
    """The configurations no other exceeds on both attempt and ``y``."""
    return stats.pareto_frontier(frame["attempt"].fill_null(np.nan).to_numpy(), frame[y].fill_null(np.nan).to_numpy())


def _attempt_scatter(main_grid: pl.DataFrame, condition: str, y: str, ylabel: str) -> Figure:
    frame = main_grid.filter(pl.col("condition") == condition)
    colors = family_colors(frame["family"].to_list())
    fig, ax = new_figure(width=FULL_IN * 0.62, height=2.6)
    named = config_scatter(ax, frame, x="attempt", y=y, colors=colors, labels=_label_mask(frame, y))
    if frame.height and _frontier(frame, y).any():  # its points are labelled: the caption may say so
        drawn_parts.mark(fig, "frontier")
    crowded = frame.filter(pl.col("attempt") >= 0.9)
    if crowded.height >= 8 and crowded.height < frame.height:
        inset = ax.inset_axes([0.1, 0.14, 0.38, 0.38])
        config_scatter(inset, crowded, x="attempt", y=y, colors=colors, bars=False)
        inset.tick_params(labelsize=MIN_FONT)
        inset.grid(True)
    ax.set_xlabel("Answerable Attempt Rate (%)")
    ax.set_ylabel(ylabel)
    rate_axis(ax, "xy")
    ax.grid(True)
    family_legend(ax, colors, thinking=thinks(frame))
    key_below(ax, label_points(ax, named, key=True))
    return fig


@styled
def plot_attempt_car(main_grid: pl.DataFrame, condition: str = "single") -> Figure:
    """Figures 10 and 16: Answerable Attempt Rate against CAR, per configuration, Wilson bars."""
    return _attempt_scatter(main_grid, condition, "car", "Correct Abstention Rate (%)")


@styled
def plot_attempt_accuracy(main_grid: pl.DataFrame) -> Figure:
    """Figure 11: Answerable Attempt Rate against Answer Accuracy (single-shot RAG)."""
    return _attempt_scatter(main_grid, "single", "accuracy", "Answer Accuracy (%)")


@styled
def plot_car_active(points: pl.DataFrame, associations: pl.DataFrame | None = None) -> Figure:
    """Figure 12: CAR against active parameters, open-weight models, single-shot RAG."""
    fig, ax = new_figure(height=2.1)
    size_panel(
        ax,
        points.filter(pl.col("open_weight")),
        x="params_active_b",
        y="car",
        xlabel="Active parameters (B)",
        ylabel="Correct Abstention Rate (%)",
        log=True,
        text=assoc_text(associations, "car_active_params"),
    )
    return fig


@styled
def plot_accuracy_size(points: pl.DataFrame, associations: pl.DataFrame | None = None) -> Figure:
    """Figure 13: Answer Accuracy against total parameters, open-weight models, single-shot RAG."""
    fig, ax = new_figure(height=2.1)
    size_panel(
        ax,
        points.filter(pl.col("open_weight")),
        x="params_total_b",
        y="accuracy",
        xlabel="Total parameters (B)",
        ylabel="Answer Accuracy (%)",
        log=True,
        text=assoc_text(associations, "accuracy_total_params"),
    )
    return fig


def _per_model(main_grid: pl.DataFrame, metric: str, xlabel: str) -> Figure:
    points = pl.concat([model_points(main_grid, c) for c in CONDITIONS])
    order = points.filter(pl.col("condition") == "single").sort(metric, nulls_last=True)["model"].to_list()
    order += [m for m in points["model"].unique().sort().to_list() if m not in order]
    names = dict(
        zip(points["model"].to_list(), points["display_name"].fill_null(points["model"]).to_list(), strict=True)
    )
    fig, ax = new_figure(width=COLUMN_WIDTH, height=rows_height(len(order)))
    # Each condition a little above or below its model's line, so equal values never hide each other.
    dodge = dict(zip(CONDITIONS, (-0.22, 0.0, 0.22), strict=True))
    for condition, color, marker in zip(CONDITIONS, (GRAY, BLUE, ORANGE), ("o", "s", "^"), strict=True):
        part = points.filter(pl.col("condition") == condition)
        pos = [order.index(m) + dodge[condition] for m in part["model"].to_list()]
        ax.scatter(pct(part[metric]), pos, color=color, marker=marker, s=14, label=CONDITION_NAMES[condition], zorder=3)
    ax.set_yticks(range(len(order)), [names[m] for m in order])
    # Ended at the axes' right edge: a long model name leaves a narrow axes, and a centred label
    # wider than it would run past the figure (one vLLM model's name took 2.1 of the 3.4 in).
    ax.set_xlabel(xlabel, loc="right")
    rate_axis(ax, "x")
    ax.grid(axis="x")
    ax.legend(loc="lower right" if metric == "car" else "upper left")
    return fig


COLUMN_WIDTH = 3.4


@styled
def plot_car_per_model(main_grid: pl.DataFrame) -> Figure:
    """Figure 14: CAR per model under the three conditions (thinking on or instruct-only)."""
    return _per_model(main_grid, "car", "Correct Abstention Rate (%)")


@styled
def plot_accuracy_per_model(main_grid: pl.DataFrame) -> Figure:
    """Figure 15: Answer Accuracy per model under the three conditions."""
    return _per_model(main_grid, "accuracy", "Answer Accuracy (%)")


def _simple_scatter(frame: pl.DataFrame, x: str, y: str, xlabel: str, ylabel: str, title: str) -> Figure:
    colors = family_colors(frame["family"].to_list())
    fig, ax = new_figure(width=FULL_IN * 0.6, height=2.4)
    config_scatter(ax, frame, x=x, y=y, colors=colors)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    rate_axis(ax, "xy")
    ax.set_title(title)
    ax.grid(True)
    family_legend(ax, colors, thinking=thinks(frame))
    return fig


@styled
def plot_car_accuracy(main_grid: pl.DataFrame, associations: pl.DataFrame | None = None) -> Figure:
    """Figure 26: CAR against Answer Accuracy per configuration, single-shot RAG."""
    single = main_grid.filter(pl.col("condition") == "single")
    return _simple_scatter(
        single,
        "accuracy",
        "car",
        "Answer Accuracy (%)",
        "Correct Abstention Rate (%)",
        assoc_text(associations, "car_accuracy"),
    )


@styled
def plot_car_accuracy_attempted(main_grid: pl.DataFrame, associations: pl.DataFrame | None = None) -> Figure:
    """Figure 27: Accuracy when attempted against CAR, single-shot RAG."""
    single = main_grid.filter(pl.col("condition") == "single")
    return _simple_scatter(
        single,
        "car",
        "accuracy_when_attempted",
        "Correct Abstention Rate (%)",
        "Accuracy when attempted (%)",
        assoc_text(associations, "car_accuracy_when_attempted"),
    )


@styled
def plot_tradeoff(main_grid: pl.DataFrame) -> Figure:
    """Figure 28: CAR against attempt rate without retrieval (gray) and with single-shot RAG (orange)."""
    fig, ax = new_figure(width=COLUMN_WIDTH, height=2.4)
    for condition, color in (("no_rag", GRAY), ("single", ORANGE)):
        part = main_grid.filter(pl.col("condition") == condition)
        for thinking, marker in (("off", "o"), ("on", "s")):
            sub = part.filter(pl.col("thinking") == thinking)
            ax.scatter(
                pct(sub["attempt"]),
                pct(sub["car"]),
                color=color,
                marker=marker,
                s=14,
                edgecolor="white",
                lw=0.4,
                zorder=3,
            )
        frontier_line(
            ax, part["attempt"].fill_null(np.nan).to_numpy(), part["car"].fill_null(np.nan).to_numpy(), color=color
        )
    handles = [
        Line2D([], [], marker="o", ls="", color=GRAY, label="No RAG"),
        Line2D([], [], marker="o", ls="", color=ORANGE, label="Single-shot RAG"),
    ]
    # A legend lists only what is drawn: the thinking marker when a configuration thinks, the
    # frontier when one was drawn.
    if thinks(main_grid):
        handles.append(Line2D([], [], marker="s", ls="", color="k", label="thinking on"))
    if "frontier" in drawn_parts.parts(fig):  # a line, not a single point
        handles.append(Line2D([], [], ls="--", color="k", label="frontier"))
    ax.legend(handles=handles, loc="best")
    ax.set_xlabel("Answerable Attempt Rate (%)")
    ax.set_ylabel("Correct Abstention Rate (%)")
    rate_axis(ax, "xy")
    ax.grid(True)
    return fig


def _pts(t: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    return model_points(t["main_grid"], "single")


_single = needs("main_grid", "needs single-shot results", condition="single")
_open = needs(
    "main_grid",
    "needs open-weight models (parameter counts) under single-shot RAG",
    condition="single",
    open_weight=True,
)
_grid = needs("main_grid", "needs the main grid (no RAG, single-shot, iterative)", distinct="condition", min_distinct=2)
FIGURES = [
    FigureSpec(
        8, "fig08_conditions", "CAR and accuracy by condition", lambda t: plot_conditions(t["main_grid"]), _grid
    ),
    FigureSpec(
        9,
        "fig09_thinking_accuracy",
        "Thinking and accuracy",
        lambda t: plot_thinking_accuracy(t["main_grid"]),
        needs(
            "main_grid",
            "Figure 9 needs thinking on/off pairs; this run's models have no switchable thinking",
            distinct="thinking",
        ),
    ),
    FigureSpec(
        10,
        "fig10_attempt_car_single",
        "Attempt against CAR, single-shot",
        lambda t: plot_attempt_car(t["main_grid"], "single"),
        _single,
    ),
    FigureSpec(
        11,
        "fig11_attempt_accuracy",
        "Attempt against accuracy",
        lambda t: plot_attempt_accuracy(t["main_grid"]),
        _single,
    ),
    FigureSpec(
        12,
        "fig12_car_active_params",
        "CAR and active parameters",
        lambda t: plot_car_active(_pts(t), t.get("associations")),
        _open,
    ),
    FigureSpec(
        13,
        "fig13_accuracy_total_params",
        "Accuracy and total parameters",
        lambda t: plot_accuracy_size(_pts(t), t.get("associations")),
        _open,
    ),
    FigureSpec(14, "fig14_car_per_model", "CAR per model", lambda t: plot_car_per_model(t["main_grid"]), _grid),
    FigureSpec(
        15, "fig15_accuracy_per_model", "Accuracy per model", lambda t: plot_accuracy_per_model(t["main_grid"]), _grid
    ),
    FigureSpec(
        16,
        "fig16_attempt_car_iterative",
        "Attempt against CAR, iterative",
        lambda t: plot_attempt_car(t["main_grid"], "iterative"),
        needs("main_grid", "needs iterative RAG results", condition="iterative"),
    ),
    FigureSpec(
        26,
        "fig26_car_accuracy",
        "CAR against accuracy",
        lambda t: plot_car_accuracy(t["main_grid"], t.get("associations")),
        _single,
    ),
    FigureSpec(
        27,
        "fig27_car_accuracy_attempted",
        "Accuracy when attempted",
        lambda t: plot_car_accuracy_attempted(t["main_grid"], t.get("associations")),
        _single,
    ),
    FigureSpec(
        28,
        "fig28_tradeoff",
        "Trade-off frontier",
        lambda t: plot_tradeoff(t["main_grid"]),
        needs("main_grid", "needs no-RAG and single-shot results", condition=["no_rag", "single"]),
    ),
]
