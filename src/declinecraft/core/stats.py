"""Statistical tests and intervals of the paper (Appendix H, A.1, A.5–A.7, Appendix I).

Every function takes plain sequences or NumPy arrays and returns floats, NumPy arrays or small
tuples, so the analysis notebook can call it on whatever frame column it holds. Undefined
quantities (an empty sample, a constant input) come back as NaN rather than raising, because a
grid of configurations routinely contains cells that are empty by design; malformed input
(negative counts, mismatched lengths, unknown labels) raises ``ValueError``.

Where scipy, statsmodels or scikit-learn give the same floats, we call them. Where they agree
only to rounding we keep our arithmetic, since the values are stored unrounded or at six
decimals and a last-bit change can flip a stored digit; each such function names the library
it matches (the tests check it) and why it is not a call to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, TypedDict

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray
from scipy import stats as st

from declinecraft.core.agreement import is_missing

LABELS: tuple[str, ...] = ("ABSTAIN", "DENY", "ANSWER")


class Bootstrap(TypedDict):
    """The keyword arguments of every bootstrapped table."""

    n_resamples: int
    confidence: float
    seed: int


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")


def _z(confidence: float) -> float:
    _check_confidence(confidence)
    return float(st.norm.ppf(0.5 + confidence / 2.0))


def wilson_arrays(
    k: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score intervals for arrays of counts; ``n == 0`` gives NaN bounds.

    The vectorised form of :func:`wilson`, used by ``metrics.summarize`` for all groups at once.
    statsmodels' ``proportion_confint(method="wilson")`` agrees to 4e-15, but its other order of
    operations changes the last bits of about 5% of the (unrounded, stored) bounds.
    """
    k_arr = np.asarray(k, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("Wilson interval needs 0 <= k <= n for every count")
    z2 = _z(confidence) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k_arr / n_arr
        denom = 1.0 + z2 / n_arr
        centre = (p + z2 / (2.0 * n_arr)) / denom
        half = np.sqrt(z2 * p * (1.0 - p) / n_arr + z2 * z2 / (4.0 * n_arr**2)) / denom
    low = np.where(n_arr > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
    high = np.where(n_arr > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return low, high


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` of k/n (CAR and Attempt); ``n == 0`` gives NaNs."""
    low, high = wilson_arrays(k, n, confidence)
    return float(low), float(high)


def _resample_counts(n_items: int, n_resamples: int, seed: int) -> NDArray[np.float64]:
    """How often each item appears in each bootstrap resample (``n_resamples x n_items``).

    Drawn from ONE integer index matrix, so every configuration sees the same resampled questions
    (the runs answer the same questions, so their intervals stay comparable).
    """
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_items, size=(n_resamples, n_items))
    offsets = (np.arange(n_resamples) * n_items)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=n_resamples * n_items)
    return counts.reshape(n_resamples, n_items).astype(np.float64)


def _percentiles(samples: NDArray[np.float64], confidence: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    _check_confidence(confidence)
    alpha = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        all_nan = np.all(np.isnan(samples), axis=-1)
        filled = np.where(all_nan[..., None], 0.0, samples)
        low, high = np.nanquantile(filled, [alpha, 1.0 - alpha], axis=-1)
    return np.where(all_nan, np.nan, low), np.where(all_nan, np.nan, high)


def bootstrap_means(
    matrix: ArrayLike,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    *,
    items: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile bootstrap intervals of row means, resampling columns (questions).

    Rows are configurations, columns questions; NaN marks a missing question and is left out of
    that row's mean. Resampling is done as a weighted sum (resample counts x scores), so
    120 configurations x 1,000 questions x 1,000 resamples is two small matrix products. ``items``
    (same shape) makes each entry the SUM of that many items of one question, the mean one over
    items: a cluster bootstrap resampling questions with all their items (e.g. several models').

    Returns:
        ``(low, high)`` arrays with one entry per row; a row without data gives NaN.
    """
    x = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    if x.ndim != 2:
        raise ValueError(f"bootstrap_means needs a 2-D matrix, got shape {x.shape}")
    n_rows, n_cols = x.shape
    if n_cols == 0:
        nan = np.full(n_rows, np.nan)
        return nan, nan.copy()
    present = ~np.isnan(x)
    per_entry = np.where(present, 1.0 if items is None else np.asarray(items, dtype=np.float64).reshape(x.shape), 0.0)
    weights = _resample_counts(n_cols, n_resamples, seed)
    sums = np.where(present, x, 0.0) @ weights.T
    counts = per_entry @ weights.T
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return _percentiles(means, confidence)


def bootstrap_mean_ci(
    values: ArrayLike, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-question values (Answer Accuracy).

    NaN values are missing questions; an empty or all-NaN input gives ``(nan, nan)``.
    """
    row = np.asarray(values, dtype=np.float64).reshape(1, -1)
    low, high = bootstrap_means(row, n_resamples, confidence, seed)
    return float(low[0]), float(high[0])


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: ``scipy.stats.binomtest`` of b successes in b + c trials at 1/2.

    No discordant pairs (``b + c == 0``, which scipy rejects) gives 1.0: no evidence of a shift.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = int(b) + int(c)
    if n == 0:
        return 1.0
    # The smaller count, so that swapping b and c cannot change the last bit.
    return float(st.binomtest(int(min(b, c)), n, 0.5).pvalue)


def benjamini_hochberg(pvalues: ArrayLike) -> NDArray[np.float64]:
    """Benjamini–Hochberg q values in the input order (one family of comparisons, App. H).

    q values are monotone in p and capped at 1; NaN p values stay NaN and do not count in m.
    Agrees with ``scipy.stats.false_discovery_control`` and statsmodels' ``fdr_bh`` to 4e-16, but
    they scale by ``m / i`` where this computes ``p * m / i``; for McNemar p of small counts the
    exact q often ends in 5 at the seventh decimal, and the orders round it to opposite sides.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return q
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("p values must lie in [0, 1]")
    order = np.argsort(p[ok], kind="stable")
    ranked = p[ok][order] * m / np.arange(1, m + 1)
    # Step-up: each q is the smallest adjusted value at its rank or any larger rank.
    adjusted = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    q[np.flatnonzero(ok)[order]] = adjusted
    return q


def _paired_finite(x: ArrayLike, y: ArrayLike, *more: ArrayLike) -> list[NDArray[np.float64]]:
    arrays = [np.asarray(a, dtype=np.float64).ravel() for a in (x, y, *more)]
    if len({a.size for a in arrays}) != 1:
        raise ValueError(f"inputs must have equal length, got {[a.size for a in arrays]}")
    keep = np.logical_and.reduce([~np.isnan(a) for a in arrays])
    return [a[keep] for a in arrays]


def _pearson_t(r: float, df: int) -> float:
    if np.isnan(r):
        return float("nan")
    if abs(r) >= 1.0:
        return 0.0
    t = r * np.sqrt(df / (1.0 - r * r))
    return float(2.0 * st.t.sf(abs(t), df))


def _pearson(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    xc, yc = x - x.mean(), y - y.mean()
    denom = np.sqrt((xc @ xc) * (yc @ yc))
    # Relative tolerance: residuals of an exact fit are rounding noise, not variation.
    scale = max(1.0, float(np.abs(x).max(initial=0.0)), float(np.abs(y).max(initial=0.0)))
    if denom <= 1e-12 * scale * scale:
        return float("nan")
    return float(np.clip((xc @ yc) / denom, -1.0, 1.0))


def spearman(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Spearman's rho with the t-approximation p value (App. H associations across models).

    p = 2 P(T > |t|), t = rho sqrt((n - 2) / (1 - rho^2)), T ~ t(n - 2); ties get average
    ranks. Pairs with NaN are dropped; fewer than 3 pairs or a constant input give (nan, nan).
    Agrees with ``scipy.stats.spearmanr`` to 1e-15, but a perfectly monotone relation gives
    exactly (±1, 0) here, where scipy returns e.g. 0.9999999999999998 and a tiny positive p.
    """
    xs, ys = _paired_finite(x, y)
    if xs.size < 3:
        return float("nan"), float("nan")
    rho = _pearson(st.rankdata(xs), st.rankdata(ys))
    return rho, _pearson_t(rho, xs.size - 2)


def partial_rank_association(x: ArrayLike, y: ArrayLike, covariate: ArrayLike) -> tuple[float, float]:
    """Rank association of x and y with a covariate held fixed (App. A.6, release month).

    Regresses the ranks of x and of y on the covariate's ranks (with intercept), then returns the
    Pearson correlation of the two residual vectors and its p from t with n - 3 df. NaN rows
    are dropped; fewer than 4 rows or constant residuals give (nan, nan).
    """
    xs, ys, cs = _paired_finite(x, y, covariate)
    if xs.size < 4:
        return float("nan"), float("nan")
    rc = np.asarray(st.rankdata(cs), dtype=np.float64)
    rc_c = rc - rc.mean()
    ss = rc_c @ rc_c

    def residual(v: NDArray[np.float64]) -> NDArray[np.float64]:
        r = np.asarray(st.rankdata(v), dtype=np.float64)
        r_c = r - r.mean()
        slope = float((r_c @ rc_c) / ss) if ss > 0 else 0.0
        resid: NDArray[np.float64] = r_c - slope * rc_c
        return resid

    r = _pearson(residual(xs), residual(ys))
    return r, _pearson_t(r, xs.size - 3)


def wilcoxon_signed_rank(differences: ArrayLike) -> tuple[float, float]:
    """Wilcoxon signed-rank test on per-model differences (mean changes across models, App. H).

    Uses scipy's defaults (zero differences dropped, exact p for small samples without ties).
    NaN differences are dropped; no non-zero difference gives (nan, nan) because the test has
    nothing to rank.
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    d = d[~np.isnan(d)]
    if not np.any(d != 0):
        return float("nan"), float("nan")
    res = st.wilcoxon(d)
    return float(res.statistic), float(res.pvalue)


def t_interval(values: ArrayLike, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean with its Student-t interval, for means over models (e.g. Figure 2's blue line).

    Returns ``(mean, low, high)``; NaN values are dropped; one value gives (mean, nan, nan) and
    none gives (nan, nan, nan). ``scipy.stats.t.interval`` is not used: it gives NaN bounds for
    identical values (scale 0), where this gives the mean, and rounds in another order.
    """
    _check_confidence(confidence)
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(v.mean())
    if v.size == 1:
        return mean, float("nan"), float("nan")
    half = st.t.ppf(0.5 + confidence / 2.0, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return mean, float(mean - half), float(mean + half)


class SelfPreference(NamedTuple):
    """A judge's self-preference (App. A.1) in score units, its bootstrap interval over
    questions, and how many own-family and other answers entered it."""

    estimate: float
    low: float
    high: float
    n_own: int
    n_other: int


def self_preference(
    scores: pl.DataFrame,
    judge: str,
    family: str,
    *,
    answer_keys: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> SelfPreference:
    """Self-preference of an accuracy judge for answers from its own model family (App. A.1).

    For each answer, d = this judge's score minus the mean score of the other judges. The
    self-preference is mean(d) over answers from models of ``family`` minus mean(d) over answers
    from all other models, which removes the judge's overall leniency; the interval is a
    percentile bootstrap over questions.

    Args:
        scores: long frame, one row per (answer, judge), with columns ``question_id``,
            ``family`` (family of the model that wrote the answer), ``judge`` and ``score``.
        judge: the judge to test, as named in the ``judge`` column.
        family: the judge's own model family, as named in the ``family`` column.
        answer_keys: columns identifying one answer; default every column except ``judge``
            and ``score``.
    """
    need = {"question_id", "family", "judge", "score"}
    if missing := need - set(scores.columns):
        raise ValueError(f"self_preference: scores frame lacks columns {sorted(missing)}")
    keys = list(answer_keys or [c for c in scores.columns if c not in ("judge", "score")])
    keys += [c for c in ("question_id", "family") if c not in keys]
    if judge not in scores.get_column("judge").unique().to_list():
        raise ValueError(f"self_preference: judge {judge!r} has no scores")
    score = pl.col("score").cast(pl.Float64).fill_nan(None)
    mine = scores.filter(pl.col("judge") == judge).group_by(keys).agg(score.mean().alias("s"))
    rest = scores.filter(pl.col("judge") != judge).group_by(keys).agg(score.mean().alias("o"))
    diffs = (
        mine.join(rest, on=keys, how="inner", nulls_equal=True)
        .with_columns(d=pl.col("s") - pl.col("o"), own=pl.col("family") == family)
        .drop_nulls("d")
        .sort(keys)
        .group_by("question_id", maintain_order=True)
        .agg(
            own_sum=pl.col("d").filter(pl.col("own")).sum(),
            own_n=pl.col("own").sum(),
            oth_sum=pl.col("d").filter(~pl.col("own")).sum(),
            oth_n=(~pl.col("own")).sum(),
        )
        # Fixed question order: the bootstrap indexes rows, so the order must be reproducible.
        .sort("question_id")
    )
    if diffs.height == 0:
        return SelfPreference(float("nan"), float("nan"), float("nan"), 0, 0)
    # Rows: own-family sum, count, other-family sum, count; columns: questions.
    table = np.vstack([diffs.get_column(c).cast(pl.Float64).to_numpy() for c in diffs.columns[1:]])
    n_own, n_oth = int(table[1].sum()), int(table[3].sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = table[0].sum() / table[1].sum() - table[2].sum() / table[3].sum()
        resampled = _resample_counts(diffs.height, n_resamples, seed) @ table.T
        boot = resampled[:, 0] / resampled[:, 1] - resampled[:, 2] / resampled[:, 3]
    low, high = _percentiles(boot[None, :], confidence)
    return SelfPreference(float(estimate), float(low[0]), float(high[0]), n_own, n_oth)


def pareto_frontier(attempt: ArrayLike, car: ArrayLike) -> NDArray[np.bool_]:
    """Configurations on the observed trade-off frontier (Appendix A.7).

    The frontier at attempt rate a is the highest CAR among configurations with attempt >= a;
    a configuration is on it when no configuration with at least its attempt rate has a strictly
    higher CAR. NaN points are never on it.
    """
    a = np.asarray(attempt, dtype=np.float64).ravel()
    c = np.asarray(car, dtype=np.float64).ravel()
    if a.size != c.size:
        raise ValueError(f"attempt and car need equal length, got {a.size} and {c.size}")
    dominated = ((a[None, :] >= a[:, None]) & (c[None, :] > c[:, None])).any(axis=1)
    return ~dominated & ~np.isnan(a) & ~np.isnan(c)


def thinking_transitions(labels_off: Sequence[str | None], labels_on: Sequence[str | None]) -> dict[str, float]:
    """Matched label changes when thinking is enabled, with exact McNemar p (App. A.5, Table 8).

    Pairs where either response exhausted its budget (label None) are left out. A: abstain,
    D: deny, X: answer.

    Returns:
        ``n`` matched pairs, counts ``a_to_d``, ``d_to_a``, ``a_to_x``, ``x_to_a``, and
        ``p_ad`` / ``p_ax``: exact McNemar p of A->D vs D->A and of A->X vs X->A (uncorrected;
        correct them with :func:`benjamini_hochberg` per retrieval condition and kind of change).
    """
    if len(labels_off) != len(labels_on):
        raise ValueError(f"label lists need equal length, got {len(labels_off)}, {len(labels_on)}")
    off = np.asarray([None if is_missing(v) else v for v in labels_off], dtype=object)
    on = np.asarray([None if is_missing(v) else v for v in labels_on], dtype=object)
    keep = (off != None) & (on != None)  # noqa: E711 - elementwise comparison on object arrays
    for name, arr in (("labels_off", off), ("labels_on", on)):
        bad = [i for i in np.flatnonzero(keep) if arr[i] not in LABELS]
        if bad:
            raise ValueError(f"{name}[{bad[0]}] = {arr[bad[0]]!r} is not one of {LABELS}")
    off, on = off[keep], on[keep]

    def moved(src: str, dst: str) -> int:
        return int(np.sum((off == src) & (on == dst)))

    a_d, d_a = moved("ABSTAIN", "DENY"), moved("DENY", "ABSTAIN")
    a_x, x_a = moved("ABSTAIN", "ANSWER"), moved("ANSWER", "ABSTAIN")
    counts = {"a_to_d": a_d, "d_to_a": d_a, "a_to_x": a_x, "x_to_a": x_a}
    p = {"p_ad": mcnemar_exact(a_d, d_a), "p_ax": mcnemar_exact(a_x, x_a)}
    return {"n": int(keep.sum()), **counts, **p}
