"""Tests for declinecraft.views.know2guess.sensitivity: parser and prompt sensitivity."""

from __future__ import annotations

import numpy as np
import pytest

from declinecraft.views.know2guess import (
    sensitivity,
)
from tests.support import k2g_run


class TestSensitivity:
    def test_parser(self) -> None:
        """Normalized minus strict, paired by item, and the one item whose state changed."""
        table = sensitivity.parser_sensitivity(k2g_run.decisions(), n_resamples=200, confidence=0.95, seed=0)
        r = k2g_run.row(table, model="m", prompt="standard", metric="reliability")
        assert (r["base_value"], r["value"], r["difference"]) == pytest.approx((2 / 7, 3 / 7, 1 / 7))
        assert (r["n_pairs"], r["n_state_changed"]) == (7, 1) and r["low"] <= r["difference"] <= r["high"]
        assert k2g_run.row(table, model="n", prompt="standard", metric="reliability")["difference"] == 0.0

    def test_prompt(self) -> None:
        """Compact minus standard: a1 answered correctly instead of abstaining."""
        table = sensitivity.prompt_sensitivity(k2g_run.decisions(), n_resamples=200, confidence=0.95, seed=0)
        assert set(table["prompt"]) == {"compact"}  # model n has no control run
        r = k2g_run.row(table, model="m", parser="strict", metric="reliability")
        assert r["difference"] == pytest.approx(1 / 7)
        assert k2g_run.row(table, model="m", parser="strict", metric="unnecessary_abstention")[
            "difference"
        ] == pytest.approx(-1 / 4)


class TestBootstrapP:
    def test_one_discordant_item(self) -> None:
        """Compact minus standard differs on 1 of 7 items (+1): a resampled mean is <= 0 exactly when
        that item is not drawn, (6/7)^7 = 0.3399, never below zero -> p = 2 x 0.3399 = 0.680."""
        p = sensitivity.bootstrap_p(np.array([[1.0, 0, 0, 0, 0, 0, 0]]), 20000, seed=1)
        assert p[0] == pytest.approx(2 * (6 / 7) ** 7, abs=0.02)

    def test_binomial(self) -> None:
        """Diffs (1, 1, 1, -1): mean <= 0 when 2+ of 4 draws are the -1 (p 1/4 each):
        1 - (3/4)^4 - 4 (1/4)(3/4)^3 = 0.2617; mean >= 0 with probability 0.9492 -> p = 0.5234."""
        p = sensitivity.bootstrap_p(np.array([[1.0, 1.0, 1.0, -1.0]]), 20000, seed=2)
        assert p[0] == pytest.approx(0.5234375, abs=0.02)

    def test_floor_and_missing(self) -> None:
        """Every item positive: p at its floor 1/B (K2G's "p < 10^-4" at 10,000); a row with no pair is NaN."""
        p = sensitivity.bootstrap_p(np.array([[1.0, 2.0, 1.0], [np.nan, np.nan, np.nan]]), 1000, seed=0)
        assert p[0] == pytest.approx(1 / 1000) and np.isnan(p[1])

    def test_in_the_table(self) -> None:
        """The prompt table carries the p of each comparison (a difference of 0 gives p = 1)."""
        table = sensitivity.prompt_sensitivity(k2g_run.decisions(), n_resamples=2000, confidence=0.95, seed=0)
        r = k2g_run.row(table, model="m", parser="strict", metric="reliability")
        assert r["p"] == pytest.approx(2 * (6 / 7) ** 7, abs=0.05)
        assert k2g_run.row(table, model="m", parser="strict", metric="productive_abstention")["p"] == 1.0
