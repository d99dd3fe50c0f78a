"""Tests for declinecraft.views.know2guess.reliability: reliability and its companions, R_λ, ECE,
the outcome profile."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.calibration import calibration_curve

from declinecraft.views.know2guess import (
    ece,
    reliability,
    reliability_from_counts,
)
from tests.support import k2g_run


class TestCounts:
    def test_published_qwen35(self) -> None:
        """K2G §6.9: Qwen3.5-9B's counts (419/867 correct, 197/213 abstained) give its three scores."""
        got = [reliability_from_counts(419, 867, 197, 213, lam) for lam in (0.5, 1.0, 1.5)]
        assert got == [pytest.approx(v, abs=5e-5) for v in (0.5316, 0.5704, 0.6022)]

    def test_bad_counts(self) -> None:
        """Counts above their totals or negative are errors; no items is NaN."""
        with pytest.raises(ValueError, match="above their totals"):
            reliability_from_counts(5, 4, 0, 0)
        with pytest.raises(ValueError, match="non-negative"):
            reliability_from_counts(1, 4, 0, 1, lam=-1)
        assert np.isnan(reliability_from_counts(0, 0, 0, 0))


class TestEce:
    def test_by_hand(self) -> None:
        """Two items at 0.95 (one right) and one at 0.15 (wrong): (2·0.45 + 0.15) / 3."""
        assert ece([0.95, 0.95, 0.15], [1, 0, 0]) == pytest.approx(0.35)

    def test_matches_sklearn_bins(self) -> None:
        """Equal-width bins agree with scikit-learn's calibration curve (weighted by bin counts)."""
        rng = np.random.default_rng(3)
        conf = rng.integers(0, 101, 400) / 100
        correct = (rng.random(400) < conf).astype(float)
        frac, mean = calibration_curve(correct, conf, n_bins=10, strategy="uniform")
        counts = reliability.calibration_bins(conf, correct)["n"].to_numpy()
        expected = float(np.sum(counts[counts > 0] * np.abs(frac - mean)) / counts.sum())
        assert ece(conf, correct) == pytest.approx(expected)

    def test_edges_and_errors(self) -> None:
        """Bins are closed on the right (0.9 is in the ninth, 1 in the last, 0 in the first); out-of-range
        confidence is an error; nothing is NaN."""
        assert reliability.calibration_bins([0.0, 0.9, 1.0], [1, 1, 1])["n"].to_list() == [1] + [0] * 7 + [1, 1]
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            ece([1.2], [1])
        assert np.isnan(ece([], []))


class TestSummary:
    @pytest.fixture()
    def table(self) -> pl.DataFrame:
        return reliability.summary(k2g_run.decisions(), n_resamples=200, confidence=0.95, seed=0)

    def test_rates(self, table: pl.DataFrame) -> None:
        """Every companion rate of model m's strict standard run, computed by hand (u3 failed: left out)."""
        r = k2g_run.row(table, model="m", prompt="standard", parser="strict")
        assert (r["n"], r["n_error"], r["n_answerable"], r["n_unanswerable"]) == (8, 1, 4, 3)
        expected = {
            "reliability": 2 / 7,
            "answerable_accuracy": 1 / 4,
            "productive_abstention": 1 / 3,
            "unnecessary_abstention": 1 / 4,
            "refusal_rate": 1 / 7,
            "parse_error_rate": 1 / 7,
            "coverage": 3 / 7,
            "answered_accuracy": 1 / 3,
            "ece": (0.1 + 0.6 + 0.5) / 3,
        }
        assert {k: r[k] for k in expected} == pytest.approx(expected)
        assert r["reliability_low"] <= r["reliability"] <= r["reliability_high"]

    def test_hallucination_and_sharpness(self, table: pl.DataFrame) -> None:
        """By hand: 3 answered items (a0 right, a2 wrong, u1's attempted answer earns nothing) -> 2 of 3
        hallucinated; sharpness = productive abstention 1/3 minus answerable accuracy 1/4 = 1/12;
        model n abstains on everything: nothing answered (NaN), sharpness 1 - 0 = 1."""
        r = k2g_run.row(table, model="m", prompt="standard", parser="strict")
        assert r["hallucination_rate"] == pytest.approx(2 / 3) and r["boundary_sharpness"] == pytest.approx(1 / 12)
        n = k2g_run.row(table, model="n", prompt="standard", parser="strict")
        assert n["hallucination_rate"] is None or np.isnan(n["hallucination_rate"])
        assert n["boundary_sharpness"] == pytest.approx(1.0)

    def test_normalized_reads_the_phrase(self, table: pl.DataFrame) -> None:
        """u1's "I don't know." is a missed abstention under strict, productive under normalized."""
        r = k2g_run.row(table, model="m", prompt="standard", parser="normalized")
        assert r["productive_abstention"] == pytest.approx(2 / 3) and r["reliability"] == pytest.approx(3 / 7)

    def test_refusal_and_parse_error_earn_no_credit(self) -> None:
        """REFUSE_POLICY and PARSE_ERROR score 0 on both halves; only ABSTAIN on unanswerable earns 1."""
        frame = k2g_run.decisions().filter(
            pl.col("model") == "m", pl.col("prompt") == "standard", pl.col("parser") == "strict"
        )
        credit = dict(zip(frame["question_id"], frame["credit"], strict=True))
        assert (credit["a3"], credit["u2"], credit["u0"], credit["u3"]) == (0.0, 0.0, 1.0, None)


class TestCostSensitive:
    def test_values_and_ranks(self) -> None:
        """R_λ from the counts; ranks within condition, prompt, parser and λ (1 = best)."""
        table = reliability.cost_sensitive(k2g_run.decisions(), (0.5, 1.0, 1.5)).filter(
            pl.col("prompt") == "standard", pl.col("parser") == "strict"
        )
        m = k2g_run.row(table, model="m", lam=0.5)
        assert m["reliability"] == pytest.approx(1.5 / 5.5) and m["rank"] == 2
        n = k2g_run.row(table, model="n", lam=1.0)
        assert n["reliability"] == pytest.approx(0.5) and n["rank"] == 1
        assert k2g_run.row(table, model="m", lam=1.0)["reliability"] == pytest.approx(2 / 7)


class TestOutcomes:
    def test_profile(self) -> None:
        """One outcome per item, refusals and parse errors their own; sums to n.

        Model m, standard prompt (7 items, u3's call failed): a0 right (correct 1), a1 abstains
        (unnecessary), a2 wrong (wrong 1), a3 refuses (refusal, not wrong), u0 abstains (productive),
        u1 "I don't know." without a decision (strict: an answer, missed), u2 empty (parse error,
        not missed)."""
        r = k2g_run.row(reliability.outcomes(k2g_run.decisions()), model="m", prompt="standard", parser="strict")
        assert (r["correct"], r["wrong"], r["unnecessary_abstention"]) == (1.0, 1.0, 1)
        assert (r["productive_abstention"], r["missed_abstention"], r["refusal"], r["parse_error"]) == (1, 1, 1, 1)
        assert (r["refusal_answerable"], r["parse_error_unanswerable"], r["unscored"]) == (1, 1, 0)
        outcomes = ("correct", "wrong", "unnecessary_abstention", "productive_abstention", "missed_abstention")
        assert sum(r[c] for c in (*outcomes, "refusal", "parse_error", "unscored")) == r["n"] == 7
