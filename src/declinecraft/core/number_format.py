"""How the paper prints a number, and its one rule for when two numbers are "the same".

Every number of the paper (``numbers.tex``, the views' ``view_numbers.tex``, the run-health
sentences) reaches LaTeX through :func:`fmt`, by kind:

=======  ================================================  ==============
kind     printed as                                        example
=======  ================================================  ==============
pct      a proportion as percent, one decimal (no sign)    ``56.4``
pts      a difference of proportions as signed points      ``+3.2``
int      a whole number, thousands grouped by ``{,}``      ``3{,}404``
rho      a correlation, signed, two decimals               ``\\textminus 0.41``
kappa    an agreement coefficient, two decimals            ``0.62``
num      any other number, two decimals                    ``0.98``
p        a p value: ``<0.001``, three decimals below 0.01  ``0.004``
text     as it is                                          ``qwen3-8b``
=======  ================================================  ==============

A minus sign prints as ``\\textminus``; None and NaN print ``n/a``.

The tie rule: two numbers are the same when they print alike (:func:`same`: equal at the precision
their kind prints, so ``+0.0`` and ``\\textminus 0.0`` are the same). Every word the paper chooses
from a comparison ("raises it to", "higher than", "the same as") follows it (:func:`compare`), so
a word never contradicts the two numbers printed beside it.
"""

from __future__ import annotations

import math
from typing import Any

#: Kinds of :func:`fmt` that print a proportion scaled to percent (or points).
PERCENT_KINDS = frozenset({"pct", "pts"})
#: Decimals each numeric kind prints (after scaling to percent where it applies).
DECIMALS = {"pct": 1, "pts": 1, "int": 0, "rho": 2, "kappa": 2, "num": 2}


def is_missing(value: Any) -> bool:
    """Whether ``value`` is n/a: None or NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def thousands(n: int) -> str:
    """An integer as LaTeX with ``{,}`` between groups of three digits (``3{,}404``), as the paper
    prints counts (the braces keep math mode from spacing the comma as punctuation)."""
    return f"{n:,}".replace(",", "{,}")


def _minus(text: str) -> str:
    return text.replace("-", "\\textminus ")


def fmt(value: Any, kind: str) -> str:
    """Print ``value`` as a number of ``kind`` (see the module's table); None and NaN print ``n/a``.

    Raises:
        ValueError: an unknown kind.
    """
    if is_missing(value):
        return "n/a"
    if kind == "text":
        return str(value)
    v = float(value)
    if kind == "pct":
        return _minus(f"{100 * v:.1f}")
    if kind == "pts":
        return _minus(f"{100 * v:+.1f}")
    if kind == "int":
        return _minus(thousands(int(round(v))))
    if kind == "rho":
        return _minus(f"{v:+.2f}")
    if kind in ("kappa", "num"):
        return _minus(f"{v:.2f}")
    if kind == "p":
        return "<0.001" if v < 0.001 else (f"{v:.3f}" if v < 0.01 else f"{v:.2f}")
    raise ValueError(f"unknown number kind {kind!r} (known: {', '.join([*DECIMALS, 'p', 'text'])})")


def printed(value: Any, kind: str) -> float | None:
    """The number ``fmt(value, kind)`` shows, as a float (None when it prints ``n/a``).

    Raises:
        ValueError: a kind that does not print a number (``p``, ``text``) or is unknown.
    """
    if kind not in DECIMALS:
        raise ValueError(f"{kind!r} numbers are not compared (compare: {', '.join(DECIMALS)})")
    if is_missing(value):
        return None
    scaled = 100 * float(value) if kind in PERCENT_KINDS else float(value)
    return float(f"{scaled:.{DECIMALS[kind]}f}")


def same(a: Any, b: Any, kind: str) -> bool:
    """The paper's tie rule: whether ``a`` and ``b`` print alike as numbers of ``kind`` (False
    when either is n/a)."""
    pa, pb = printed(a, kind), printed(b, kind)
    return pa is not None and pb is not None and pa == pb


def compare(a: Any, b: Any, kind: str, words: tuple[str, str, str], missing: str = "n/a") -> str:
    """``words[0]`` when ``a`` is above ``b``, ``words[1]`` when below, ``words[2]`` when they print
    alike (:func:`same`); ``missing`` when either is n/a."""
    if is_missing(a) or is_missing(b):
        return missing
    if same(a, b, kind):
        return words[2]
    return words[0] if float(a) > float(b) else words[1]
