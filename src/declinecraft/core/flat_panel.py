"""A panel whose data are one value says so in words instead of drawing a degenerate axis.

A scatter whose points share one x value (one release month, one stated confidence) draws an
axis of a single tick: a reader sees a plot and no spread. The figure modules of the paper and of
the views call :func:`one_value` on what a panel would draw and, when it is one value, put
:func:`say` in the panel's place: a short sentence with that value and its count. A text written
by :func:`say` (or any note that the panel's values are constant) carries :data:`GID`, by which
the paper's figure check knows that the panel states its constant data in words.

Axes are duck-typed (matplotlib's), so this module needs no plotting library.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

#: The ``gid`` of a text that states a panel's constant data.
GID = "flat-panel"


def one_value(values: Iterable[Any]) -> float | None:
    """The one distinct finite value of ``values`` (None and NaN left out), or None when there are
    none or several."""
    distinct = {float(v) for v in values if v is not None and math.isfinite(float(v))}
    return distinct.pop() if len(distinct) == 1 else None


def say(ax: Any, text: str, *, fontsize: float = 7.0) -> None:
    """Replace what ``ax`` drew with ``text``, centred and wrapped, its frame and ticks removed."""
    for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.texts]:
        artist.remove()
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    ax.set(xlabel="", ylabel="", title="")
    ax.set_axis_off()
    note = ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=fontsize, wrap=True)
    note.set_gid(GID)
