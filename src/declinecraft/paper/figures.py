"""Every figure of the paper, in order, and the driver that draws them all into a folder.

A figure is a ``plot_<name>(frame, ...) -> Figure`` function in one of three modules:
``figures_main`` (Figures 1–7 of the main text), ``figures_configs`` (the per-configuration views
8–16 and 26–28) and ``figures_extra`` (labels, leakage, judges, ablations and matched pairs
17–25). Each module lists its figures as :class:`~declinecraft.paper.figure_spec.FigureSpec`
entries, which say what tables a figure needs, so :func:`write_figures` can skip a figure with a
reason instead of faking it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from declinecraft.core import drawn_parts, small_n
from declinecraft.core.small_n import counted
from declinecraft.paper import figure_check, figures_configs, figures_extra, figures_main, flat_panels
from declinecraft.paper.drawing import save
from declinecraft.paper.figure_spec import FigureSpec
from declinecraft.paper.outputs import remove_stale

FIGURE_FILE = re.compile(r"fig\d\d_[a-z0-9_]+\.(pdf|png)")
#: Figures whose point is a rank correlation over models or configurations (single-shot RAG):
#: drawn from fewer points than the small-n rule asks for, they show nothing and are printed,
#: with their n, in the paper's list of what the run cannot show.
ASSOCIATIONS = {
    "fig05_size_release": "models",
    "fig12_car_active_params": "models",
    "fig13_accuracy_total_params": "models",
    "fig26_car_accuracy": "configurations",
    "fig27_car_accuracy_attempted": "configurations",
}


def too_few_points(stem: str, results: Mapping[str, pl.DataFrame], min_points: int) -> str:
    """Why figure ``stem`` is drawn from too few points to read (see :data:`ASSOCIATIONS`), or ''."""
    unit = ASSOCIATIONS.get(stem)
    grid = results.get("main_grid")
    if unit is None or grid is None or "condition" not in grid.columns:
        return ""
    single = grid.filter(pl.col("condition") == "single")
    n = single["model"].n_unique() if unit == "models" else single.select("model", "thinking").unique().height
    if n >= min_points:
        return ""
    return f"Drawn from {counted(n, unit)}; a rank correlation needs {min_points}, so it is {small_n.CAVEAT}"


def figures() -> list[FigureSpec]:
    """Every figure of the paper, in the order they are numbered."""
    return [*figures_main.FIGURES, *figures_configs.FIGURES, *figures_extra.FIGURES]


def settle(
    fig: Figure,
    folder: Path,
    stem: str,
    formats: tuple[str, ...],
    *,
    dpi: int,
    created: dt.datetime | None,
    caption: str | None,
    box: tuple[float, float],
) -> tuple[list[str], list[str], set[str]]:
    """What the paper stage does with a drawn figure, the paper's and the views' alike: its constant
    panels said in words (:func:`~declinecraft.paper.flat_panels.say_flat`), the parts its caption
    may name, its layout problems printed in ``box`` (with ``caption``, also the caption's), then
    the files saved. Returns (parts drawn, problems, file names written)."""
    flat_panels.say_flat(fig)
    drawn = sorted(drawn_parts.parts(fig))
    layout = figure_check.problems(fig, caption, box=box)
    return drawn, layout, {f.name for f in save(fig, folder, stem, formats, dpi=dpi, created=created)}


def write_figures(
    results: Mapping[str, pl.DataFrame],
    folder: Path,
    *,
    formats: tuple[str, ...],
    dpi: int,
    no_input: str = "",
    captions: Mapping[str, str] | None = None,
    places: Mapping[str, tuple[float, float]] | None = None,
    min_points: int = 0,
    created: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """Draw every figure the results support into ``folder`` (one file per format), remove figure
    files an earlier run left, and return one status row per figure (``reason`` empty when drawn;
    ``layout``: its layout problems, :func:`figure_check.problems`, empty when none; with
    ``captions`` (stem -> caption of ``paper/main.tex``) also what its caption fails to name;
    each checked in its box of ``places`` (:func:`figure_check.places`; the full width if absent);
    ``small``: why it is drawn from fewer than ``min_points`` points, :func:`too_few_points`;
    ``drawn``: the parts its caption may name, :mod:`~declinecraft.core.drawn_parts`).
    Figure PDFs carry ``created`` as their date (:func:`~declinecraft.paper.drawing.save`).

    ``no_input`` (why the run has no analysis results) replaces the reason of every figure the
    run cannot draw, since then no figure lacks something more specific.
    """
    folder.mkdir(parents=True, exist_ok=True)
    rows, written = [], set()
    for spec in figures():
        reason = spec.lacks(results)
        if reason and no_input:
            reason = f"Figure {spec.number}: no results to draw ({no_input})"
        elif reason and not reason.startswith("Figure"):
            reason = f"Figure {spec.number} {reason}"
        layout: list[str] = []
        drawn: list[str] = []
        small = "" if reason else too_few_points(spec.stem, results, min_points)
        if not reason:
            caption = None if captions is None else captions.get(spec.stem, "")
            box = (places or {}).get(spec.stem, figure_check.FULL_BOX_IN)
            drawn, layout, files = settle(
                spec.draw(results), folder, spec.stem, formats, dpi=dpi, created=created, caption=caption, box=box
            )
            written |= files
        rows.append(
            dict(
                kind="figure",
                number=spec.number,
                name=spec.stem,
                title=spec.title,
                reason=reason,
                layout="; ".join(layout),
                small=small,
                drawn=drawn,
            )
        )
    remove_stale(folder, FIGURE_FILE, written)
    return rows
