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
import textwrap
from collections.abc import Iterable
from typing import Any

#: The ``gid`` of a text that states a panel's constant data.
GID = "flat-panel"
#: A character's mean width as a share of the font size (sans-serif text), to wrap to a panel.
CHAR_WIDTH = 0.55
#: The fewest characters a wrapped line holds, however narrow the panel.
MIN_LINE = 16


def one_value(values: Iterable[Any]) -> float | None:
    """The one distinct finite value of ``values`` (None and NaN left out), or None when there are
    none or several."""
    distinct = {float(v) for v in values if v is not None and math.isfinite(float(v))}
    return distinct.pop() if len(distinct) == 1 else None


def say(ax: Any, text: str, *, fontsize: float = 7.0) -> None:
    """Replace what ``ax`` drew with ``text``, centred and wrapped to the panel's width, its frame
    and ticks removed."""
    for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.images, *ax.texts]:
        artist.remove()
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    ax.set(xlabel="", ylabel="", title="")
    ax.set_axis_off()
    # Wrapped to the panel's own width (matplotlib's wrap would use the figure's, past the panel).
    width_pt = ax.figure.get_figwidth() * ax.get_position().width * 72
    per_line = max(MIN_LINE, int(width_pt / (CHAR_WIDTH * fontsize)))
    lines = "\n".join(textwrap.fill(part, per_line) for part in text.split("\n"))
    note = ax.text(0.5, 0.5, lines, ha="center", va="center", transform=ax.transAxes, fontsize=fontsize)
    note.set_gid(GID)
