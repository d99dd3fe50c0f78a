"""ESB's behavioural metrics over plain lists, and their bootstrap intervals over questions.

The Evidence Sufficiency Benchmark (ESB: Zhang and Wu, "Do LLMs Know When Evidence is
Insufficient? An Evidence Sufficiency Benchmark for Answer-Abstention Calibration in
Retrieval-Augmented Generation") defines, per response at evidence level l:

- abstention rate: the share of responses that abstain (§3.2);
- over-answer rate (Eq. 2): answers on L3-L5 over all L3-L5 responses;
- accuracy (Eq. 3): correct answers on L1-L2 over all L1-L2 responses (here the graded score of
  our accuracy judges, App. J.3: each judge's 0 / 0.5 / 1, averaged over the panel, with
  abstentions scoring 0; ESB scores correct or not);
- wrong-answer rate (§5.3): known-wrong answers on L5 over all L5 responses;
- B-ECE (Eq. 1): sum over levels of n_l |a_l - a*_l| / N, with a*_l = 0 on L1-L2 and 1 on L3-L5.
  ``IDEAL_WITH_T`` adds our temporal condition T (unanswerable questions with their retrieved
  chunks) as abstention-expected.

A response that is neither an answer nor an abstention (ESB's Invalid) stays in every
denominator. Levels absent from the ideal map (T, by default) are left out.

The functions default to ESB's definitions (``IDEAL``, accuracy over L1-L2). The view's tables
score our L2 as what it is: ESB's L2 is weaker support from which the answer can still be reached,
ours is the target chunk with every sentence stating the answer cut (:mod:`.partial`), so no
passage states it and abstaining there is justified. Our L2 is abstention-acceptable
(:data:`ABSTENTION_ACCEPTABLE`): left out of B-ECE (:data:`SCORED_IDEAL`) and of accuracy
(:data:`ANSWER_EXPECTED`: L1 only), its abstention rate still reported on the curve.

Each L5 question counts once. ESB's main grid has one L5 context per question (2 x 100 x 5
prompts, §4); its order-randomised conflict pairs are a separate position-bias set (§5.1). We
ask both orders of every pair and weigh each ½ in the main metrics (``weights``; :func:`main_weights`
builds them), so a question's L5 weighs as much as its L1 and the order effect averages out rather
than depending on a seeded draw of one order. The position-bias table keeps both orders unweighted.

Intervals resample questions, not responses: a question's levels, orders and prompts move
together, so the interval reflects how many questions there are. The statistics are ratios of
pooled counts (and B-ECE is a weighted absolute deviation), which is why this uses
``scipy.stats.bootstrap`` with paired samples instead of ``core.stats.bootstrap_means`` (a mean
of one value per question).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import stats as st

LEVELS: tuple[str, ...] = ("L1", "L2", "L3", "L4", "L5", "T")
"""ESB's five evidence levels, then our temporal condition T."""
SUFFICIENT: tuple[str, ...] = ("L1", "L2")
INSUFFICIENT: tuple[str, ...] = ("L3", "L4", "L5")
IDEAL: dict[str, float] = {"L1": 0.0, "L2": 0.0, "L3": 1.0, "L4": 1.0, "L5": 1.0}
"""a*_l of ESB Eq. 1: the ideal abstention rate per level."""
IDEAL_WITH_T: dict[str, float] = {**IDEAL, "T": 1.0}
"""Eq. 1 with T counted as abstention-expected (our variant)."""
ABSTENTION_ACCEPTABLE: tuple[str, ...] = ("L2",)
"""Levels of our build where abstaining and answering are both acceptable: our L2 states no answer."""
ANSWER_EXPECTED: tuple[str, ...] = tuple(lv for lv in SUFFICIENT if lv not in ABSTENTION_ACCEPTABLE)
"""Levels whose accuracy the view's tables report (ESB Eq. 3 over these): L1."""
SCORED_IDEAL: dict[str, float] = {lv: a for lv, a in IDEAL.items() if lv not in ABSTENTION_ACCEPTABLE}
"""Eq. 1's a*_l over the levels with an expected behaviour in our build (L1, L3-L5)."""
SCORED_IDEAL_WITH_T: dict[str, float] = {**SCORED_IDEAL, "T": 1.0}
"""The same with T abstention-expected."""


def _check(levels: Sequence[str], *columns: Sequence[object]) -> None:
    for column in columns:
        if len(column) != len(levels):
            raise ValueError(f"levels and values need equal length, got {len(levels)} and {len(column)}")


def _weights(levels: Sequence[str], weights: Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * len(levels)
    _check(levels, weights)
    if any(not w >= 0 for w in weights):
        raise ValueError("weights must be non-negative numbers")
    return [float(w) for w in weights]


def _share(
    levels: Sequence[str], hits: Sequence[bool], scope: Sequence[str], weights: Sequence[float] | None = None
) -> float:
    w = _weights(levels, weights)
    chosen = [(bool(h), wi) for lv, h, wi in zip(levels, hits, w, strict=True) if lv in scope]
    total = sum(wi for _, wi in chosen)
    return sum(wi for h, wi in chosen if h) / total if total else float("nan")


def abstention_rate(levels: Sequence[str], abstained: Sequence[bool], level: str) -> float:
    """Share of responses at ``level`` that abstained (ESB §3.2); NaN when there are none."""
    _check(levels, abstained)
    return _share(levels, abstained, (level,))


def over_answer_rate(
    levels: Sequence[str],
    abstained: Sequence[bool],
    answered: Sequence[bool] | None = None,
    *,
    weights: Sequence[float] | None = None,
) -> float:
    """ESB Eq. 2: answers on L3-L5 over every L3-L5 response; NaN without L3-L5 responses.

    ``answered`` defaults to ``not abstained``; pass it when some responses are neither (Invalid),
    which then count in the denominator only. ``weights`` (one per response, default 1) weigh
    numerator and denominator alike (½ for each order of an L5 pair).
    """
    answered = [not a for a in abstained] if answered is None else answered
    _check(levels, abstained, answered)
    return _share(levels, answered, INSUFFICIENT, weights)


def wrong_answer_rate(levels: Sequence[str], known_wrong: Sequence[bool]) -> float:
    """ESB §5.3: known-wrong answers on L5 (the conflicting value adopted) over all L5 responses."""
    _check(levels, known_wrong)
    return _share(levels, known_wrong, ("L5",))


def accuracy(levels: Sequence[str], scores: Sequence[float], *, scope: Sequence[str] = SUFFICIENT) -> float:
    """ESB Eq. 3 with graded scores: mean score over the responses at ``scope``'s levels (ESB:
    L1-L2; the view's tables pass :data:`ANSWER_EXPECTED`), NaN scores left out."""
    _check(levels, scores)
    chosen = [float(s) for lv, s in zip(levels, scores, strict=True) if lv in scope and not np.isnan(s)]
    return sum(chosen) / len(chosen) if chosen else float("nan")


def b_ece(
    levels: Sequence[str],
    abstained: Sequence[bool],
    *,
    ideal: Mapping[str, float] = IDEAL,
    weights: Sequence[float] | None = None,
) -> float:
    """ESB Eq. 1: sum over levels of n_l |a_l - a*_l| / N (0 is perfectly calibrated).

    Levels not in ``ideal`` are left out (T by default; ``ideal=IDEAL_WITH_T`` counts it as
    abstention-expected). ``weights`` (one per response, default 1) make n_l and A_l weighted
    sums. NaN when no weight is at a level of ``ideal``.
    """
    _check(levels, abstained)
    w = _weights(levels, weights)
    total = 0.0
    n = 0.0
    for level, target in ideal.items():
        picked = [(bool(a), wi) for lv, a, wi in zip(levels, abstained, w, strict=True) if lv == level]
        n_l = sum(wi for _, wi in picked)
        if n_l:
            a_l = sum(wi for a, wi in picked if a)
            total += abs(a_l - target * n_l)  # n_l |a_l - a*_l| = |A_l - a*_l n_l|
            n += n_l
    return total / n if n else float("nan")


def main_weights(
    question_ids: Sequence[str], levels: Sequence[str], *, classified: Sequence[bool] | None = None
) -> list[float]:
    """Weight per response for the main metrics: 1 / (classified responses of its question at its level).

    Pass the responses of one model, thinking setting and prompt. Weights are assigned after
    unclassified responses are dropped (``classified``, default all): an unclassified response
    weighs 0, so an L5 question asked in both orders gets ½ per classified order, or 1 for the
    one order left; it counts once either way, as in ESB's main grid. Any other level has one
    response per question and weight 1.
    """
    _check(levels, question_ids)
    kept = [True] * len(levels) if classified is None else [bool(c) for c in classified]
    _check(levels, kept)
    counts: dict[tuple[str, str], int] = {}
    for key, keep in zip(zip(question_ids, levels, strict=True), kept, strict=True):
        counts[key] = counts.get(key, 0) + keep
    return [
        1.0 / counts[key] if keep else 0.0
        for key, keep in zip(zip(question_ids, levels, strict=True), kept, strict=True)
    ]


# --- intervals ---------------------------------------------------------------------------------

Statistic = Callable[..., NDArray[np.float64]]


def cluster_interval(
    columns: Sequence[NDArray[np.float64]],
    statistic: Statistic,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over clusters (questions).

    ``columns`` hold one value per question each (per-question sums); ``statistic(*columns,
    axis)`` must reduce along ``axis``. Questions are resampled together across columns. Fewer
    than two questions, or a statistic undefined in some resample, give NaN bounds.
    """
    arrays = [np.asarray(c, dtype=np.float64) for c in columns]
    if not arrays or arrays[0].size < 2:
        return float("nan"), float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        point = statistic(*arrays, axis=-1)
        if not np.isfinite(point):
            return float("nan"), float("nan")
        res = st.bootstrap(
            tuple(arrays),
            statistic,
            n_resamples=n_resamples,
            vectorized=True,
            paired=True,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return low, high


def ratio(numerator: NDArray[np.float64], denominator: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """Pooled ratio sum(numerator) / sum(denominator) along ``axis`` (a rate over responses)."""
    return np.sum(numerator, axis=axis) / np.sum(denominator, axis=axis)


def b_ece_statistic(ideal: Sequence[float]) -> Statistic:
    """B-ECE over per-question counts: columns are A_1..A_L (abstentions), then n_1..n_L."""
    target = np.asarray(ideal, dtype=np.float64)

    def stat(*columns: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
        half = len(columns) // 2
        abstain = np.stack([np.sum(c, axis=axis) for c in columns[:half]])
        count = np.stack([np.sum(c, axis=axis) for c in columns[half:]])
        deviation = np.abs(abstain - target.reshape((-1,) + (1,) * (abstain.ndim - 1)) * count)
        return deviation.sum(axis=0) / count.sum(axis=0)

    return stat
