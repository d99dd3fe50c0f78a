"""Small hand-built analysis tables with known values, and readers of what a drawn figure holds."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from declinecraft.paper import drawing


def gray_lines(fig: Figure, ax_index: int = 0) -> int:
    return sum(1 for line in fig.axes[ax_index].lines if line.get_color() == drawing.GRAY)


def grid(t: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return t["main_grid"]


#: Configurations: (model, thinking, family, total B, active B, release month).
CONFIGS = [
    ("m1", "off", "A", 10.0, 2.0, 300.0),
    ("m1", "on", "A", 10.0, 2.0, 300.0),
    ("m2", "off", "A", 30.0, 30.0, 310.0),
    ("m3", "off", "B", None, None, 305.0),
]


CONDITIONS = ("no_rag", "single", "iterative")


def value(i: int, c: int, base: float) -> float:
    """A distinct proportion per configuration ``i`` and condition ``c``."""
    return round(base + 0.1 * i + 0.05 * c, 4)


def known_grid() -> pl.DataFrame:
    """A main grid: 4 configurations x 3 conditions with distinct, known rates."""
    rows = []
    for i, (model, thinking, family, total, active, month) in enumerate(CONFIGS):
        for c, condition in enumerate(CONDITIONS):
            car, attempt, acc = value(i, c, 0.2), value(i, c, 0.5), value(i, c, 0.1)
            deny = 0.1
            rows.append(
                dict(
                    model=model,
                    thinking=thinking,
                    condition=condition,
                    family=family,
                    display_name=model.upper(),
                    config_label=model.upper() + (" (thinking)" if thinking == "on" else ""),
                    params_total_b=total,
                    params_active_b=active,
                    open_weight=total is not None,
                    release_month=month,
                    roles="",
                    car=car,
                    car_low=car - 0.05,
                    car_high=car + 0.05,
                    attempt=attempt,
                    attempt_low=attempt - 0.05,
                    attempt_high=attempt + 0.05,
                    accuracy=acc,
                    accuracy_low=acc - 0.05,
                    accuracy_high=acc + 0.05,
                    accuracy_when_attempted=acc + 0.02,
                    share_abstain=car,
                    share_deny=deny,
                    share_answer=1 - car - deny,
                )
            )
    return pl.DataFrame(rows)


def cell(grid: pl.DataFrame, model: str, thinking: str, condition: str, col: str) -> float:
    row = grid.filter(
        (pl.col("model") == model) & (pl.col("thinking") == thinking) & (pl.col("condition") == condition)
    )
    return float(row[col][0])


def sweep(ks: dict[str, list[int]], column: str = "k") -> pl.DataFrame:
    """Ablation rows (thinking off): car = 0.1 * position + model offset, accuracy = car / 2."""
    rows = []
    for m, (model, values) in enumerate(ks.items()):
        for j, k in enumerate(values):
            car = round(0.1 + 0.1 * j + 0.02 * m, 4)
            rows.append(
                {
                    "model": model,
                    "thinking": "off",
                    column: k,
                    "car": car,
                    "accuracy": car / 2,
                    "attempt": 0.9 - 0.1 * j,
                    "display_name": model.upper(),
                }
            )
    return pl.DataFrame(rows)


def points(ax: Axes) -> np.ndarray:
    """Every scatter point of an axes, as (x, y) rows."""
    offsets = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    return np.vstack(offsets) if offsets else np.empty((0, 2))


def gray(ax: Axes) -> list[np.ndarray]:
    return [np.asarray(line.get_ydata(), float) for line in ax.lines if line.get_color() == drawing.GRAY]


def ticks(ax: Axes, axis: str = "x") -> list[str]:
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels())]


def holds(ax: Axes, xs: np.ndarray, ys: np.ndarray) -> bool:
    """The axis ranges contain every input value."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return x0 <= np.nanmin(xs) and np.nanmax(xs) <= x1 and y0 <= np.nanmin(ys) and np.nanmax(ys) <= y1


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same set of (x, y) points, in any order."""
    return a.shape == b.shape and np.allclose(np.array(sorted(map(tuple, a))), np.array(sorted(map(tuple, b))))
