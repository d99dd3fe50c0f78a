"""The view's figures, each drawn from one of its CSV tables: ``plot_<name>(frame) -> Figure``.

Headline figures show K2G's standard prompt read by the strict parser, one panel per condition.
Figures are built on :class:`matplotlib.figure.Figure` (Agg, no pyplot state), so the paper
stage can style and save them in its own formats; an empty table gives a figure that says so.
"""

from __future__ import annotations

from typing import TypedDict

import matplotlib

matplotlib.use("Agg")

import polars as pl
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from declinecraft.core import catalogue, flat_panel
from declinecraft.core.palette import model_styles
from declinecraft.views.know2guess.protocol import STANDARD

CONDITION_NAMES = {"no_rag": "No retrieval", "single": "Single-shot RAG (ours)"}
#: Outcome-profile segments: column, legend text, colour.
SEGMENTS = (
    ("correct", "correct", "#2b8a3e"),
    ("wrong", "wrong", "#c0392b"),
    ("unnecessary_abstention", "unnecessary abstention", "#e07b1a"),
    ("productive_abstention", "productive abstention", "#1f5fa8"),
    ("missed_abstention", "missed abstention", "#9a9a9a"),
    ("refusal", "policy refusal", "#8e6bbf"),
    ("parse_error", "parse error", "#d0d0d0"),
)
"""Refusals and parse errors are outcomes of their own (K2G §6.7 keeps refusal apart)."""
WIDTH_IN = 6.9
"""Width of every figure, inches: within the page's 7 in, so LaTeX never scales its type down."""


ROW_IN = 0.1
"""Height of one configuration's bar in the outcome profile, inches: 27 rows of 6 pt labels stay
apart and the figure within 0.42 of the text's height (``figure_check.FULL_BOX_IN``)."""
LEGEND_ROW_IN = 0.15
"""Height of one line of a legend of 6 pt entries, inches."""


#: A proportion axis: 0 to 1 with a margin, so a point at 0 or 1 sits inside the frame.
UNIT_VIEW = (-0.04, 1.04)


def _headline(frame: pl.DataFrame) -> pl.DataFrame:
    """The standard prompt, strict parser rows of a table (all rows when it has no such columns)."""
    if "prompt" in frame.columns:
        frame = frame.filter(pl.col("prompt") == STANDARD)
    if "parser" in frame.columns:
        frame = frame.filter(pl.col("parser") == "strict")
    return frame


def _config(row: dict[str, object]) -> str:
    return f"{row['model']}" + ("" if row.get("thinking") in (None, "off") else f" ({row['thinking']})")


class _LineStyle(TypedDict):
    color: str
    marker: str
    linestyle: str


def _line_style(model: object, thinking: object) -> _LineStyle:
    """A configuration's line: its model's colour and marker in every figure, dashed with thinking on."""
    color, marker = model_styles([str(model)])[str(model)]
    return {"color": color, "marker": marker, "linestyle": "-" if thinking in (None, "off") else "--"}


def _panels(
    frame: pl.DataFrame, height: float = 2.4, *, sharey: bool = False
) -> tuple[Figure, list[tuple[str, Axes, pl.DataFrame]]]:
    """One axis per condition present (a single 'no data' axis when the frame is empty); with
    ``sharey`` only the first carries the y labels."""
    conditions = sorted(frame["condition"].unique().to_list()) if frame.height else []
    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    axes = fig.subplots(1, max(1, len(conditions)), squeeze=False, sharey=sharey)[0]
    if not conditions:
        axes[0].text(0.5, 0.5, "no Know2Guess results in this run", ha="center", va="center")
        axes[0].set_axis_off()
        return fig, []
    return fig, [(c, ax, frame.filter(pl.col("condition") == c)) for c, ax in zip(conditions, axes, strict=True)]


def _legend_columns(labels: list[str]) -> int:
    """How many columns of ``labels`` the page's width holds (at 6 pt, with their handles)."""
    longest = max((len(label) for label in labels), default=1)
    return max(1, min(len(labels), int(WIDTH_IN / (0.45 + 0.05 * longest))))


def _lines_height(frame: pl.DataFrame) -> float:
    """The height of a figure of panels of one line per configuration, with their legend below."""
    head = _headline(frame)
    labels = (
        [_config(r) for r in head.select("model", "thinking").unique().iter_rows(named=True)] if head.height else []
    )
    return 2.1 + LEGEND_ROW_IN * -(-len(labels) // _legend_columns(labels)) if labels else 2.4


def _legend_below(fig: Figure, panels: list[tuple[str, Axes, pl.DataFrame]]) -> None:
    """One legend of every panel's lines under the panels, as many columns as the page holds
    (in a panel, a legend of many configurations would cover its lines and title)."""
    named: dict[str, Artist] = {}
    for _, ax, _ in panels:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            named.setdefault(label, handle)
    if named:
        labels = list(named)
        fig.legend(
            list(named.values()),
            labels,
            fontsize=6,
            loc="outside lower center",
            ncols=_legend_columns(labels),
            frameon=False,
        )


def plot_reliability_vs_lambda(frame: pl.DataFrame) -> Figure:
    """R_λ against λ, one line per configuration (``know2guess_cost_sensitive.csv``)."""
    fig, panels = _panels(_headline(frame), _lines_height(frame))
    for condition, ax, part in panels:
        for key, line in part.sort("lam").group_by(["model", "thinking"], maintain_order=True):
            ax.plot(
                line["lam"],
                line["reliability"],
                **_line_style(*key),
                label=_config(dict(zip(("model", "thinking"), key, strict=True))),
            )
        ax.set(
            title=CONDITION_NAMES.get(condition, condition),
            xlabel="λ (weight of productive abstention)",
            ylabel=r"$R_\lambda$",
            ylim=UNIT_VIEW,
        )
    _legend_below(fig, panels)
    return fig


def plot_reliability_diagram(frame: pl.DataFrame) -> Figure:
    """Accuracy of answered items against their stated confidence per bin (``know2guess_calibration.csv``)."""
    fig, panels = _panels(_headline(frame).filter(pl.col("n") > 0) if frame.height else frame, _lines_height(frame))
    said = 0
    for condition, ax, part in panels:
        confidence = flat_panel.one_value(part["confidence"].to_list())
        if confidence is not None:  # every answer states one confidence: no curve to draw
            n = int(part["n"].sum())
            correct = float((part["accuracy"].fill_nan(0.0) * part["n"]).sum())
            flat_panel.say(
                ax,
                f"{CONDITION_NAMES.get(condition, condition)}: one stated confidence in this run,\n"
                f"{confidence:.2f}, on all {n} answered replies ({correct / n:.0%} correct),\n"
                "so no calibration curve is drawn",
            )
            said += 1
            continue
        ax.plot([0, 1], [0, 1], color="#9a9a9a", linewidth=0.8, linestyle="--")
        for key, line in part.sort("bin").group_by(["model", "thinking"], maintain_order=True):
            ax.plot(
                line["confidence"],
                line["accuracy"],
                **_line_style(*key),
                label=_config(dict(zip(("model", "thinking"), key, strict=True))),
            )
        ax.set(
            title=CONDITION_NAMES.get(condition, condition),
            xlabel="stated confidence",
            ylabel="accuracy",
            xlim=UNIT_VIEW,
            ylim=UNIT_VIEW,
        )
    _legend_below(fig, panels)
    if panels and said == len(panels):  # sentences only: no room kept for axes
        fig.set_size_inches(WIDTH_IN, 0.8)
    return fig


def plot_outcome_profile(frame: pl.DataFrame) -> Figure:
    """Stacked shares of the outcome profile per configuration (``know2guess_outcomes.csv``): every
    outcome of :data:`SEGMENTS`, policy refusals and parse errors included; a table from before
    they had columns of their own draws them as 0."""
    head = _headline(frame)
    n_configs = head.select("model", "thinking").unique().height if head.height else 1
    # The legend takes two rows; the configurations share one axis of rows, named on the left.
    fig, panels = _panels(head, height=1.15 + ROW_IN * max(1, n_configs), sharey=True)
    keys = head.select("model", "thinking").unique().sort("model", "thinking") if head.height else head
    order = [_config(r) for r in keys.iter_rows(named=True)]
    for condition, ax, part in panels:
        part = part.sort("model", "thinking")
        rows = [order.index(_config(r)) for r in part.iter_rows(named=True)]  # one order in both panels
        left = [0.0] * part.height
        for column, name, colour in SEGMENTS:
            count = part[column] if column in part.columns else pl.Series([0] * part.height)
            share = (count / part["n"]).fill_nan(0.0).to_list()
            ax.barh(rows, share, left=left, color=colour, label=name)
            left = [a + b for a, b in zip(left, share, strict=True)]
        ax.set(title=CONDITION_NAMES.get(condition, condition), xlabel="share of questions", xlim=(0, 1))
    if panels:  # below the panels: inside one it would cover bars or the title of a short figure
        panels[0][1].set_yticks(range(len(order)), order)
        panels[0][1].tick_params(axis="y", labelsize=6)
        handles, names = panels[-1][1].get_legend_handles_labels()
        # In two rows: seven entries in one would make the figure wider than the page, and LaTeX
        # would scale its type under 6 pt.
        fig.legend(handles, names, fontsize=6, loc="outside lower center", ncols=4, frameon=False)
    return fig


def plot_parser_scatter(frame: pl.DataFrame) -> Figure:
    """Reliability under the normalized parser against the strict one, every run and prompt
    (``know2guess_parser_sensitivity.csv``, metric ``reliability``)."""
    part = frame.filter(pl.col("metric") == "reliability") if frame.height else frame
    fig, panels = _panels(part)
    for condition, ax, rows in panels:
        ax.plot([0, 1], [0, 1], color="#9a9a9a", linewidth=0.8, linestyle="--")
        for prompt, group in rows.group_by("prompt", maintain_order=True):
            ax.scatter(group["base_value"], group["value"], s=14, label=str(prompt[0]))
        ax.set(
            title=CONDITION_NAMES.get(condition, condition),
            xlabel="reliability, strict parser",
            ylabel="reliability, normalized parser",
            xlim=UNIT_VIEW,
            ylim=UNIT_VIEW,
        )
        ax.legend(fontsize=6)
    return fig


#: Figure file stem -> (plot function, the table it reads), for the paper stage.
FIGURES = {
    "k2g_reliability_lambda": (plot_reliability_vs_lambda, catalogue.K2G_COST_SENSITIVE),
    "k2g_reliability_diagram": (plot_reliability_diagram, catalogue.K2G_CALIBRATION),
    "k2g_outcome_profile": (plot_outcome_profile, catalogue.K2G_OUTCOMES),
    "k2g_parser_scatter": (plot_parser_scatter, catalogue.K2G_PARSER_SENSITIVITY),
}
