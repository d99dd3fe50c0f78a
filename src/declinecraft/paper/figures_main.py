"""Figures 1–7 of the main text: the build pipeline, retrieval depth and pipeline ablations,
thinking on/off, size and release month, the k sweep, and models fine-tuned to abstain."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from declinecraft.analysis import models
from declinecraft.paper.drawing import (
    BLUE,
    COLUMN_IN,
    CONDITION_NAMES,
    FULL_IN,
    GRAY,
    ORANGE,
    label_points,
    lines_panel,
    new_figure,
    note_missing,
    pct,
    rate_axis,
    styled,
)
from declinecraft.paper.figure_spec import FigureSpec, always, needs
from declinecraft.paper.panels import (
    PIPELINE_NAMES,
    PIPELINE_ORDER,
    arrows_panel,
    assoc_text,
    frontier_line,
    size_panel,
    thinking_pairs,
)

FINETUNED_FAMILIES = ("Trust-Align", "Abstain-R1")


@styled
def plot_pipeline(frame: pl.DataFrame | None = None) -> Figure:
    """Figure 1: how a question is built (scenario, target chunk, fact, question, verifier)."""
    fig, ax = new_figure(width=FULL_IN, height=2.0)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 40)
    ax.axis("off")
    boxes = {
        "pre": (1, 24, 15, 12, "$C_{pre}$\nwiki pages at\nthe cut-off", "#e8f0fa"),
        "post": (1, 3, 15, 12, "$C_{post}$\npages created\nafter the cut-off", "#fdf0e3"),
        "scen": (22, 27, 16, 11, "1. Scenario\n3 random $C_{pre}$\nchunks, < 30 words", "white"),
        "target": (44, 14, 17, 14, "2. Target chunk\none of the top 5\nretrieved ($C_{pre}$ or\n$C_{post}$)", "white"),
        "fact": (66, 24, 15, 12, "3. Fact\nnew vs. comparison\ntext (≤ 6, pick 1)", "white"),
        "question": (66, 3, 15, 12, "4. Question\nplayer's view,\nneeds the fact", "white"),
        "verify": (
            85,
            14,
            14,
            14,
            "5. Verifier\nretrieved $C_{pre}$\nsupports (answerable)\nor not (unanswerable)",
            "#eef6ee",
        ),
    }
    centers = {}
    for key, (x, y, w, h, text, color) in boxes.items():
        ax.add_patch(
            FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.4,rounding_size=1.2", fc=color, ec="#555", lw=0.7)
        )
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=6)
        centers[key] = (x, y, w, h)

    def arrow(a: str, b: str, label: str = "", color: str = "#444") -> None:
        xa, ya, wa, ha = centers[a]
        xb, yb, wb, hb = centers[b]
        start = (xa + wa + 0.6, ya + (0.1 * ha if (a, b) == ("pre", "target") else ha / 2))
        end = (xb - 0.6, yb + hb / 2)
        if a == "fact" and b == "question":
            start, end = (xa + wa / 2, ya - 0.6), (xb + wb / 2, yb + hb + 0.6)
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=7, lw=0.8, color=color))
        if label:
            ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 1.2, label, fontsize=6, ha="center", color=color)

    arrow("pre", "scen")
    arrow("pre", "target", "answerable", BLUE)
    arrow("post", "target", "unanswerable", ORANGE)
    arrow("scen", "target")
    arrow("target", "fact")
    arrow("fact", "question")
    arrow("question", "verify")
    return fig


def _k_rows(main_grid: pl.DataFrame, ablation_k: pl.DataFrame) -> pl.DataFrame:
    """CAR per configuration at no RAG, k=5, every ablation k, and iterative (App. A.2)."""
    has_k = ablation_k.filter(pl.col("k") != 5).select("model", "thinking").unique()
    keep = lambda f: f.join(has_k, on=["model", "thinking"], how="semi")  # noqa: E731
    main = keep(main_grid).select("model", "thinking", "condition", "car", "accuracy")
    extra = (
        keep(ablation_k)
        .filter(pl.col("k") != 5)
        .select("model", "thinking", pl.format("k{}", pl.col("k")).alias("condition"), "car", "accuracy")
    )
    frame = pl.concat(
        [
            main.with_columns(
                pl.when(pl.col("condition") == "single")
                .then(pl.lit("k5"))
                .otherwise(pl.col("condition"))
                .alias("condition")
            ),
            extra,
        ]
    )
    return frame.with_columns(config=pl.col("model") + "/" + pl.col("thinking"))


@styled
def plot_k_ablation(main_grid: pl.DataFrame, ablation_k: pl.DataFrame) -> Figure:
    """Figure 2: CAR without retrieval, at k=5 and the other k, and with iterative RAG."""
    frame = _k_rows(main_grid, ablation_k)
    ks = sorted({c for c in frame["condition"].unique().to_list() if c.startswith("k")}, key=lambda c: int(c[1:]))
    order = ["no_rag", *ks, "iterative"]  # retrieval depth grows left to right; iterative goes further
    names = {"no_rag": "No RAG", "iterative": "Iterative", **{c: f"k={c[1:]}" for c in ks}}
    fig, ax = new_figure(height=2.0)
    lines_panel(ax, frame, x="condition", y="car", order=order, names=names, ylabel="Correct Abstention Rate (%)")
    return fig


@styled
def plot_pipelines(ablation_pipelines: pl.DataFrame) -> Figure:
    """Figure 3: CAR under each retrieval pipeline (single-shot RAG), one gray line per model."""
    frame = ablation_pipelines.with_columns(config=pl.col("model") + "/" + pl.col("thinking"))
    order = [p for p in PIPELINE_ORDER if p in frame["pipeline"].to_list()]
    order += [p for p in frame["pipeline"].unique().sort().to_list() if p not in order]
    fig, ax = new_figure(height=2.0)
    lines_panel(
        ax, frame, x="pipeline", y="car", order=order, names=PIPELINE_NAMES, ylabel="Correct Abstention Rate (%)"
    )
    return fig


@styled
def plot_thinking_car(main_grid: pl.DataFrame, paired: pl.DataFrame) -> Figure:
    """Figure 4: CAR with thinking off and on, without retrieval (left) and with single-shot RAG."""
    frames = {c: thinking_pairs(main_grid, paired, c, "car") for c in ("no_rag", "single")}
    n = max(f.height for f in frames.values())
    fig, axes = new_figure(2, width=FULL_IN, height=0.9 + 0.17 * n)
    for ax, (condition, frame) in zip(axes, frames.items(), strict=True):
        arrows_panel(
            ax,
            frame,
            metric="Correct Abstention Rate (%)",
            title=CONDITION_NAMES[condition] if condition != "single" else "Single-shot RAG",
        )
    return fig


def month_name(month: float) -> str:
    """A release month (months since January 2000) as YYYY-MM."""
    return f"{2000 + int(month) // 12}-{int(month) % 12 + 1:02d}"


def month_ticks(ax: Axes, months: np.ndarray) -> None:
    """Label a release-month axis (months since January 2000) with YYYY-MM ticks."""
    months = months[~np.isnan(months)]
    if months.size:
        ticks = np.unique(np.linspace(months.min(), months.max(), min(4, np.unique(months).size)).round())
        ax.set_xticks(ticks, [month_name(t) for t in ticks])


@styled
def plot_size_release(points: pl.DataFrame, associations: pl.DataFrame | None = None) -> Figure:
    """Figure 5: CAR against total parameters (open weights) and release month, single-shot RAG."""
    fig, axes = new_figure(2, width=FULL_IN * 0.75, height=2.1)
    opens = points.filter(pl.col("open_weight"))
    size_panel(
        axes[0],
        opens,
        x="params_total_b",
        y="car",
        xlabel="Total parameters (B)",
        ylabel="Correct Abstention Rate (%)",
        log=True,
        text=assoc_text(associations, "car_total_params"),
    )
    drawn = size_panel(
        axes[1],
        points,
        x="release_month",
        y="car",
        xlabel="Release month",
        ylabel="",
        log=False,
        text=assoc_text(associations, "car_release_month"),
        value=month_name,  # one release month: the panel says which, in place of one tick
    )
    if drawn:
        month_ticks(axes[1], points["release_month"].cast(pl.Float64).fill_null(np.nan).to_numpy())
    return fig


@styled
def plot_k_sweep(ablation_k: pl.DataFrame) -> Figure:
    """Figure 6: CAR and Answer Accuracy against k for the models run at every k."""
    ks = sorted(ablation_k["k"].unique().to_list())
    frame = models.complete_sweep(ablation_k, "k").with_columns(config=pl.col("model") + "/" + pl.col("thinking"))
    # One column wide, as the paper places it: drawn wider, it would be scaled to the column and
    # its type printed under 6 pt.
    fig, axes = new_figure(2, width=COLUMN_IN, height=2.0)
    names = {k: str(k) for k in ks}
    lines_panel(axes[0], frame, x="k", y="car", order=ks, names=names, ylabel="Correct Abstention Rate (%)")
    lines_panel(axes[1], frame, x="k", y="accuracy", order=ks, names=names, ylabel="Answer Accuracy (%)")
    for ax in axes:
        ax.set_xlabel("k (chunks retrieved)")
    return fig


@styled
def plot_finetuned(main_grid: pl.DataFrame) -> Figure:
    """Figure 7: models fine-tuned to abstain against every other configuration (single-shot RAG)."""
    single = main_grid.filter(pl.col("condition") == "single")
    tuned = single.filter(pl.col("family").is_in(FINETUNED_FAMILIES))
    others = single.filter(~pl.col("family").is_in(FINETUNED_FAMILIES))
    fig, axes = new_figure(2, width=FULL_IN * 0.75, height=2.2)
    for ax, y, label in ((axes[0], "car", "Correct Abstention Rate (%)"), (axes[1], "accuracy", "Answer Accuracy (%)")):
        ax.scatter(pct(others["attempt"]), pct(others[y]), s=10, color=GRAY, label="other configurations")
        ax.scatter(pct(tuned["attempt"]), pct(tuned[y]), s=18, color=ORANGE, marker="D", label="fine-tuned")
        if y == "car":
            frontier_line(ax, others["attempt"].to_numpy(), others["car"].to_numpy())
        ax.set_xlabel("Answerable Attempt Rate (%)")
        ax.set_ylabel(label)
        rate_axis(ax, "xy")
        ax.grid(True)
    axes[0].legend(loc="lower left")
    for ax, y in ((axes[0], "car"), (axes[1], "accuracy")):
        label_points(
            ax,
            [
                (
                    100 * (r["attempt"] if r["attempt"] is not None else np.nan),
                    100 * (r[y] if r[y] is not None else np.nan),
                    r["display_name"] or r["model"],
                )
                for r in tuned.iter_rows(named=True)
            ],
        )
    if tuned.height == 0:
        note_missing(axes[1], "no fine-tuned model in this run")
    return fig


def _size_or_release(tables: Mapping[str, pl.DataFrame]) -> str:
    grid = tables.get("main_grid")
    if grid is None or grid.height == 0 or "open_weight" not in grid.columns:
        return "Figure 5 needs single-shot results"
    single = grid.filter(pl.col("condition") == "single")
    if (
        single.filter(pl.col("open_weight")).height == 0
        and single["release_month"].cast(pl.Float64, strict=False).fill_null(np.nan).is_nan().all()
    ):
        return (
            "Figure 5 needs models with parameter counts or release months in params/models.yaml; this run's "
            "models have neither"
        )
    return ""


def _points(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    return models.model_points(tables["main_grid"], "single")


FIGURES = [
    FigureSpec(1, "fig01_pipeline", "Building the benchmark", lambda t: plot_pipeline(), always),
    FigureSpec(
        2,
        "fig02_k_ablation",
        "Retrieval depth ablation",
        lambda t: plot_k_ablation(t["main_grid"], t["ablation_k"]),
        needs(
            "ablation_k",
            "Figure 2 needs single-shot runs at k=5 and another k (e.g. k=10); this run has one k",
            distinct="k",
        ),
    ),
    FigureSpec(
        3,
        "fig03_pipelines",
        "Retrieval pipeline ablation",
        lambda t: plot_pipelines(t["ablation_pipelines"]),
        needs(
            "ablation_pipelines",
            "Figure 3 needs single-shot runs under several retrieval pipelines; this run has one pipeline",
            distinct="pipeline",
        ),
    ),
    FigureSpec(
        4,
        "fig04_thinking_car",
        "Thinking on and off",
        lambda t: plot_thinking_car(t["main_grid"], t["paired_tests"]),
        needs(
            "main_grid",
            "Figure 4 needs thinking on/off pairs; this run's models have no switchable thinking",
            distinct="thinking",
        ),
    ),
    FigureSpec(
        5,
        "fig05_size_release",
        "CAR, size and release month",
        lambda t: plot_size_release(_points(t), t.get("associations")),
        _size_or_release,
    ),
    FigureSpec(
        6,
        "fig06_k_sweep",
        "The k sweep",
        lambda t: plot_k_sweep(t["ablation_k"]),
        needs(
            "ablation_k",
            "Figure 6 needs a k sweep (answer.k_sweep with three or more k); this run has fewer",
            distinct="k",
            min_distinct=3,
        ),
    ),
    FigureSpec(
        7,
        "fig07_finetuned",
        "Models fine-tuned to abstain",
        lambda t: plot_finetuned(t["main_grid"]),
        needs(
            "main_grid",
            "Figure 7 needs the models fine-tuned to abstain (App. A.8); none is in this run",
            family=list(FINETUNED_FAMILIES),
            condition="single",
        ),
    ),
]
