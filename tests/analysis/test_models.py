"""Tests for declinecraft.analysis.models: per-model means, differences, associations, frontiers."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from declinecraft.analysis import models
from declinecraft.core import small_n, stats
from tests.support import judged_tables


class TestConditionMeans:
    def test_t_interval(self) -> None:
        """Means over configurations carry stats.t_interval."""
        grid_ = pl.DataFrame({"condition": ["single"] * 3, **{m: [0.2, 0.4, 0.6] for m in models.MEAN_METRICS}})
        row = models.condition_means(grid_).filter(pl.col("metric") == "car").row(0, named=True)
        assert (row["mean"], row["low"], row["high"]) == pytest.approx(stats.t_interval([0.2, 0.4, 0.6]))


class TestModelDifferences:
    def test_one_model(self) -> None:
        """One thinking pair: the mean is defined, the test is not, and a note says why."""
        grid_ = pl.DataFrame(
            {
                "model": ["m", "m"],
                "thinking": ["off", "on"],
                "condition": ["no_rag"] * 2,
                "car": [0.5, 0.3],
                "car_lenient": [0.6, 0.6],
                "accuracy": [0.1, 0.2],
                "attempt": [0.9, 0.9],
            }
        )
        out = models.model_differences(grid_, pl.DataFrame())
        row = out.filter(pl.col("quantity") == "thinking_car").row(0, named=True)
        assert (
            row["mean"] == pytest.approx(-0.2) and math.isnan(row["wilcoxon_p"]) and "needs at least 2" in row["note"]
        )


class TestThinkingByFamily:
    def test_mean(self) -> None:
        """The family mean of on-minus-off CAR differences."""
        grid_ = pl.DataFrame(
            {
                "model": ["a", "a", "b", "b"],
                "family": ["F"] * 4,
                "thinking": ["off", "on"] * 2,
                "condition": ["single"] * 4,
                "car": [0.5, 0.7, 0.5, 0.5],
            }
        )
        out = models.thinking_by_family(grid_)
        assert out["car_change"][0] == pytest.approx(0.1)


class TestModelPoints:
    def test_prefers_thinking(self) -> None:
        """A model with both settings contributes its thinking-enabled configuration."""
        grid_ = pl.DataFrame(
            {
                "model": ["a", "a", "b"],
                "thinking": ["off", "on", "off"],
                "condition": ["single"] * 3,
                "car": [1.0, 2.0, 3.0],
            }
        )
        assert models.model_points(grid_)["car"].to_list() == [2.0, 3.0]


class TestAssociations:
    def test_perfect_and_missing(self) -> None:
        """Monotone size gives rho = 1; a model without release month is left out with a note."""
        n = 6
        grid_ = pl.DataFrame(
            {
                "model": [f"m{i}" for i in range(n)],
                "thinking": ["off"] * n,
                "condition": ["single"] * n,
                "family": [f"f{i}" for i in range(n)],
                "car": np.linspace(0.1, 0.6, n),
                "accuracy": np.linspace(0.6, 0.1, n),
                "accuracy_when_attempted": np.linspace(0.6, 0.2, n),
                "car_lenient": np.linspace(0.3, 0.8, n),
                "params_total_b": np.arange(1.0, n + 1),
                "params_active_b": np.arange(1.0, n + 1),
                "open_weight": [True] * n,
                "release_month": [1.0, 2, 3, 4, 5, float("nan")],
            }
        )
        out = models.associations(grid_)
        assert out.filter(pl.col("name") == "car_total_params")["rho"][0] == pytest.approx(1.0)
        release = out.filter(pl.col("name") == "car_release_month").row(0, named=True)
        assert release["n"] == 5 and "without release_month" in release["note"]

    def test_rank_minimum_is_the_papers(self) -> None:
        """Below the rank test's own minimum (small_n.min_n_rank, 5 at alpha 0.05) a row says it
        needs that many points: the threshold the paper prints for its rank-correlation figures."""
        n = 4
        grid_ = pl.DataFrame(
            {
                "model": [f"m{i}" for i in range(n)],
                "thinking": ["off"] * n,
                "condition": ["single"] * n,
                "family": [f"f{i}" for i in range(n)],
                "car": np.linspace(0.1, 0.6, n),
                "accuracy": np.linspace(0.6, 0.1, n),
                "accuracy_when_attempted": np.linspace(0.6, 0.2, n),
                "car_lenient": np.linspace(0.3, 0.8, n),
                "params_total_b": np.arange(1.0, n + 1),
                "params_active_b": np.arange(1.0, n + 1),
                "open_weight": [True] * n,
                "release_month": np.arange(1.0, n + 1),
            }
        )
        row = models.associations(grid_, alpha=0.05).filter(pl.col("name") == "car_total_params").row(0, named=True)
        assert row["rho"] == pytest.approx(1.0) and f"needs {small_n.min_n_rank(0.05)}" in row["note"]
        assert small_n.min_n_rank(0.05) == 5


class TestFrontierTable:
    def test_hand(self) -> None:
        """On-frontier flags and the best CAR at attempt >= 0.95."""
        grid_ = pl.DataFrame(
            {
                "model": list("abc"),
                "thinking": ["off"] * 3,
                "condition": ["single"] * 3,
                "attempt": [0.99, 0.96, 0.80],
                "car": [0.2, 0.5, 0.4],
            }
        )
        out = models.frontier_table(grid_)
        assert out["on_frontier"].to_list() == [True, True, False]
        assert out["best_at_min_attempt"].to_list() == [False, True, False]


class TestDirectionCounts:
    def test_hand(self) -> None:
        """Directions of CAR and attempt changes from no RAG to single-shot RAG."""
        grid_ = pl.DataFrame(
            {
                "model": ["a", "a", "b", "b"],
                "thinking": ["off"] * 4,
                "condition": ["no_rag", "single"] * 2,
                "car": [0.1, 0.5, 0.1, 0.5],
                "attempt": [0.9, 0.95, 0.9, 0.8],
            }
        )
        out = models.direction_counts(grid_)
        assert (out["both_higher"], out["car_higher_attempt_lower"]) == (1, 1)


class TestFamilyLabelShares:
    def test_deny_gt_abstain(self) -> None:
        """A family denying more often than abstaining is flagged."""
        grid_ = pl.DataFrame(
            {
                "family": ["F"],
                "condition": ["no_rag"],
                "share_abstain": [0.1],
                "share_deny": [0.5],
                "share_answer": [0.4],
            }
        )
        assert models.family_label_shares(grid_)["deny_gt_abstain"].to_list() == [True]


class TestLeakage:
    def test_deny_scores_zero(self) -> None:
        """Premise denials count as not attempted and score 0 on the unanswerable questions."""
        rows = [
            ("m", "off", "no_rag", f"u{i}", False, lab, acc)
            for i, (lab, acc) in enumerate([("ANSWER", 1.0), ("DENY", 1.0), ("ABSTAIN", 0.0), ("ANSWER", 0.0)])
        ]
        facts = pl.DataFrame({"model": ["m"], "family": ["F"]})
        row = models.leakage(judged_tables.responses(rows), facts, by=("family",), n_resamples=20).row(0, named=True)
        assert row["accuracy"] == pytest.approx(0.25) and row["attempt"] == pytest.approx(0.5) and row["runs"] == 1

    def test_counts_unscored(self) -> None:
        """An answer without a judge score is left out of the mean and counted in ``dropped``
        (abstentions and denials need no score)."""
        labels = [("ANSWER", 1.0), ("ANSWER", None), ("ANSWER", 0.0), ("DENY", None), ("ABSTAIN", None)]
        rows = [("m", "off", "no_rag", f"u{i}", False, lab, acc) for i, (lab, acc) in enumerate(labels)]
        facts = pl.DataFrame({"model": ["m"], "family": ["F"]})
        row = models.leakage(judged_tables.responses(rows), facts, by=("model", "thinking"), n_resamples=20).row(
            0, named=True
        )
        assert (row["n"], row["dropped"]) == (5, 1) and row["accuracy"] == pytest.approx(0.25)


class TestCompleteSweep:
    def test_full_only(self) -> None:
        """Only configurations run at every k of the ablation are kept."""
        frame = pl.DataFrame({"model": ["a", "a", "a", "b", "b"], "thinking": ["off"] * 5, "k": [1, 5, 10, 5, 10]})
        out = models.complete_sweep(frame, "k")
        assert out["model"].unique().to_list() == ["a"] and out.height == 3
