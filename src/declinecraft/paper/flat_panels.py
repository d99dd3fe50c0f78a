"""Panels whose data are one value, found in a drawn figure and said in words in place of the plot.

A run whose models never abstain draws every abstention panel as a row of zeros on the axis; a run
whose responses are all of one kind draws one grey bar per model. Such a panel reads as a finding
or as missing data. :func:`constant` finds, in a drawn axes, what it plots:

- the markers of lines and scatters, on the axis whose ticks are numbers (an axis of model names or
  evidence levels is a category axis, and many points on one category are no constant);
- the bars of each bar container, as long as they are (widths of horizontal bars): all of equal
  length, or, stacked, every bar one segment of the same kind (the rest zero);
- the cells of a heat map (an image's array);

and when every value is the same, :func:`say_flat` puts a sentence with that value and its count in
the panel's place (:func:`declinecraft.core.flat_panel.say`). The paper stage calls it on every
figure it draws, before the figure check (:mod:`declinecraft.paper.figure_check`), which fails a
constant panel that does not say so. A panel that already states its constant data (a text with
:data:`~declinecraft.core.flat_panel.GID`) is left as it is; so is an axes without a frame.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from declinecraft.core import flat_panel
from declinecraft.core.small_n import counted


def _numeric_axis(ax: Axes, which: str) -> bool:
    """Whether ``ax``'s ``which`` axis ("x" or "y") is numeric: its tick labels are numbers, not
    names (a model, an evidence level)."""
    labels = [t.get_text() for t in (ax.get_xticklabels() if which == "x" else ax.get_yticklabels())]
    named = [t for t in labels if t.strip()]
    return not any(re.search(r"[A-Za-z]", t) for t in named)


def points(ax: Axes) -> list[tuple[float, float]]:
    """The data points ``ax`` draws as markers: lines with a marker (an error bar's caps, "_" and
    "|", mark an interval, not a value) and scatter collections, as plotted (categorical
    positions converted by matplotlib's units); missing ones left out."""
    out: list[tuple[float, float]] = []
    for line in ax.get_lines():
        if line.get_visible() and line.get_marker() not in (None, "", " ", "None", "_", "|"):
            xy = np.ma.filled(np.asarray(line.get_xydata(), dtype=np.float64), np.nan).reshape(-1, 2)
            out += [(float(x), float(y)) for x, y in xy]
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_visible():
            xy = np.ma.filled(np.asarray(coll.get_offsets(), dtype=np.float64), np.nan).reshape(-1, 2)
            out += [(float(x), float(y)) for x, y in xy]
    return [(x, y) for x, y in out if np.isfinite(x) and np.isfinite(y)]


def _label(ax: Axes, which: str) -> str:
    """The ``which`` axis label of ``ax``, or of an axes sharing that axis with it (a row of panels
    labels only its first)."""
    shared = ax.get_shared_y_axes() if which == "y" else ax.get_shared_x_axes()
    for other in [ax, *shared.get_siblings(ax)]:
        if label := (other.get_ylabel() if which == "y" else other.get_xlabel()):
            return label
    return ""


def _from_points(ax: Axes) -> tuple[str, str] | None:
    """Markers all at one value of the panel's quantity: y, or x where y names categories."""
    which = next((w for w in ("y", "x") if _numeric_axis(ax, w)), None)
    if which is None:
        return None
    values = [y if which == "y" else x for x, y in points(ax)]
    if len(values) < 2 or (one := flat_panel.one_value(values)) is None:
        return None
    return f"every {_label(ax, which) or 'value'} is {one:g}", counted(len(values), "points")


def _from_bars(ax: Axes) -> tuple[str, str] | None:
    """Bars all of one length, or stacked bars all one segment of the same kind."""
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    if not bars:
        return None
    across = bars[0].orientation == "horizontal"
    label = _label(ax, "x" if across else "y") or "bar"
    lengths = [[float(p.get_width() if across else p.get_height()) for p in c.patches] for c in bars]
    flat = [v for c in lengths for v in c if np.isfinite(v)]
    if not flat:
        return None
    if flat_panel.one_value(flat) == 0:
        return f"every {label} is 0", counted(len(flat), "bars")
    shown = [i for i, c in enumerate(lengths) if any(v != 0 for v in c)]
    if len(shown) != 1 or (one := flat_panel.one_value(lengths[shown[0]])) is None:
        return None
    if len(bars) == 1:  # one series: bars of one length; one bar alone is its value, not a constant
        return (f"every {label} is {one:g}", counted(len(flat), "bars")) if len(flat) >= 2 else None
    kind = str(bars[shown[0]].get_label() or "")
    kind = "" if kind.startswith("_") else kind
    return f"every bar is all {kind or 'one kind'} ({label}: {one:g})", counted(len(lengths[shown[0]]), "bars")


def _from_images(ax: Axes) -> tuple[str, str] | None:
    cells = [v for im in ax.get_images() for v in np.ma.filled(np.asarray(im.get_array(), dtype=float), np.nan).ravel()]
    finite = [v for v in cells if np.isfinite(v)]
    one = flat_panel.one_value(finite)
    return (f"every cell is {one:g}", counted(len(finite), "cells")) if one is not None and len(finite) >= 2 else None


def constant(ax: Axes) -> tuple[str, str] | None:
    """What a framed panel draws when it is one value, in words ("every abstention (%) is 0"), and
    how much it draws ("6 points"); None when its data vary, or it states them already."""
    if not ax.axison or any(t.get_gid() == flat_panel.GID for t in ax.texts):
        return None
    return _from_points(ax) or _from_bars(ax) or _from_images(ax)


def say_flat(fig: Figure) -> list[str]:
    """Replace every constant panel of ``fig`` with its sentence; when no panel is left drawn, the
    figure's legends go too (they would name what is not drawn). Returns the sentences."""
    said = []
    framed = [ax for ax in fig.axes if ax.axison]
    found_all = [(ax, constant(ax)) for ax in framed]  # all read before any is said: a row shares labels
    for ax, found in found_all:
        if found is None:
            continue
        what, n = found
        title = ax.get_title()
        sentence = f"{title}: {what}" if title else what[:1].upper() + what[1:]
        sentence += f" ({n}), so nothing is drawn"
        flat_panel.say(ax, sentence)
        said.append(sentence)
    if said and not any(ax.axison for ax in framed):
        for legend in list(fig.legends):
            legend.remove()
    return said


def flat_problems(ax: Any) -> list[str]:
    """The figure check's words for a constant panel that does not say so (:func:`constant`)."""
    found = constant(ax)
    if found is None:
        return []
    name = ax.get_title() or ax.get_ylabel() or "axes"
    return [f"every value of '{name}' is one value ({found[0]}, {found[1]}): say so in words (say_flat)"]
