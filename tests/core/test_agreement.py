"""Tests for declinecraft.core.agreement: Cohen's and Fleiss' kappa on published and hand-worked tables."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from declinecraft.core import agreement, stats

# Agreement with the reference libraries: equal up to a few units in the last place.
CLOSE = {"rel": 1e-12, "abs": 1e-15}


# Fleiss (1971) as reproduced on Wikipedia: 10 items, 14 raters, 5 categories; kappa = 0.210.
FLEISS_1971 = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


class TestCohenKappa:
    def test_hand_2x2(self) -> None:
        """Hand-worked 2x2 (20 yy, 5 yn, 10 ny, 15 nn): p_o 0.7, p_e 0.5, kappa 0.4."""
        a = ["yes"] * 25 + ["no"] * 25
        b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
        assert agreement.cohen_kappa(a, b) == pytest.approx(0.4)

    def test_hand_quadratic(self) -> None:
        """Hand-worked quadratic kappa on scores 0/0.5/1: 1 - 0.5 / 1.375 = 7/11."""
        a, b = [0, 0.5, 1, 1], [0, 1, 1, 0.5]
        assert agreement.cohen_kappa(a, b, weights="quadratic", labels=[0, 0.5, 1]) == pytest.approx(7 / 11)

    @pytest.mark.parametrize("weights", [None, "quadratic"])
    @pytest.mark.parametrize("seed", range(10))
    def test_sklearn(self, weights: str | None, seed: int) -> None:
        """Matches sklearn's cohen_kappa_score to rounding on random ratings (2 to 4 levels)."""
        rng = np.random.default_rng(seed)
        n, levels = int(rng.integers(2, 300)), list(range(2 + seed % 3))
        a = rng.choice(levels, n)
        b = np.where(rng.random(n) < rng.random(), a, rng.choice(levels, n))
        want = cohen_kappa_score(a, b, weights=weights, labels=levels)
        got = agreement.cohen_kappa(list(a), list(b), weights=weights, labels=levels)
        assert got == pytest.approx(want, **CLOSE)

    def test_stored_bits(self) -> None:
        """Label kappas are stored unrounded, so their bits are pinned (sklearn's end in ...65)."""
        a = ["ABSTAIN", "DENY", "ANSWER", "DENY", "ABSTAIN", "ANSWER", "ANSWER"]
        b = ["ABSTAIN", "ABSTAIN", "ANSWER", "DENY", "DENY", "ANSWER", "ABSTAIN"]
        assert agreement.cohen_kappa(a, b, labels=list(stats.LABELS)) == 0.36363636363636354
        assert cohen_kappa_score(a, b) == pytest.approx(4 / 11, **CLOSE)

    def test_unused_label_changes_weights(self) -> None:
        """Declaring the unused middle level changes quadratic weights, as the scale requires."""
        a, b = [0, 1, 1, 0, 1], [0, 1, 0, 0, 1]
        full = agreement.cohen_kappa(a, b, weights="quadratic", labels=[0, 0.5, 1])
        assert full == pytest.approx(agreement.cohen_kappa(a, b, weights="quadratic"))
        assert agreement.cohen_kappa(a, b, labels=[0, 0.5, 1]) == pytest.approx(agreement.cohen_kappa(a, b))

    def test_identical_single_label(self) -> None:
        """Both raters always giving one label: chance agreement 1, kappa NaN (as in sklearn)."""
        assert math.isnan(agreement.cohen_kappa(["DENY"] * 5, ["DENY"] * 5))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert math.isnan(cohen_kappa_score(["DENY"] * 5, ["DENY"] * 5))

    def test_missing_pairs(self) -> None:
        """Pairs with a None rating are left out."""
        assert agreement.cohen_kappa(["a", None, "b"], ["a", "b", "b"]) == pytest.approx(1.0)

    def test_unknown_label(self) -> None:
        """A rating outside the declared labels is rejected."""
        with pytest.raises(ValueError, match="not in labels"):
            agreement.cohen_kappa(["a", "c"], ["a", "b"], labels=["a", "b"])


class TestFleissKappa:
    def test_fleiss_1971(self) -> None:
        """The classic 10-item, 14-rater example gives 0.210, as statsmodels does."""
        assert agreement.fleiss_kappa(FLEISS_1971) == pytest.approx(0.2099, abs=1e-4)
        assert agreement.fleiss_kappa(FLEISS_1971) == pytest.approx(sm_fleiss(np.array(FLEISS_1971)))

    @pytest.mark.parametrize("seed", range(10))
    def test_statsmodels_random(self, seed: int) -> None:
        """Matches statsmodels to rounding on random panels of 2 to 5 raters and 2 to 5 levels."""
        rng = np.random.default_rng(seed)
        raters, levels = 2 + seed % 4, 2 + seed % 4
        table = np.array(
            [np.bincount(rng.integers(0, levels, raters), minlength=levels) for _ in range(int(rng.integers(1, 300)))]
        )
        assert agreement.fleiss_kappa(table) == pytest.approx(sm_fleiss(table), **CLOSE)

    def test_zero_bits(self) -> None:
        """A kappa of exactly 0 stays 0; statsmodels gives -1.1e-16, printed as -0.000000."""
        table = [[0, 0, 3], [1, 0, 2], [1, 0, 2], [0, 2, 1]]
        assert agreement.fleiss_kappa(table) == 0.0
        assert sm_fleiss(np.array(table)) == pytest.approx(0.0, abs=1e-15)

    def test_perfect(self) -> None:
        """Unanimous items spread over categories give kappa 1."""
        assert agreement.fleiss_kappa([[3, 0, 0], [0, 3, 0], [0, 0, 3]]) == pytest.approx(1.0)

    def test_single_category(self) -> None:
        """Every rating in one category gives NaN, as in statsmodels."""
        assert math.isnan(agreement.fleiss_kappa([[3, 0], [3, 0]]))
        with np.errstate(divide="ignore", invalid="ignore"):
            assert math.isnan(sm_fleiss(np.array([[3, 0], [3, 0]])))

    def test_unequal_raters(self) -> None:
        """Items rated by different numbers of raters are rejected, naming the item."""
        with pytest.raises(ValueError, match="item 1"):
            agreement.fleiss_kappa([[3, 0], [1, 1]])
