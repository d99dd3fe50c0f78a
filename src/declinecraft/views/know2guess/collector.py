"""How the Know2Guess section's numbers print, and the list that collects them.

Proportions print as percent with one decimal (the text adds ``\\%``), shifts as signed points,
κ, AUROC and ECE with two decimals, through the paper's one formatter
(:mod:`declinecraft.core.number_format`). A number the run cannot supply prints ``n/a`` and says
why. Direction words ("higher", "lower", "the same") follow its tie rule (the same when they print
alike), so the prose follows the data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import polars as pl

from declinecraft.core import small_n
from declinecraft.core.number_format import compare, fmt

#: One macro: (name, LaTeX value, what it is).
Macro = tuple[str, str, str]


def direction(difference: float | None) -> str:
    """'higher', 'lower' or 'the same' (it prints as zero points: the paper's tie rule,
    :func:`declinecraft.core.number_format.same`) for a difference; 'not comparable' when it is n/a."""
    return compare(difference, 0.0, "pts", ("higher", "lower", "the same"), "not comparable")


#: What a direction word says when the number behind it is below the small-n rule.
NOT_AT_THIS_N = "not comparable at this n"
#: What it says when the difference was tested and p is not below alpha, or was not tested
#: (:func:`declinecraft.core.small_n.comparative_reason`: no comparative word without a test).
NOT_SIGNIFICANT = "not different at this run's alpha"
NOT_TESTED = "not tested for a direction"

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

    def direction(self, name: str, value: float | None, *, p: float | None = None, alpha: float = 0.05) -> str | None:
        """The direction word of macro ``name``'s ``value`` (None when it is n/a): "higher" or
        "lower" only when the difference clears the small-n rule and its test (``p``) is below
        ``alpha``; an untested difference gets :data:`NOT_TESTED`."""
        if self.is_small(name):
            return NOT_AT_THIS_N
        if value is None:
            return None
        word = direction(value)
        if word in ("higher", "lower") and small_n.comparative_reason(self.min_n, self.min_n, p, alpha):
            return NOT_TESTED if p is None else NOT_SIGNIFICANT
        return word
