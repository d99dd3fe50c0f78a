"""How the Know2Guess section's numbers print, and the list that collects them.

Proportions print as percent with one decimal (the text adds ``\\%``), shifts as signed points,
κ, AUROC and ECE with two decimals. A number the run cannot supply prints ``n/a`` and says why.
Direction words ("higher", "lower", "the same") are chosen from the same numbers, at the precision
they print, so the prose follows the data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import polars as pl

from declinecraft.core import small_n

#: One macro: (name, LaTeX value, what it is).
Macro = tuple[str, str, str]
#: Half a printed unit: shifts smaller than this print as 0.0 points and read "the same".
TOLERANCE = 0.0005


def direction(difference: float | None, tolerance: float = TOLERANCE) -> str:
    """'higher', 'lower' or 'the same' for a difference (NaN or None: 'not comparable')."""
    if difference is None or math.isnan(difference):
        return "not comparable"
    return "higher" if difference >= tolerance else "lower" if difference <= -tolerance else "the same"


def fmt(value: Any, kind: str) -> str:
    """Print a value: ``pct`` (percent, one decimal), ``pts`` (signed points), ``num`` (two decimals),
    ``int``, or ``text``; None and NaN print ``n/a``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if kind == "text":
        return str(value)
    v = float(value)
    text = {"pct": f"{100 * v:.1f}", "pts": f"{100 * v:+.1f}", "num": f"{v:.2f}", "int": f"{round(v):,}"}[kind]
    return text.replace("-", "\\textminus ").replace(",", "{,}")


#: What a direction word says when the number behind it is below the small-n rule.
NOT_AT_THIS_N = "not comparable at this n"

_ERRORS = (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError, pl.exceptions.PolarsError)


class Collector:
    """Macros in order; a getter that fails or finds nothing gives n/a with the reason. A number
    whose n is below ``min_n`` (the small-n rule, :mod:`declinecraft.core.small_n`) prints as
    ``\\dcsmall{value}{n}`` and counts as n/a for the words chosen from it."""

    def __init__(self, min_n: int) -> None:
        self.out: list[Macro] = []
        self.min_n = min_n
        self.small: set[str] = set()

    def is_small(self, name: str) -> bool:
        """Whether macro ``name`` was printed below the small-n threshold."""
        return name in self.small

    def add(
        self,
        name: str,
        what: str,
        get: Callable[[], Any],
        kind: str = "pct",
        *,
        n: Callable[[], Any] | None = None,
        unit: str = "questions",
    ) -> Any:
        """Record one macro from ``get()``; return its value, or None when it is n/a or (with ``n``,
        the count it rests on) below the small-n threshold."""
        try:
            value = get()
            reason = "" if value is not None and not (isinstance(value, float) and math.isnan(value)) else "undefined"
        except _ERRORS as exc:
            value, reason = None, f"not in this run ({type(exc).__name__})"
        text = fmt(value, kind)
        if n is not None and not reason:
            try:
                size = n()
            except _ERRORS:
                size = None
            if not small_n.is_finding(size, self.min_n):
                count = small_n.counted(int(size), unit) if size is not None else "n unknown"
                self.small.add(name)
                self.out.append((name, f"\\dcsmall{{{text}}}{{{count}}}", f"{what} ({small_n.caveat(size, unit)})"))
                return None
        self.out.append((name, text, what + (f" (n/a: {reason})" if reason else "")))
        return None if reason else value

    def direction(self, name: str, value: float | None) -> str | None:
        """The direction word of macro ``name``'s ``value`` (None when it is n/a)."""
        return NOT_AT_THIS_N if self.is_small(name) else None if value is None else direction(value)
