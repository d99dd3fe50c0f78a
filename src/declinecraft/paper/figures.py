"""Every figure of the paper, in order, and the driver that draws them all into a folder.

A figure is a ``plot_<name>(frame, ...) -> Figure`` function in one of three modules:
``figures_main`` (Figures 1–7 of the main text), ``figures_configs`` (the per-configuration views
8–16 and 26–28) and ``figures_extra`` (labels, leakage, judges, ablations and matched pairs
17–25). Each module lists its figures as :class:`~declinecraft.paper.figure_spec.FigureSpec`
entries, which say what tables a figure needs, so :func:`write_figures` can skip a figure with a
reason instead of faking it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.paper import figure_check, figures_configs, figures_extra, figures_main
from declinecraft.paper.drawing import save
from declinecraft.paper.figure_spec import FigureSpec
from declinecraft.paper.outputs import remove_stale

FIGURE_FILE = re.compile(r"fig\d\d_[a-z0-9_]+\.(pdf|png)")


def figures() -> list[FigureSpec]:
    """Every figure of the paper, in the order they are numbered."""
    return [*figures_main.FIGURES, *figures_configs.FIGURES, *figures_extra.FIGURES]


def write_figures(results: Mapping[str, pl.DataFrame], folder: Path, *, formats: tuple[str, ...], dpi: int,
                  no_input: str = "", captions: Mapping[str, str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Draw every figure the results support into ``folder`` (one file per format), remove figure
    files an earlier run left, and return one status row per figure (``reason`` empty when drawn;
    ``layout``: its layout problems, :func:`figure_check.problems`, empty when none; with
    ``captions`` (stem -> caption of ``paper/main.tex``) also what its caption fails to name).

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
        if not reason:
            fig = spec.draw(results)
            layout = figure_check.problems(fig, None if captions is None else captions.get(spec.stem, ""))
            written |= {f.name for f in save(fig, folder, spec.stem, formats, dpi=dpi)}
        rows.append(dict(kind="figure", number=spec.number, name=spec.stem, title=spec.title, reason=reason,
                         layout="; ".join(layout)))  # fmt: skip
    remove_stale(folder, FIGURE_FILE, written)
    return rows
