"""Tests for declinecraft.views.evidence.calibration: B-ECE, over-answering and their intervals."""

from __future__ import annotations

import numpy as np
import pytest

from declinecraft.views import evidence
from declinecraft.views.evidence import calibration

# Ten responses per level; abstentions 1, 2, 6, 8, 2 on L1..L5 and 3 on T.
LEVELS = [lv for lv in ("L1", "L2", "L3", "L4", "L5", "T") for _ in range(10)]


ABSTAINED = [i < n for n in (1, 2, 6, 8, 2, 3) for i in range(10)]


class TestCalibration:
    def test_b_ece(self) -> None:
        """Eq. 1: (10*0.1 + 10*0.2 + 10*0.4 + 10*0.2 + 10*0.8) / 50; with T also 10*0.7 over 60."""
        assert evidence.b_ece(LEVELS, ABSTAINED) == pytest.approx(17 / 50)
        assert evidence.b_ece(LEVELS, ABSTAINED, ideal=evidence.IDEAL_WITH_T) == pytest.approx(24 / 60)

    def test_b_ece_extremes(self) -> None:
        """Perfect behaviour is 0, the opposite 1, no response at a scored level NaN."""
        good = [lv in calibration.INSUFFICIENT for lv in LEVELS]
        assert evidence.b_ece(LEVELS, good) == 0.0
        assert evidence.b_ece(LEVELS, [not g for g in good]) == 1.0
        assert np.isnan(evidence.b_ece(["T"], [True]))

    def test_over_answer(self) -> None:
        """Eq. 2 over L3-L5 only; an Invalid response stays in the denominator."""
        assert evidence.over_answer_rate(LEVELS, ABSTAINED) == pytest.approx(14 / 30)
        answered = [not a for a in ABSTAINED]
        answered[29] = False  # an L3 response (not an abstention) that did not answer either: Invalid
        assert evidence.over_answer_rate(LEVELS, ABSTAINED, answered) == pytest.approx(13 / 30)
        assert np.isnan(evidence.over_answer_rate(["L1"], [False]))

    def test_other_rates(self) -> None:
        """Abstention per level, ESB's wrong-answer rate over all L5 responses, accuracy over L1-L2."""
        assert evidence.abstention_rate(LEVELS, ABSTAINED, "L4") == 0.8
        assert evidence.wrong_answer_rate(["L5", "L5", "L5", "L4"], [True, False, False, True]) == pytest.approx(1 / 3)
        assert evidence.accuracy(["L1", "L2", "L2", "L3"], [1.0, 0.5, float("nan"), 1.0]) == 0.75

    def test_weights(self) -> None:
        """Weights scale n_l and A_l: an L5 pair at ½ each counts as one question (ESB's main grid).

        L1: 2 questions answered (a=0, ideal 0); L5: question q abstains in one order only, r in
        neither. Unweighted Eq. 1: L5 has 4 responses, 1 abstains -> |1 - 4| = 3, B-ECE 3/6 and
        over-answer 3/4. Weighted ½: L5 weighs 2, abstains ½ -> |0.5 - 2| = 1.5 over 4 = 0.375,
        over-answer 1.5 / 2 = 0.75; doubling every weight changes nothing.
        """
        levels = ["L1", "L1", "L5", "L5", "L5", "L5"]
        abstained = [False, False, True, False, False, False]
        qids = ["q", "r", "q", "q", "r", "r"]
        w = evidence.main_weights(qids, levels)
        assert w == [1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
        assert evidence.b_ece(levels, abstained) == pytest.approx(3 / 6)
        assert evidence.b_ece(levels, abstained, weights=w) == pytest.approx(1.5 / 4)
        assert evidence.b_ece(levels, abstained, weights=[2 * x for x in w]) == pytest.approx(1.5 / 4)
        assert evidence.over_answer_rate(levels, abstained, weights=w) == pytest.approx(0.75)
        assert evidence.over_answer_rate(["L3", "L5", "L5"], [False, True, False], weights=[1, 0.5, 0.5]) == 0.75
        with pytest.raises(ValueError, match="non-negative"):
            evidence.b_ece(levels, abstained, weights=[-1.0] * 6)

    def test_weights_after_unclassified_dropped(self) -> None:
        """An L5 order whose twin is unclassified weighs 1, not ½; the unclassified one 0.

        q: gold-first abstains, conflict-first unclassified -> weight 1, L5 abstention 1 / 1; r: both
        orders answer -> ½ each. L5 abstention (1 + 0) / (1 + 1) = ½ (assigned before the drop, it
        would be ½ / 1.5 = ⅓)."""
        qids, levels = ["q", "q", "r", "r"], ["L5"] * 4
        classified = [True, False, True, True]
        w = evidence.main_weights(qids, levels, classified=classified)
        assert w == [1.0, 0.0, 0.5, 0.5]
        kept = [
            (lv, a, wi) for lv, a, wi, c in zip(levels, [True, False, False, False], w, classified, strict=True) if c
        ]
        rate = evidence.over_answer_rate([k[0] for k in kept], [k[1] for k in kept], weights=[k[2] for k in kept])
        assert rate == pytest.approx(0.5)
        assert evidence.main_weights(["q", "q"], ["L5", "L5"], classified=[False, False]) == [0.0, 0.0]

    def test_l2_abstention_acceptable(self) -> None:
        """Scored as what it is, our L2 is left out of B-ECE and accuracy: an L2 abstention costs nothing.

        L1 answers (a=0), L2 abstains, L3 abstains: ESB's Eq. 1 gives |1 - 0| / 3 = ⅓, ours 0 / 2 = 0;
        accuracy over L1 only is 1.0 where L1-L2 gives ½."""
        levels, abstained = ["L1", "L2", "L3"], [False, True, True]
        assert evidence.b_ece(levels, abstained) == pytest.approx(1 / 3)
        assert evidence.b_ece(levels, abstained, ideal=evidence.SCORED_IDEAL) == 0.0
        assert "L2" not in evidence.SCORED_IDEAL_WITH_T and evidence.SCORED_IDEAL_WITH_T["T"] == 1.0
        assert evidence.accuracy(["L1", "L2"], [1.0, 0.0]) == 0.5
        assert evidence.accuracy(["L1", "L2"], [1.0, 0.0], scope=evidence.ANSWER_EXPECTED) == 1.0

    def test_lengths_must_match(self) -> None:
        """Mismatched lists are an error, not a silent truncation."""
        with pytest.raises(ValueError, match="equal length"):
            evidence.b_ece(["L1", "L2"], [True])

    def test_cluster_interval(self) -> None:
        """The interval holds the pooled rate; one question or a constant statistic are handled."""
        num, den = np.array([0.0, 1, 2, 2, 1, 0, 2, 2]), np.full(8, 2.0)
        low, high = calibration.cluster_interval([num, den], calibration.ratio, n_resamples=500, seed=1)
        assert low <= num.sum() / den.sum() <= high and low < high
        assert all(np.isnan(calibration.cluster_interval([num[:1], den[:1]], calibration.ratio)))
        assert calibration.cluster_interval([np.ones(5), np.ones(5)], calibration.ratio, n_resamples=100) == (1.0, 1.0)

    def test_b_ece_statistic_matches_point(self) -> None:
        """The vectorised statistic of per-question counts equals b_ece on the responses."""
        a = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]  # abstentions on L1 and L3 for two questions
        n = [np.array([1.0, 1.0]), np.array([1.0, 1.0])]
        got = calibration.b_ece_statistic([0.0, 1.0])(*a, *n, axis=-1)
        assert got == pytest.approx(
            evidence.b_ece(["L1", "L1", "L3", "L3"], [True, False, False, True], ideal={"L1": 0.0, "L3": 1.0})
        )
