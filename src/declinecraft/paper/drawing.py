"""The one style of every figure and the drawing helpers the figure modules share.

Figures are drawn with matplotlib/seaborn under :func:`style` at the paper's widths
(:data:`COLUMN_IN`, :data:`FULL_IN`), from tidy analysis tables whose rates are proportions
(axes show percent, :func:`pct`). Nothing here computes a statistic except through
:mod:`declinecraft.core.stats`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.typing import RcKeyType  # noqa: E402

from declinecraft.core import catalogue, drawn_parts, paths, stats  # noqa: E402

COLUMN_IN = 3.4
"""Width of one column of the paper, inches."""
FULL_IN = 7.0
"""Width of the full text block, inches."""
BLUE, ORANGE, GRAY = "#1f5fa8", "#e07b1a", "#9a9a9a"
LABEL_COLORS = {"ABSTAIN": "#2b8a3e", "DENY": ORANGE, "ANSWER": "#c0392b"}
CONDITION_NAMES = {"no_rag": "No RAG", "single": "RAG", "iterative": "Iter."}

_RC: dict[RcKeyType, Any] = {
    "font.size": 7,
    "axes.titlesize": 7.5,
    "axes.labelsize": 7,
    "xtick.labelsize": 6.5,
    "ytick.labelsize": 6.5,
    "legend.fontsize": 6,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.0,
    "lines.markersize": 3.5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "grid.linewidth": 0.4,
    "grid.alpha": 0.5,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "pdf.fonttype": 42,
    "figure.dpi": 100,
    "font.family": "DejaVu Sans",
}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """The one style of every figure: seaborn ticks, small fonts for column width, no top/right spines."""
    with sns.axes_style("ticks"), plt.rc_context(_RC):
        yield


def styled(func: Callable[..., Figure]) -> Callable[..., Figure]:
    """Draw ``func``'s figure under :func:`style`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Figure:
        with style():
            return func(*args, **kwargs)

    return wrapper


def new_figure(
    ncols: int = 1, nrows: int = 1, *, width: float = COLUMN_IN, height: float = 2.2, **kw: Any
) -> tuple[Figure, Any]:
    """A figure of the paper's widths (``COLUMN_IN`` or ``FULL_IN``) with a grid of axes."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kw)
    return fig, axes


def _metadata(fmt: str, created: dt.datetime | None) -> dict[str, Any] | None:
    """The file metadata that makes ``fmt`` reproducible: a PDF's ``CreationDate`` is ``created``
    (omitted when None), never the clock; other formats keep matplotlib's (no date in a PNG)."""
    return {"CreationDate": created} if fmt == "pdf" else None


#: Text stamped across every figure :func:`save` writes ("" for none): the paper stage sets
#: "SIMULATED" for a run of the simulated cluster (``simulated: true``), whose numbers are no results.
STAMP = ""


def stamp(fig: Figure, text: str) -> None:
    """Write ``text`` in bold red above all that ``fig`` draws (a legend set above its frame
    included), a little apart (a word's box in the PDF is the font's height, taller than its
    letters); the tight bounding box grows to hold it. Not below: some figures print a key of their
    labels under the frame."""
    fig.draw_without_rendering()  # lay the figure out, so its tight box is what will be saved
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")  # keep that layout: saving must not make room again
    for legend in fig.legends:
        # A figure's legend is placed against the figure's box, which saving cuts to what is drawn,
        # the stamp included: pin it where it is, in the figure's own coordinates.
        anchor = legend.get_bbox_to_anchor().transformed(fig.transFigure.inverted())
        legend.set_bbox_to_anchor(anchor, transform=fig.transFigure)
    drawn = fig.get_tightbbox()
    width, height = fig.get_size_inches()
    top = max(1.0, drawn.y1 / height) + 0.12 / height
    left = min(0.0, drawn.x0 / width)
    fig.text(left, top, f"{text}: not a result", fontsize=9, color="red", fontweight="bold", va="bottom")


def save(
    fig: Figure,
    folder: Path,
    stem: str,
    formats: Sequence[str] = ("pdf", "png"),
    *,
    dpi: int = 200,
    created: dt.datetime | None = None,
) -> list[Path]:
    """Save a figure atomically in each format, cut to its tight bounding box whatever style it was
    drawn in (so a legend above the axes is never cut off, and :mod:`figure_check` sees what is
    saved), close it, and return the files. A PDF carries ``created`` as its date (the run's,
    :func:`~declinecraft.paper.build_date.build_date`; none when None), so the same figure saved
    twice is the same bytes."""
    out = []
    if STAMP:
        stamp(fig, STAMP)
    for fmt in formats:
        target = folder / catalogue.PAPER_FIGURE.file(f"{stem}.{fmt}")
        with paths.atomic_path(target) as tmp:
            fig.savefig(
                tmp, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.02, metadata=_metadata(fmt, created)
            )
        out.append(target)
    plt.close(fig)
    return out


#: Where a point's label may go, in points from the point, nearest first: (dx, dy, ha, va).
LABEL_SPOTS = tuple(
    (sx * r, sy * r, ha, va)
    for r in (2.5, 6.0, 10.0, 16.0, 24.0, 34.0, 46.0, 62.0, 80.0)
    for sx, sy, ha, va in (
        (1, 1, "left", "bottom"),
        (1, -1, "left", "top"),
        (-1, 1, "right", "bottom"),
        (-1, -1, "right", "top"),
        (0, 1.4, "center", "bottom"),
        (0, -1.4, "center", "top"),
        (1.4, 0, "left", "center"),
        (-1.4, 0, "right", "center"),
    )
)
#: From this distance (points) a label is joined to its point by a thin leader line.
LEADER_FROM = 14.0
#: The smallest text of a figure, in points at print size (:mod:`figure_check` holds every text to it).
MIN_FONT = 6.0
#: The tallest a figure is drawn, inches: under the 0.42 of the text's height (3.99 in) that
#: ``paper/main.tex`` prints a figure in, so LaTeX never scales its type below what was drawn.
MAX_HEIGHT_IN = 3.9
#: The least height of one labelled row (a 6.5 pt tick label and its gap), inches.
ROW_IN = 0.11


def rows_height(n: int, *, fixed: float = 0.8, per_row: float = 0.16) -> float:
    """The height of a figure of ``n`` labelled rows: ``per_row`` each and ``fixed`` for its axis
    and legend, at most :data:`MAX_HEIGHT_IN` (rows then close up to the room there is)."""
    return min(MAX_HEIGHT_IN, fixed + per_row * n)


def row_blocks(n: int, *, fixed: float = 0.8) -> list[range]:
    """``n`` rows cut into the fewest consecutive blocks of equal size (the last may be shorter)
    that each fit :data:`MAX_HEIGHT_IN` at :data:`ROW_IN` a row; drawn as panels side by side, a
    long list keeps its labels apart at a printable size."""
    room = max(1, int((MAX_HEIGHT_IN - fixed) / ROW_IN))
    size = -(-n // -(-n // room)) if n else 1
    return [range(start, min(n, start + size)) for start in range(0, max(n, 1), size)]


def renderer(fig: Figure) -> Any:
    """The figure's renderer, drawn once (its layout done); a figure made without pyplot gets an
    Agg canvas first."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _overlaps(a: Any, b: Any) -> bool:
    return min(a.x1, b.x1) > max(a.x0, b.x0) and min(a.y1, b.y1) > max(a.y0, b.y0)


def label_points(
    ax: Any, points: Sequence[tuple[float, float, str]], *, fontsize: float = MIN_FONT, key: bool = False
) -> list[tuple[str, str]]:
    """Label each point ``(x, y, text)`` at the nearest spot of :data:`LABEL_SPOTS` where the label
    stays inside the axes and covers no label placed before it, the axes' legend nor an inset axes
    with its tick labels (call it once the limits, the legend and any inset are final); a label set off by
    :data:`LEADER_FROM` points or more gets a thin leader line to its point. A label over another
    is unreadable, so none is printed: where no spot is free, with ``key`` the point gets a number
    instead, placed the same way, for :func:`key_below` to name; otherwise (or when even the number
    finds no room) it stays unlabelled. Returns ``(mark, text)`` for every point not labelled by
    its text, in order: ``mark`` its number, '' when unlabelled. Points at one position share one
    label, a line each (a reader cannot tell their markers apart either). Points that are not
    finite get no label. The figure's layout is fixed once the labels are placed (they sit at
    offsets in points, which a later layout pass would move over the data); what is added after
    them (:func:`key_below`) still widens the saved figure, cut to its tight bounding box."""
    fig = ax.get_figure()
    drawn = renderer(fig)  # the layout the labels are placed in
    fig.set_layout_engine("none")
    frame = ax.get_window_extent(drawn)
    legend = ax.get_legend()
    placed: list[Any] = [legend.get_window_extent(drawn)] if legend is not None else []
    # An inset with its tick labels and axis labels, not its frame alone.
    placed += [child.get_tightbbox(drawn) for child in ax.child_axes if child.get_visible()]

    def free(box: Any) -> bool:
        inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        return inside and not any(_overlaps(box, other) for other in placed)

    def place(x: float, y: float, text: str) -> bool:
        for dx, dy, ha, va in LABEL_SPOTS:
            far = max(abs(dx), abs(dy)) >= LEADER_FROM
            label = ax.annotate(
                text,
                (x, y),
                xytext=(dx, dy),
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=fontsize,
                arrowprops=dict(arrowstyle="-", color=GRAY, lw=0.4, shrinkA=0, shrinkB=2) if far else None,
            )
            label.set_in_layout(False)
            box = label.get_window_extent(drawn)
            if free(box):
                placed.append(box)
                return True
            label.remove()
        return False

    shared: dict[tuple[float, float], list[str]] = {}
    for x, y, text in points:
        if np.isfinite(x) and np.isfinite(y):
            shared.setdefault((float(x), float(y)), []).append(text)
    rest: list[tuple[str, str]] = []
    for (x, y), texts in shared.items():
        names = list(dict.fromkeys(texts))
        if place(x, y, "\n".join(names)):
            continue
        mark = str(len({m for m, _ in rest if m}) + 1) if key else ""
        if mark and not place(x, y, mark):
            mark = ""
        rest += [(mark, name) for name in names]
    return rest


def key_below(ax: Any, marks: Sequence[tuple[str, str]], *, per_line: int = 3) -> None:
    """Name the numbered points of :func:`label_points` (``key=True``) in a key under the axes'
    x label, ``per_line`` to a line ("1 Llama 3.3 70B   2 GPT-4.1 ..."); points left unlabelled
    (mark '') are named too, as "unlabelled: ...". Nothing when every point carries its name."""
    numbered = [f"{m} {name}" for m, name in marks if m]
    bare = [name for m, name in marks if not m]
    lines = ["     ".join(numbered[i : i + per_line]) for i in range(0, len(numbered), per_line)]
    # The unlabelled names wrap as the numbered ones do, so the key is never wider than its page.
    bare_lines = [", ".join(bare[i : i + per_line]) for i in range(0, len(bare), per_line)]
    lines += [("unlabelled: " if i == 0 else "") + line for i, line in enumerate(bare_lines)]
    if lines:
        ax.annotate(
            "\n".join(lines),
            (0.5, 0.0),
            xycoords=ax.xaxis.label,
            xytext=(0, -3),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=MIN_FONT,
        )


def pct(values: Any) -> np.ndarray:
    """Proportions (a series, list or array; null as NaN) as percentages."""
    if isinstance(values, pl.Series):
        values = values.cast(pl.Float64).fill_null(np.nan).to_numpy()
    return 100.0 * np.asarray(values, dtype=np.float64)


#: Every rate axis shows the whole range, so no figure invents a scale ("-0.05 to 0.05 %", "104 %").
RATE_LIMITS = (0.0, 100.0)
#: The view of a rate axis: the whole range with a margin, so a point at 0 % or 100 % sits inside
#: the frame, not on it (:mod:`figure_check` reports a point on the frame).
RATE_VIEW = (-4.0, 104.0)
#: The fewest points a t interval is drawn on: with two (df = 1) the t quantile is 12.7 and the
#: interval spans hundreds of percent, which says nothing.
MIN_T_POINTS = 3


def clip_rate(values: Any) -> np.ndarray:
    """Percentages clipped to [0, 100] (an interval bound of a rate never leaves the scale); NaN stays."""
    return np.clip(np.asarray(values, dtype=np.float64), *RATE_LIMITS)


def rate_axis(ax: Any, axis: str = "y") -> None:
    """Fix a rate axis (``"x"``, ``"y"`` or ``"xy"``) to 0-100 % with a margin (:data:`RATE_VIEW`),
    whatever the data."""
    if "x" in axis:
        ax.set_xlim(*RATE_VIEW)
    if "y" in axis:
        ax.set_ylim(*RATE_VIEW)


def mean_interval(matrix: np.ndarray, *, rate: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column means of ``matrix`` (models x positions) with t intervals over models: NaN bounds for
    a column with fewer than :data:`MIN_T_POINTS` values, and bounds clipped to [0, 100] for rates."""
    rows = [stats.t_interval(matrix[:, j]) for j in range(matrix.shape[1])]
    mean = np.array([r[0] for r in rows], dtype=np.float64)
    low = np.array([r[1] for r in rows], dtype=np.float64)
    high = np.array([r[2] for r in rows], dtype=np.float64)
    few = (~np.isnan(matrix)).sum(axis=0) < MIN_T_POINTS
    low[few], high[few] = np.nan, np.nan
    if rate:
        low, high = clip_rate(low), clip_rate(high)
    return mean, low, high


def mean_with_interval(
    ax: Any,
    x: Sequence[float] | np.ndarray,
    matrix: np.ndarray,
    *,
    color: str = BLUE,
    label: str = "mean",
    rate: bool = True,
) -> None:
    """Blue line of the column means of ``matrix`` (models x positions) with t intervals over models
    (:func:`mean_interval`: none on fewer than three models, clipped to the rate scale)."""
    mean, low, high = mean_interval(matrix, rate=rate)
    err = np.vstack([mean - low, high - mean])
    if np.any(np.nan_to_num(err) > 0):  # an interval a reader can see: the caption may name it
        drawn_parts.mark(ax.figure, "interval")
    ax.errorbar(
        x, mean, yerr=np.where(np.isnan(err), 0, err), color=color, marker="o", capsize=2, lw=1.4, zorder=5, label=label
    )


def lines_panel(
    ax: Any,
    frame: pl.DataFrame,
    *,
    x: str,
    y: str,
    order: Sequence[Any],
    names: Mapping[Any, str] | None = None,
    ylabel: str = "",
    unit: str = "config",
    rate: bool = True,
) -> np.ndarray:
    """Gray line per ``unit`` across the ``order`` values of ``x``, blue mean with t interval; a
    ``rate`` (a proportion shown as percent) gets the fixed 0-100 % axis."""
    wide = frame.pivot(on=x, index=unit, values=y, aggregate_function="first")
    cols = [str(v) for v in order]
    for col in cols:
        if col not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(col))
    matrix = (
        pct(wide.select([pl.col(c).cast(pl.Float64) for c in cols]).to_numpy())
        if wide.height
        else np.empty((0, len(cols)))
    )
    xs = np.arange(len(cols))
    for row in matrix:
        ax.plot(xs, row, color=GRAY, lw=0.6, alpha=0.7, marker=".", ms=2)
    if matrix.shape[0]:
        mean_with_interval(ax, xs, matrix, rate=rate)
    if rate:
        rate_axis(ax)
    ax.set_xticks(xs, [(names or {}).get(v, str(v)) for v in order])
    ax.set_ylabel(ylabel)
    ax.grid(axis="y")
    return matrix


def note_missing(ax: Any, text: str) -> None:
    """Write a short note in an empty panel (the data the run lacks), instead of drawing nothing."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=6, color=GRAY, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
