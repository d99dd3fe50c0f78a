"""Checks of a drawn figure's layout, as a reader of the PDF would notice them.

:func:`problems` draws a figure's canvas and reports, in words that name the text involved:

- text outside the saved figure (a label cut off, as one left out of the layout is);
- two texts that overlap (model labels printed over each other, a legend over tick labels);
- a rate axis (its label ends in "(%)") whose limits leave [0, 100] (a rate of 104 %, or an
  axis from -0.05 to 0.05 %); axes of changes and differences are not rates;
- a data point drawn on the axes' frame (at a limit of a framed axis), where the frame hides it
  and a reader cannot tell it from a clipped one;
- a text printed smaller than :data:`MIN_FONT_PT` once the saved figure is scaled to the box
  ``paper/main.tex`` prints it in (:func:`places`: one column or the full width, at most 0.42 of
  the text's height), so a figure drawn too tall or too wide for its place fails;
- a panel whose points all sit at one x value (a single release month, a single stated
  confidence) that does not say so in words (:mod:`declinecraft.core.flat_panel`); on a rate
  axis one value is still read against 0 to 100 % (or 0 to 1), so rate axes are left alone;
- a panel whose every value is the same (points, bars, a heat map's cells: all zero, or every bar
  one kind alone) that does not say so in words (:mod:`declinecraft.paper.flat_panels`);
- a point's label (:func:`drawing.label_points`) past its axes' frame, over another point label
  at all, or over an inset axes drawn in its axes;
- given the figure's caption, an axis quantity the caption never names, or a part it names
  (an interval, a frontier, a prompt, a count) that the figure does not draw
  (:mod:`declinecraft.paper.caption_check`, :mod:`declinecraft.core.drawn_parts`).

The paper stage records the problems of every figure it draws in ``figure_checks.csv`` (each
checked in its place in ``paper/main.tex``); the tests draw every figure from synthetic results,
at the paper's size too, and require none.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

from declinecraft.core import drawn_parts, flat_panel
from declinecraft.paper import caption_check, drawing, flat_panels

#: Display pixels a text may reach past the figure's edge (antialiasing, rounding).
EDGE_PX = 2.0
#: Share of the smaller of two texts' boxes that must be covered before they count as overlapping
#: (touching boxes of adjacent tick labels are not a collision).
OVERLAP_SHARE = 0.25
#: Words in a "(%)" axis label that mark a change rather than a rate.
NOT_A_RATE = ("change", "difference", "shift", "minus", "Δ", "\\Delta", "pts")
#: How far past [0, 100] a rate axis may reach (a margin around the bars or points).
RATE_MARGIN = 5.0
#: The smallest text a printed figure may carry, in points (figures are drawn at print size).
MIN_FONT_PT = drawing.MIN_FONT


def _texts(fig: Figure) -> list[Text]:
    """Every visible, non-empty text the figure draws: titles, axis labels, legends, annotations,
    and the tick labels of the ticks drawn, an inset's too (matplotlib keeps labels of ticks
    outside the limits)."""
    ticks: set[int] = set()
    drawn: list[Text] = []
    # Inset axes too: their tick labels out of view are kept, and drawn nowhere.
    for ax in [*fig.axes, *(child for parent in fig.axes for child in parent.child_axes)]:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                ticks.update((id(tick.label1), id(tick.label2)))
            if not ax.axison:
                continue
            # The ticks within the view, as drawn (a private method, absent from matplotlib's stubs).
            for tick in axis._update_ticks():  # type: ignore[union-attr]
                drawn += [label for label in (tick.label1, tick.label2) if label.get_visible()]
    others = [t for t in fig.findobj(Text) if isinstance(t, Text) and id(t) not in ticks and t.get_visible()]
    return [t for t in [*others, *drawn] if t.get_text().strip()]


def _outside(box: Bbox, frame: Bbox) -> bool:
    """Whether ``box`` reaches past ``frame`` by more than :data:`EDGE_PX` on any side."""
    return (
        box.x0 < frame.x0 - EDGE_PX
        or box.x1 > frame.x1 + EDGE_PX
        or box.y0 < frame.y0 - EDGE_PX
        or box.y1 > frame.y1 + EDGE_PX
    )


def _overlap(a: Bbox, b: Bbox) -> float:
    """The share of the smaller box that the two boxes' intersection covers."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min(a.width * a.height, b.width * b.height)
    return (width * height) / smaller if smaller > 0 else 0.0


def _is_rate_label(label: str) -> bool:
    return label.rstrip().endswith("(%)") and not any(word in label for word in NOT_A_RATE)


def _rate_problems(ax: Axes) -> list[str]:
    out = []
    for axis, label, (low, high) in (
        ("y", ax.get_ylabel(), ax.get_ylim()),
        ("x", ax.get_xlabel(), ax.get_xlim()),
    ):
        low, high = sorted((low, high))
        if _is_rate_label(label) and (low < -RATE_MARGIN or high > 100 + RATE_MARGIN):
            out.append(f"rate axis {axis} '{label}' runs from {low:g} to {high:g}, outside [0, 100]")
    return out


#: Display pixels from the frame within which a data point counts as sitting on it.
FRAME_PX = 1.0


def _framed_points(ax: Axes) -> list[str]:
    """Data points on a drawn edge of the axes' frame (see the module docstring)."""
    if not ax.axison:
        return []
    box = ax.get_window_extent()
    edges = {
        "left": ("left", lambda px, py: abs(px - box.x0)),
        "right": ("right", lambda px, py: abs(px - box.x1)),
        "bottom": ("bottom", lambda px, py: abs(py - box.y0)),
        "top": ("top", lambda px, py: abs(py - box.y1)),
    }
    shown = [e for e, (spine, _) in edges.items() if ax.spines[spine].get_visible()]
    hit: dict[str, int] = {}
    for x, y in flat_panels.points(ax):
        px, py = ax.transData.transform((x, y))
        inside = box.x0 - FRAME_PX <= px <= box.x1 + FRAME_PX and box.y0 - FRAME_PX <= py <= box.y1 + FRAME_PX
        for edge in shown:
            if inside and edges[edge][1](px, py) <= FRAME_PX:
                hit[edge] = hit.get(edge, 0) + 1
    name = ax.get_title() or ax.get_ylabel() or "axes"
    return [f"{k} point(s) on the {edge} frame of '{name}' (give the axis a margin)" for edge, k in hit.items()]


def _point_labels(ax: Axes) -> list[Annotation]:
    """The labels :func:`drawing.label_points` put on ``ax``'s points: annotations of a data point
    with their text at an offset in points."""
    return [
        t
        for t in ax.texts
        if isinstance(t, Annotation)
        and t.get_visible()
        and t.get_text().strip()
        and t.xycoords == "data"
        and getattr(t, "_textcoords", None) == "offset points"
    ]


def _label_problems(ax: Axes, renderer: Any) -> list[str]:
    """Point labels past ``ax``'s frame, over each other (any overlap of their boxes) or over an
    inset axes drawn in ``ax``."""
    frame = ax.get_window_extent(renderer)
    labels = [(t, t.get_window_extent(renderer)) for t in _point_labels(ax)]
    insets = [child.get_window_extent(renderer) for child in ax.child_axes if child.get_visible()]
    out = []
    for text, box in labels:
        if _outside(box, frame):
            out.append(f"point label past the axes: '{text.get_text()}'")
        if any(_overlap(box, inset) > 0 for inset in insets):
            out.append(f"point label over an inset axes: '{text.get_text()}'")
    for (a, box_a), (b, box_b) in combinations(labels, 2):
        if _overlap(box_a, box_b) > 0:
            out.append(f"point labels overlap: '{a.get_text()}' and '{b.get_text()}'")
    return out


#: The largest box ``paper/main.tex`` prints a figure in (``\\dcgraphic``: the line's width, at
#: most 0.42 of the text's height, 0.42 x 9.5 in), inches: one column and the full text width.
COLUMN_BOX_IN = (3.39, 3.99)
FULL_BOX_IN = (7.0, 3.99)


def places(tex: str) -> dict[str, tuple[float, float]]:
    """The box each figure of ``tex`` (``paper/main.tex``) is printed in, keyed by its file stem:
    :data:`FULL_BOX_IN` for ``\\dcfigurewide``, :data:`COLUMN_BOX_IN` for ``\\dcfigure``."""
    found = re.finditer(r"\\dcfigure(wide)?(?:\[[^\]]*\])?\{([^}]+)\}", tex)
    return {m.group(2): FULL_BOX_IN if m.group(1) else COLUMN_BOX_IN for m in found}


def _single_x(ax: Axes) -> list[str]:
    """A framed panel whose data points all sit at one x value (one release month, one stated
    confidence) and that does not say so in words (a text carrying :data:`flat_panel.GID`). A rate
    axis (labelled in %, or drawn from 0 to 100, or a proportion's from 0 to 1) is left alone: one
    value is still read against its whole range."""
    low, high = sorted(ax.get_xlim())
    # The whole range of a rate (0 to 100 %) or a proportion (0 to 1) drawn: one value is read against it.
    rate = _is_rate_label(ax.get_xlabel()) or (low <= 0 and high >= 100) or (low <= 0 and 1 <= high <= 1.1)
    if not ax.axison or rate or any(t.get_gid() == flat_panel.GID for t in ax.texts):
        return []
    xs = {round(x, 9) for x, _ in flat_panels.points(ax)}
    if len(xs) != 1:
        return []
    name = ax.get_title() or ax.get_xlabel() or "axes"
    return [
        f"every point of '{name}' sits at one x value ({xs.pop():g}): say so in words instead of a plot "
        "(flat_panel.say)"
    ]


def _printed_small(fig: Figure, texts: list[Text], renderer: Any, box: tuple[float, float]) -> list[str]:
    saved = fig.get_tightbbox(renderer)
    scale = min(1.0, box[0] / saved.width, box[1] / saved.height)
    small = [
        (t, size) for t in texts if (size := t.get_fontproperties().get_size_in_points()) * scale < MIN_FONT_PT - 1e-9
    ]
    if scale == 1.0:
        return [f"text under {MIN_FONT_PT:g} pt: '{t.get_text()}' ({size:g} pt)" for t, size in small]
    return [
        f"text printed at {size * scale:.1f} pt, under {MIN_FONT_PT:g} pt, once the {saved.width:.2f} x "
        f"{saved.height:.2f} in figure is scaled to {box[0]:g} x {box[1]:g} in: '{t.get_text()}'"
        for t, size in small
    ]


def printed_small(fig: Figure, box: tuple[float, float]) -> list[str]:
    """Texts printed under :data:`MIN_FONT_PT` once ``fig`` (cut to its tight bounding box, as it
    is saved) is scaled down to fit ``box`` (width, height in inches; :data:`COLUMN_BOX_IN`,
    :data:`FULL_BOX_IN`): a figure drawn wider or taller than its place prints its type smaller
    than it was drawn, and a text drawn under the size is under it at any scale."""
    return _printed_small(fig, _texts(fig), drawing.renderer(fig), box)


def problems(fig: Figure, caption: str | None = None, *, box: tuple[float, float] = FULL_BOX_IN) -> list[str]:
    """What a reader would see wrong in ``fig``'s layout (see the module docstring) once printed in
    ``box`` (:func:`places`; the full text width unless said); [] when none. With ``caption``,
    also the axis quantities it never names (:func:`caption_check.unnamed`)."""
    renderer = drawing.renderer(fig)
    # The saved page: the figure cut to its tight bounding box (savefig.bbox "tight", as the paper
    # saves), so a label beyond it is cut off; a label inside it but outside the canvas is kept.
    page = fig.get_tightbbox(renderer).padded(0.02).transformed(fig.dpi_scale_trans)
    texts = _texts(fig)
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    boxes = [(t, b) for t, b in boxes if b.width > 0 and b.height > 0]
    out = []
    for text, extent in boxes:
        if _outside(extent, page):
            out.append(f"text cut off at the figure's edge: '{text.get_text()}'")
    for (a, box_a), (b, box_b) in combinations(boxes, 2):
        if _overlap(box_a, box_b) > OVERLAP_SHARE:
            out.append(f"texts overlap: '{a.get_text()}' and '{b.get_text()}'")
    out += _printed_small(fig, texts, renderer, box)
    for ax in fig.axes:
        out += _label_problems(ax, renderer)
        out += _rate_problems(ax)
        out += _framed_points(ax)
        out += _single_x(ax)
        out += flat_panels.flat_problems(ax)
    if caption is not None:
        drawn = drawn_parts.parts(fig)
        caption = caption_check.resolve(caption, drawn)
        out += caption_check.unnamed(caption, caption_check.axis_quantities(fig))
        out += caption_check.promised(caption, drawn)
    return out


class FigureCheckError(RuntimeError):
    """A drawn figure has a problem a reader would see (:func:`problems`)."""


def require_none(checks: list[dict[str, str]]) -> None:
    """Fail when a figure's check found something: ``checks`` are ``figure_checks.csv``'s rows
    (``name``, ``problems``). The paper stage calls it once every output is written, so the
    figures and the CSV stay for a reader to look at.

    Raises:
        FigureCheckError: naming each figure with problems and its first problem.
    """
    failed = [c for c in checks if c.get("problems")]
    if failed:
        listed = "; ".join(f"{c['name']}: {c['problems'].split('; ')[0]}" for c in failed)
        raise FigureCheckError(f"{len(failed)} figure(s) fail the figure check (figure_checks.csv): {listed}")
