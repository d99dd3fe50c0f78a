"""What a quoted number is: :class:`Number`, and how a number below the small-n rule prints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from declinecraft.paper.number_sources import Tables


@dataclass(frozen=True)
class Number:
    """One quoted number: macro (without backslash), meaning, getter, format, reported key."""

    macro: str
    what: str
    get: Callable[[Tables], Any]
    fmt: str = "pct"
    """pct (proportion shown as percent), pts (signed points), int, rho, p, kappa, text, num."""
    reported: str | None = None
    n: Callable[[Tables], Any] | None = None
    """How many questions (or ``unit``) the number rests on; None for counts and settings. Below
    the small-n rule's threshold (:mod:`declinecraft.core.small_n`) the number prints with its n
    and "not interpretable at this n" (:data:`SMALL_N_MACRO`), and the words treat it as n/a."""
    unit: str = "questions"
    """What ``n`` counts, in the plural."""


#: The LaTeX command (``paper/main.tex``) that prints a number below the small-n threshold:
#: ``\dcsmall{value}{n with its unit}``; p values and rho (printed in math mode) keep their text.
SMALL_N_MACRO = "dcsmall"
#: Formats printed in running text, which take the small-n caveat in place.
CAVEAT_FORMATS = frozenset({"pct", "pts", "kappa", "num"})
