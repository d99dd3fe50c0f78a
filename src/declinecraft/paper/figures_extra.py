"""Figures 17–25 of the appendix: how models decline, leakage, accuracy judges, the retrieval
ablations (k, pipelines, scenario) and the matched thinking pairs."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from declinecraft.analysis import models
from declinecraft.core import drawn_parts, stats
from declinecraft.paper.drawing import (
    BLUE,
    COLUMN_IN,
    CONDITION_NAMES,
    FULL_IN,
    GRAY,
    LABEL_COLORS,
    MAX_HEIGHT_IN,
    ORANGE,
    clip_rate,
    lines_panel,
    mean_with_interval,
    new_figure,
    note_missing,
    pct,
    rate_axis,
    row_blocks,
    rows_height,
    styled,
)
from declinecraft.paper.figure_spec import FigureSpec, needs
from declinecraft.paper.panels import PIPELINE_NAMES, PIPELINE_ORDER

SHARES = (
    ("share_abstain", "ABSTAIN", "abstain"),
    ("share_deny", "DENY", "premise denial"),
    ("share_answer", "ANSWER", "answer"),
)


def stacked_shares(ax: Axes, frame: pl.DataFrame, labels: list[str]) -> None:
    """Horizontal stacked bars of the three label shares, one bar per row of ``frame``."""
    left = np.zeros(frame.height)
    for col, label, name in SHARES:
        values = pct(frame[col]) if frame.height else np.zeros(0)
        values = np.nan_to_num(values)
        ax.barh(np.arange(frame.height), values, left=left, color=LABEL_COLORS[label], label=name, height=0.75)
        left += values
    ax.set_yticks(np.arange(frame.height), labels)
    ax.set_xlim(0, 100)
    ax.invert_yaxis()


@styled
def plot_family_labels(family_label_shares: pl.DataFrame) -> Figure:
    """Figure 17: abstention, premise denial and answer shares per family and condition."""
    conditions = [c for c in ("no_rag", "single", "iterative") if c in family_label_shares["condition"].to_list()]
    families = sorted(family_label_shares["family"].unique().to_list())
    fig, axes = new_figure(
        len(conditions), width=FULL_IN, height=0.8 + 0.15 * len(families), sharey=True, squeeze=False
    )
    for ax, condition in zip(axes[0], conditions, strict=True):
        part = pl.DataFrame({"family": families}).join(
            family_label_shares.filter(pl.col("condition") == condition), on="family", how="left"
        )
        stacked_shares(ax, part, families)
        ax.set_title(CONDITION_NAMES[condition] if condition != "single" else "Single-shot RAG")
        ax.set_xlabel("Share of unanswerable (%)")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside upper center", ncols=3)
    return fig


@styled
def plot_model_labels(main_grid: pl.DataFrame) -> Figure:
    """Figure 18: label shares per configuration under single-shot RAG, families together,
    smallest model first within a family."""
    part = main_grid.filter(pl.col("condition") == "single").sort(
        "family", "params_total_b", "thinking", nulls_last=True
    )
    blocks = row_blocks(part.height)
    # A long list of configurations is drawn as panels side by side, so its labels stay printable.
    width = FULL_IN if len(blocks) > 1 else FULL_IN * 0.6
    fig, axes = new_figure(len(blocks), width=width, height=rows_height(len(blocks[0]), per_row=0.14), squeeze=False)
    labels = part["config_label"].to_list()
    for ax, rows in zip(axes[0], blocks, strict=True):
        stacked_shares(ax, part[rows.start : rows.stop], labels[rows.start : rows.stop])
        ax.set_xlabel("Share of unanswerable questions (%)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside upper center", ncols=3)
    return fig


def _scored_note(row: dict) -> str:
    """ " (n=5, 2 without score)" for a leakage row whose answers a judge left unscored."""
    n, dropped = row.get("n"), row.get("dropped")
    if n is None:
        return ""
    return f" (n={n}, {dropped} without score)" if dropped else f" (n={n})"


@styled
def plot_leakage(leakage_model: pl.DataFrame, facts: pl.DataFrame | None = None) -> Figure:
    """Figure 19: accuracy on the unanswerable questions without retrieval, with bootstrap
    intervals, next to the attempt rate, most accurate first; dashed line at GPT-OSS 120B when it
    is in the run."""
    frame = leakage_model.sort("accuracy", descending=True, nulls_last=True)
    if facts is not None and "display_name" in facts.columns:
        frame = frame.join(facts.select("model", "display_name"), on="model", how="left")
    names = [
        (r.get("display_name") or r["model"]) + (" (thinking)" if r["thinking"] == "on" else "") + _scored_note(r)
        for r in frame.iter_rows(named=True)
    ]
    # A long list of configurations is drawn as blocks side by side (each an accuracy and an
    # attempt panel), so its labels stay printable.
    blocks = row_blocks(frame.height)
    counted = [r for r in frame.iter_rows(named=True) if r.get("n") is not None]
    fig, axes = new_figure(
        2 * len(blocks),
        width=FULL_IN if len(blocks) > 1 else FULL_IN * 0.75,
        height=rows_height(len(blocks[0]), per_row=0.15),
        squeeze=False,
        gridspec_kw={"width_ratios": [3, 2] * len(blocks)},
    )
    reference = frame.filter(pl.col("model") == "gpt-oss-120b")
    for block, rows in enumerate(blocks):
        left, right = axes[0][2 * block], axes[0][2 * block + 1]
        part = frame[rows.start : rows.stop]
        acc, low, high = (
            pct(part["accuracy"]),
            clip_rate(pct(part["accuracy_low"])),
            clip_rate(pct(part["accuracy_high"])),
        )
        ys = np.arange(part.height)
        err = np.nan_to_num(np.vstack([acc - low, high - acc]))
        left.errorbar(acc, ys, xerr=err, fmt="o", color=BLUE, ms=3, capsize=1.5)
        if np.any(err > 0):
            drawn_parts.mark(fig, "interval")
        left.set_xlabel("Accuracy on\nunanswerable (%)")
        if reference.height:
            left.axvline(100 * reference["accuracy"][0], ls="--", color=GRAY, lw=0.8)
        right.scatter(pct(part["attempt"]), ys, color=ORANGE, s=12)
        right.set_xlabel("Attempted\n(%)")
        left.set_yticks(ys, names[rows.start : rows.stop])
        right.sharey(left)
        left.set_ylim(part.height - 0.5, -0.5)  # the most accurate on top
        right.tick_params(labelleft=False)
        for ax in (left, right):
            rate_axis(ax, "x")
            ax.grid(axis="x")
    # What the labels carry, for the caption (core.drawn_parts): the counts, and the unscored.
    if counted:
        drawn_parts.mark(fig, "counts")
    if any(r.get("dropped") for r in counted):
        drawn_parts.mark(fig, "unscored")
    return fig


@styled
def plot_judge_pairs(judge_run_accuracy: pl.DataFrame, judges: list[str] | None = None) -> Figure:
    """Figure 20: run-level Answer Accuracy under each pair of accuracy judges (Spearman rho on top)."""
    judges = judges or [c for c in judge_run_accuracy.columns if c.startswith("score_")]
    pairs = list(itertools.combinations(judges, 2))
    fig, axes = new_figure(max(len(pairs), 1), width=min(FULL_IN, 2.3 * max(len(pairs), 1)), height=2.2, squeeze=False)
    for ax, (a, b) in zip(axes[0], pairs, strict=False):
        x, y = pct(judge_run_accuracy[a]), pct(judge_run_accuracy[b])
        rho, _ = stats.spearman(x, y)
        ax.scatter(x, y, s=8, color=BLUE, alpha=0.7)
        ax.plot([0, 100], [0, 100], color=GRAY, lw=0.6, ls="--")
        rate_axis(ax, "xy")
        ax.set_xlabel(f"Answer Accuracy, {a.removeprefix('score_')} (%)")
        ax.set_ylabel(f"Answer Accuracy, {b.removeprefix('score_')} (%)")
        ax.set_title("ρ = n/a" if np.isnan(rho) else f"ρ = {rho:.2f}")
        ax.grid(True)
    if not pairs:
        note_missing(axes[0][0], "one accuracy judge only")
    return fig


def _configs(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(config=pl.col("model") + "/" + pl.col("thinking"))


@styled
def plot_k_choice(ablation_k: pl.DataFrame, retrieval_k: pl.DataFrame | None = None) -> Figure:
    """Figure 21: retrieval alone by k (top: answerable questions retrieving their target chunk,
    unanswerable ones a scenario chunk), then CAR and accuracy by k for the models run at every k."""
    ks = sorted(ablation_k["k"].unique().to_list())
    fig, axes = new_figure(1, 3, width=COLUMN_IN, height=MAX_HEIGHT_IN, sharex=False)
    if retrieval_k is not None and retrieval_k.height:
        part = retrieval_k.sort("k")
        xs = np.arange(part.height)
        for col, color, name in (
            ("target_hit", BLUE, "answerable: target chunk"),
            ("scenario_hit", ORANGE, "unanswerable: scenario chunk"),
        ):
            if col in part.columns:
                axes[0].plot(xs, pct(part[col]), marker="o", color=color, label=name)
        axes[0].set_xticks(xs, [str(k) for k in part["k"].to_list()])
        rate_axis(axes[0])
        axes[0].set_ylabel("Retrieved (%)")
        axes[0].legend()
    else:
        note_missing(axes[0], "retrieval-only hit rates per k are not in this run")
    frame = _configs(models.complete_sweep(ablation_k, "k"))
    names = {k: str(k) for k in ks}
    lines_panel(axes[1], frame, x="k", y="car", order=ks, names=names, ylabel="CAR (%)")
    lines_panel(axes[2], frame, x="k", y="accuracy", order=ks, names=names, ylabel="Accuracy (%)")
    axes[2].set_xlabel("k")
    return fig


@styled
def plot_pipelines_car_accuracy(ablation_pipelines: pl.DataFrame) -> Figure:
    """Figure 22: CAR (left) and Answer Accuracy (right) under the six retrieval pipelines."""
    frame = _configs(ablation_pipelines)
    order = [p for p in PIPELINE_ORDER if p in frame["pipeline"].to_list()]
    fig, axes = new_figure(2, width=FULL_IN, height=2.2)
    lines_panel(
        axes[0], frame, x="pipeline", y="car", order=order, names=PIPELINE_NAMES, ylabel="Correct Abstention Rate (%)"
    )
    lines_panel(
        axes[1], frame, x="pipeline", y="accuracy", order=order, names=PIPELINE_NAMES, ylabel="Answer Accuracy (%)"
    )
    return fig


@styled
def plot_scenario(ablation_scenario: pl.DataFrame) -> Figure:
    """Figure 23: CAR and attempt rate with the scenario (default) and without it."""
    frame = _configs(ablation_scenario).with_columns(
        variant=pl.when(pl.col("scenario")).then(pl.lit("with")).otherwise(pl.lit("without"))
    )
    fig, axes = new_figure(2, width=COLUMN_IN, height=2.1)
    for ax, metric, label in (
        (axes[0], "car", "Correct Abstention Rate (%)"),
        (axes[1], "attempt", "Answerable Attempt Rate (%)"),
    ):
        wide = frame.pivot(on="variant", index="config", values=metric, aggregate_function="first")
        matrix = pct(
            wide.select(
                [pl.col(c).cast(pl.Float64) if c in wide.columns else pl.lit(np.nan) for c in ("with", "without")]
            ).to_numpy()
        )
        for row in matrix:
            ax.plot([0, 1], row, color=GRAY, lw=0.6)
        mean_with_interval(ax, [0, 1], matrix)
        ax.set_xticks([0, 1], ["with scenario", "question only"])
        ax.set_ylabel(label)
        rate_axis(ax)
        ax.grid(axis="y")
    return fig


@styled
def plot_scenario_overlap(scenario_overlap: pl.DataFrame) -> Figure:
    """Figure 24: share of unanswerable questions whose top chunks include a scenario chunk, per pipeline."""
    order = [p for p in PIPELINE_ORDER if p in scenario_overlap["pipeline"].to_list()]
    frame = pl.DataFrame({"pipeline": order}).join(scenario_overlap, on="pipeline", how="left")
    fig, ax = new_figure(height=1.9)
    ax.bar(np.arange(frame.height), pct(frame["share"]), color=BLUE)
    ax.set_xticks(np.arange(frame.height), [PIPELINE_NAMES.get(p, p) for p in order])
    ax.set_ylim(0, 100)
    ax.set_ylabel("Scenario chunk retrieved (%)")
    ax.grid(axis="y")
    return fig


@styled
def plot_transitions(thinking_transitions: pl.DataFrame, facts: pl.DataFrame | None = None) -> Figure:
    """Figure 25: share of matched questions moving abstain->deny (orange) and deny->abstain (blue)
    when thinking is enabled; faded when not significant, * when significant."""
    frame = thinking_transitions.with_columns(ad=pl.col("a_to_d") / pl.col("n"), da=pl.col("d_to_a") / pl.col("n"))
    if facts is not None:
        frame = frame.join(facts.select("model", "display_name"), on="model", how="left")
    order = frame.filter(pl.col("condition") == "no_rag").sort("net_shift")["model"].to_list()
    order += [m for m in frame["model"].unique().sort().to_list() if m not in order]
    conditions = [c for c in ("no_rag", "single") if c in frame["condition"].to_list()]
    fig, axes = new_figure(
        len(conditions), width=FULL_IN * 0.8, height=0.8 + 0.17 * len(order), sharey=True, squeeze=False
    )
    names = {r["model"]: r.get("display_name") or r["model"] for r in frame.iter_rows(named=True)}
    for ax, condition in zip(axes[0], conditions, strict=True):
        part = frame.filter(pl.col("condition") == condition)
        for row in part.iter_rows(named=True):
            y = order.index(row["model"])
            alpha = 1.0 if row["sig_ad"] else 0.35
            ax.barh(y - 0.2, 100 * row["ad"], height=0.38, color=ORANGE, alpha=alpha)
            ax.barh(y + 0.2, 100 * row["da"], height=0.38, color=BLUE, alpha=alpha)
            if row["sig_ad"]:
                ax.text(100 * max(row["ad"], row["da"]) + 0.5, y, "*", va="center", fontsize=7)
        if part.height and not (part["a_to_d"].sum() or part["d_to_a"].sum()):
            ax.text(0.5, 0.5, "no abstain/deny changes", transform=ax.transAxes, ha="center", va="center", color=GRAY)
        ax.set_title("No RAG" if condition == "no_rag" else "Single-shot RAG")
        ax.set_xlabel("Share of matched questions (%)")
        ax.grid(axis="x")
    # One scale from 0 for both panels (a panel without changes would otherwise centre on 0).
    top = 100 * float(frame.select(pl.max_horizontal(pl.col("ad", "da").fill_nan(0).max())).item() or 0)
    for ax in axes[0]:
        ax.set_xlim(0, max(5.0, 1.15 * top + 1))
    axes[0][0].set_yticks(range(len(order)), [names.get(m, m) for m in order])
    axes[0][0].invert_yaxis()
    return fig


_think = "needs thinking on/off pairs; this run's models have no switchable thinking"
FIGURES = [
    FigureSpec(
        17,
        "fig17_family_labels",
        "Labels by family",
        lambda t: plot_family_labels(t["family_label_shares"]),
        needs("family_label_shares", "needs label shares"),
    ),
    FigureSpec(
        18,
        "fig18_model_labels",
        "Labels by model",
        lambda t: plot_model_labels(t["main_grid"]),
        needs("main_grid", "needs single-shot results", condition="single"),
    ),
    FigureSpec(
        19,
        "fig19_leakage",
        "Leakage audit",
        lambda t: plot_leakage(t["leakage_model"], t.get("facts")),
        needs("leakage_model", "needs no-RAG answers to unanswerable questions scored by the accuracy judges"),
    ),
    FigureSpec(
        20,
        "fig20_judge_pairs",
        "Accuracy judges",
        lambda t: plot_judge_pairs(t["judge_run_accuracy"]),
        lambda t: (
            ""
            if len([c for c in t.get("judge_run_accuracy", pl.DataFrame()).columns if c.startswith("score_")]) >= 2
            else "Figure 20 needs two or more accuracy judges; this run has fewer"
        ),
    ),
    FigureSpec(
        21,
        "fig21_k_choice",
        "Choice of k",
        lambda t: plot_k_choice(t["ablation_k"], t.get("retrieval_k")),
        needs(
            "ablation_k", "Figure 21 needs a k sweep (answer.k_sweep); this run has one k", distinct="k", min_distinct=3
        ),
    ),
    FigureSpec(
        22,
        "fig22_pipelines",
        "Retrieval ablation",
        lambda t: plot_pipelines_car_accuracy(t["ablation_pipelines"]),
        needs(
            "ablation_pipelines",
            "Figure 22 needs several retrieval pipelines (answer.pipelines); this run has one",
            distinct="pipeline",
        ),
    ),
    FigureSpec(
        23,
        "fig23_scenario",
        "Scenario ablation",
        lambda t: plot_scenario(t["ablation_scenario"]),
        needs(
            "ablation_scenario",
            "Figure 23 needs runs without the scenario (answer.no_scenario); this run has none",
            distinct="scenario",
        ),
    ),
    FigureSpec(
        24,
        "fig24_scenario_overlap",
        "Scenario chunks retrieved",
        lambda t: plot_scenario_overlap(t["scenario_overlap"]),
        needs(
            "scenario_overlap",
            (
                "Figure 24 needs the scenario-chunk overlap of several retrieval pipelines (answer.pipelines); "
                "this run has one"
            ),
            distinct="pipeline",
        ),
    ),
    FigureSpec(
        25,
        "fig25_transitions",
        "Matched thinking pairs",
        lambda t: plot_transitions(t["thinking_transitions"], t.get("facts")),
        needs("thinking_transitions", "Figure 25 " + _think),
    ),
]
