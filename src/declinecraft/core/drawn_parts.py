"""What a figure draws that its caption may name: an interval, a frontier, a prompt, a count.

A figure function marks each such part on the figure it returns (:func:`mark`) only when it
actually draws it: a t interval needs three values, a frontier at least one configuration on it,
a prompt rows of its own. The paper stage writes the parts of every drawn figure into
``skipped.tex``, where ``paper/main.tex``'s ``\\dcdrawn{stem/part}{text}`` prints ``text`` only when
the figure drew ``part``; :mod:`declinecraft.paper.caption_check` holds each caption to the same
parts. So a caption never promises what its figure leaves out.

Figures are duck-typed (matplotlib's), so this module needs no plotting library.
"""

from __future__ import annotations

from typing import Any

#: The attribute of a figure that holds its parts.
ATTR = "_declinecraft_drawn"


def mark(fig: Any, *names: str) -> None:
    """Record that ``fig`` draws each of ``names`` (e.g. ``"interval"``, ``"frontier"``, ``"P3"``)."""
    setattr(fig, ATTR, frozenset(getattr(fig, ATTR, frozenset())) | set(names))


def parts(fig: Any) -> frozenset[str]:
    """The parts :func:`mark` recorded on ``fig`` (none when it recorded nothing)."""
    return frozenset(getattr(fig, ATTR, frozenset()))
