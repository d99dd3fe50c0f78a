"""What a figure of the paper is: its number, file stem, how to draw it and what it needs.

Each figure module lists its figures as :class:`FigureSpec` entries; ``lacks`` says why a run
cannot fill a figure (built with :func:`needs`), so the paper stage skips it with that reason
instead of drawing something empty or fake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl
from matplotlib.figure import Figure


@dataclass(frozen=True)
class FigureSpec:
    """One figure of the paper: its number, file stem, what it shows and what it needs."""

    number: int
    stem: str
    title: str
    draw: Callable[[Mapping[str, pl.DataFrame]], Figure]
    """Draws the figure from the analysis tables."""
    lacks: Callable[[Mapping[str, pl.DataFrame]], str]
    """Returns why the run cannot fill the figure, or "" when it can."""


def _rows(tables: Mapping[str, pl.DataFrame], name: str, **where: Any) -> pl.DataFrame:
    table = tables.get(name)
    if table is None or table.height == 0:
        return pl.DataFrame()
    for col, value in where.items():
        if col not in table.columns:
            return pl.DataFrame()
        table = table.filter(pl.col(col).is_in(value) if isinstance(value, (list, tuple)) else pl.col(col) == value)
    return table


def needs(
    name: str, reason: str, *, min_rows: int = 1, distinct: str | None = None, min_distinct: int = 2, **where: Any
) -> Callable[[Mapping[str, pl.DataFrame]], str]:
    """A ``lacks`` check: table ``name`` (filtered by ``where``) has rows (and enough distinct values)."""

    def lacks(tables: Mapping[str, pl.DataFrame]) -> str:
        rows = _rows(tables, name, **where)
        if rows.height < min_rows:
            return reason
        if distinct and (distinct not in rows.columns or rows[distinct].drop_nulls().n_unique() < min_distinct):
            return reason
        return ""

    return lacks


def always(_: Mapping[str, pl.DataFrame]) -> str:
    """A ``lacks`` check for figures that need no run data (the pipeline diagram)."""
    return ""
