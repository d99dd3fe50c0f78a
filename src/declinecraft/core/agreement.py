"""Chance-corrected agreement between raters: Cohen's and Fleiss' kappa (Table 5, Table 10).

Both keep their own arithmetic instead of calling ``sklearn.metrics.cohen_kappa_score`` or
``statsmodels.stats.inter_rater.fleiss_kappa``. The libraries compute the same statistics (the
tests check agreement to 1e-12), but in a different order of operations, so a fifth to a third
of results differ in the last bits; where the true kappa is 0 one of them returns a tiny negative
number, and where it is a short binary fraction they land on opposite sides of a six-decimal
rounding midpoint. Kappas are stored unrounded in stage outputs and at six decimals in the
analysis tables, so either difference would change a published file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray


def is_missing(value: object) -> bool:
    """True for a rating that was not given: None or a float NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _encode(values: NDArray[Any], labels: NDArray[Any], name: str) -> NDArray[np.intp]:
    sorter = np.argsort(labels, kind="stable")
    pos = np.searchsorted(labels, values, sorter=sorter).clip(0, labels.size - 1)
    idx: NDArray[np.intp] = sorter[pos]
    unknown = labels[idx] != values
    if np.any(unknown):
        raise ValueError(f"{name} has values not in labels: {sorted(set(values[unknown]))[:5]}")
    return idx


def cohen_kappa(
    a: Sequence[object],
    b: Sequence[object],
    weights: Literal["quadratic"] | None = None,
    labels: Sequence[object] | None = None,
) -> float:
    """Cohen's kappa of two raters, unweighted or quadratic-weighted (Table 5, Table 10).

    Quadratic weights use the category positions in ``labels`` (default: sorted observed
    values), so pass ``labels=[0, 0.5, 1]`` for accuracy scores even if a level is unused.
    Pairs where either rating is None/NaN are left out. If the chance agreement is 1 (both raters
    always give the same single category) kappa is 0/0: there is no variation to agree on beyond
    chance, so the result is NaN rather than a misleading 1. Equals sklearn's
    ``cohen_kappa_score`` to rounding; see the module docstring for why it is not a call to it.
    """
    if len(a) != len(b):
        raise ValueError(f"raters need equal length, got {len(a)} and {len(b)}")
    pairs = [(u, v) for u, v in zip(a, b, strict=True) if not (is_missing(u) or is_missing(v))]
    if not pairs:
        return float("nan")
    av, bv = np.asarray([u for u, _ in pairs]), np.asarray([v for _, v in pairs])
    lab = np.asarray(sorted(set(av.tolist()) | set(bv.tolist())) if labels is None else labels)
    k = lab.size
    ia, ib = _encode(av, lab, "rater a"), _encode(bv, lab, "rater b")
    observed = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k) / av.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.subtract.outer(np.arange(k), np.arange(k))
    if weights not in (None, "quadratic"):
        raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")
    w = (grid != 0).astype(np.float64) if weights is None else grid.astype(np.float64) ** 2
    chance = float((w * expected).sum())
    if chance <= 0.0:
        return float("nan")
    return float(1.0 - (w * observed).sum() / chance)


def fleiss_kappa(ratings_matrix: ArrayLike) -> float:
    """Fleiss' kappa from an items x categories matrix of rating counts (three judges, Table 5).

    Every item needs the same number (at least 2) of ratings. All ratings in one category give
    NaN (chance agreement 1, kappa undefined). Equals statsmodels' ``fleiss_kappa`` to rounding;
    see the module docstring for why it is not a call to it.
    """
    m = np.asarray(ratings_matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"fleiss_kappa needs a non-empty items x categories matrix, got {m.shape}")
    raters = m.sum(axis=1)
    bad = np.flatnonzero(raters != raters[0])
    if bad.size or raters[0] < 2 or np.any(m < 0):
        row = int(bad[0]) if bad.size else 0
        raise ValueError(f"every item needs the same count (>= 2) of ratings; item {row} differs")
    # kappa = (P_bar - P_e) / (1 - P_e) over a common denominator: with T ratings in all,
    # P_bar = (S - T) / (T (n - 1)) for S the sum of squared counts and P_e = C / T^2 for C the sum
    # of squared category totals. With integer counts every sum below is an exact integer in float64,
    # so a kappa of exactly 0 is 0 on every machine, whatever order numpy sums in.
    n = float(raters[0])
    total = float(m.sum())
    squares = float((m * m).sum())
    categories = float((m.sum(axis=0) ** 2).sum())
    if categories >= total * total:
        return float("nan")
    return ((squares - total) * total - (n - 1.0) * categories) / ((n - 1.0) * (total * total - categories))
