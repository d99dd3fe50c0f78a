"""Tests for declinecraft.analysis.claim_evidence: the minimum n of each test."""

from __future__ import annotations

import pytest

from declinecraft.analysis import claim_evidence


class TestMinN:
    @pytest.mark.parametrize(("alpha", "n"), [(0.05, 6), (0.01, 8), (0.5, 3)])
    def test_sign(self, alpha: float, n: int) -> None:
        """The exact sign-type tests first reach p < alpha at n: 2/2**n < alpha <= 2/2**(n-1)."""
        assert claim_evidence.min_n_sign(alpha) == n
        assert 2 / 2**n < alpha <= 2 / 2 ** (n - 1)

    def test_rank(self) -> None:
        """A rank correlation can first be significant at 5 items (2/5! = 0.017 < 0.05 <= 2/4!)."""
        assert claim_evidence.min_n_rank(0.05) == 5 and claim_evidence.min_n_rank(0.01) == 6
