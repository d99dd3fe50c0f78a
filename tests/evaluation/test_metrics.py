"""Tests for declinecraft.evaluation.metrics: scoring rules of §4.1 / Appendix I and Table 2 rows."""

from __future__ import annotations

import math
import time

import numpy as np
import polars as pl
import pytest

from declinecraft.core import stats
from declinecraft.evaluation import metrics


def responses(rows: list[tuple[int, bool, str | None, bool, float | None]]) -> pl.DataFrame:
    """Frame from (question_id, answerable, label, budget_exhausted, accuracy) tuples."""
    schema = {
        "question_id": pl.Int64,
        "answerable": pl.Boolean,
        "label": pl.String,
        "budget_exhausted": pl.Boolean,
        "accuracy": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def gemma_26b_row() -> pl.DataFrame:
    """A run with Table 2's Gemma 4 26B-A4B counts: 668/700 attempted, 242/300 abstained.

    Scores on attempted answers sum to 485, giving accuracy 69.3% and 72.6% when attempted.
    """
    ans = [(q, True, "ANSWER", False, 1.0 if q < 485 else 0.0) for q in range(668)]
    ans += [(q, True, "ABSTAIN", False, None) for q in range(668, 700)]
    labels = ["ABSTAIN"] * 242 + ["DENY"] * 30 + ["ANSWER"] * 28
    unans = [(1000 + i, False, lab, False, None) for i, lab in enumerate(labels)]
    return responses(ans + unans)


@pytest.fixture
def mixed() -> pl.DataFrame:
    """Small frame exercising every rule: deny, abstain, exhausted budget, unjudged answer."""
    return responses(
        [
            (1, True, "ANSWER", False, 1.0),
            (2, True, "DENY", False, 0.0),  # premise denial on answerable: an attempt
            (3, True, "ABSTAIN", False, 0.5),  # abstention scores 0 whatever the judges say
            (4, True, None, True, None),  # budget exhausted: out of Attempt, 0 in accuracy
            (5, True, "ANSWER", False, 0.5),
            (6, False, "ABSTAIN", False, None),
            (7, False, "DENY", False, None),
            (8, False, "ANSWER", False, 0.0),
            (9, False, None, True, None),  # budget exhausted: out of CAR
        ]
    )


class TestBalancedF1:
    @pytest.mark.parametrize(
        ("attempt", "car", "published"),
        [
            (0.954, 0.807, 0.889),  # Gemma 4 26B-A4B
            (0.979, 0.737, 0.874),  # Gemma 4 26B-A4B (thinking)
            (0.957, 0.833, 0.901),  # Gemma 4 31B
            (0.964, 0.650, 0.833),  # Gemma 4 31B (thinking)
            (0.921, 0.567, 0.783),  # Gemma 3 4B
            (0.979, 0.577, 0.815),  # Gemma 3 12B
        ],
    )
    def test_table2(self, attempt: float, car: float, published: float) -> None:
        """Reproduces Table 2's Bal. F1 from its rounded rates, within rounding (0.1 point)."""
        assert metrics.balanced_f1(attempt, car) == pytest.approx(published, abs=1e-3)

    def test_exact(self) -> None:
        """A=0.954, C=0.807 gives 1.908 / 2.147."""
        assert metrics.balanced_f1(0.954, 0.807) == pytest.approx(1.908 / 2.147)

    @pytest.mark.parametrize(("attempt", "car", "want"), [(1, 1, 1.0), (0, 1, 0.0), (1, 0, 2 / 3)])
    def test_edges(self, attempt: float, car: float, want: float) -> None:
        """Perfect run gives 1, never attempting gives 0, never abstaining gives 2/3."""
        assert metrics.balanced_f1(attempt, car) == pytest.approx(want)

    def test_arrays_and_nan(self) -> None:
        """Works elementwise on arrays and propagates NaN."""
        out = metrics.balanced_f1(np.array([0.954, np.nan]), np.array([0.807, 0.5]))
        assert out[0] == pytest.approx(0.8887, abs=1e-4) and np.isnan(out[1])

    def test_percentages(self) -> None:
        """Percentages instead of proportions are rejected."""
        with pytest.raises(ValueError, match="proportions"):
            metrics.balanced_f1(95.4, 80.7)


class TestCorrectAbstentionRate:
    def test_strict(self, mixed: pl.DataFrame) -> None:
        """Only ABSTAIN counts; the exhausted response is out of the denominator."""
        assert metrics.correct_abstention_rate(mixed) == (pytest.approx(1 / 3), 1, 3)

    def test_lenient(self, mixed: pl.DataFrame) -> None:
        """The lenient rule also counts DENY."""
        assert metrics.correct_abstention_rate(mixed, lenient=True) == (pytest.approx(2 / 3), 2, 3)

    def test_table2_count(self) -> None:
        """242 abstentions of 300 give 80.7% and Table 2's Wilson bracket."""
        rate = metrics.correct_abstention_rate(gemma_26b_row())
        assert round(rate.rate, 3) == 0.807
        assert tuple(round(v, 3) for v in stats.wilson(rate.k, rate.n)) == (0.758, 0.847)

    def test_no_unanswerable(self, mixed: pl.DataFrame) -> None:
        """A run without unanswerable questions gives NaN with n = 0."""
        rate = metrics.correct_abstention_rate(mixed.filter(pl.col("answerable")))
        assert math.isnan(rate.rate) and (rate.k, rate.n) == (0, 0)


class TestAttemptRate:
    def test_rules(self, mixed: pl.DataFrame) -> None:
        """ANSWER and DENY count as attempts, ABSTAIN not, exhausted left out."""
        assert metrics.attempt_rate(mixed) == (pytest.approx(3 / 4), 3, 4)

    def test_empty(self) -> None:
        """An empty frame gives NaN with counts 0."""
        rate = metrics.attempt_rate(responses([]))
        assert math.isnan(rate.rate) and (rate.k, rate.n) == (0, 0)


class TestAnswerAccuracy:
    def test_rules(self, mixed: pl.DataFrame) -> None:
        """Abstention and exhausted budget score 0: (1 + 0 + 0 + 0 + 0.5) / 5."""
        assert metrics.answer_accuracy(mixed) == pytest.approx(0.3)

    def test_unjudged_left_out(self) -> None:
        """A null score on an attempted answer is missing, not zero."""
        frame = responses([(1, True, "ANSWER", False, 1.0), (2, True, "ANSWER", False, None)])
        assert metrics.answer_accuracy(frame) == pytest.approx(1.0)

    def test_unanswerable(self, mixed: pl.DataFrame) -> None:
        """answerable=False scores the unanswerable questions (leakage audit)."""
        assert metrics.answer_accuracy(mixed, answerable=False) == pytest.approx(0.0)

    def test_table2(self) -> None:
        """The Gemma 4 26B-A4B counts give 69.3%."""
        assert round(metrics.answer_accuracy(gemma_26b_row()), 3) == 0.693


class TestAccuracyWhenAttempted:
    def test_rules(self, mixed: pl.DataFrame) -> None:
        """Mean over ANSWER and DENY on answerable questions: (1 + 0 + 0.5) / 3."""
        assert metrics.accuracy_when_attempted(mixed) == pytest.approx(0.5)

    def test_table2(self) -> None:
        """The Gemma 4 26B-A4B counts give 72.6%."""
        assert round(metrics.accuracy_when_attempted(gemma_26b_row()), 3) == 0.726

    def test_nothing_attempted(self) -> None:
        """No attempted answer gives NaN."""
        assert math.isnan(metrics.accuracy_when_attempted(responses([(1, True, "ABSTAIN", False, 0.0)])))


class TestLabelShares:
    def test_shares(self, mixed: pl.DataFrame) -> None:
        """Each label gets a third of the three labelled unanswerable responses."""
        assert metrics.label_shares(mixed) == pytest.approx({"ABSTAIN": 1 / 3, "DENY": 1 / 3, "ANSWER": 1 / 3})

    def test_empty(self) -> None:
        """No unanswerable responses give NaN shares."""
        assert all(math.isnan(v) for v in metrics.label_shares(responses([])).values())

    def test_unknown_label(self) -> None:
        """A label outside the three is rejected, naming the question."""
        with pytest.raises(ValueError, match="'REFUSE' for question 7"):
            metrics.label_shares(responses([(7, False, "REFUSE", False, None)]))

    def test_unlabelled(self) -> None:
        """A null label without an exhausted budget is rejected, naming the question."""
        with pytest.raises(ValueError, match=r"questions \[4\]"):
            metrics.label_shares(responses([(4, False, None, False, None)]))


def grid(n_models: int, conditions: tuple[str, ...], n_questions: int, seed: int = 0) -> pl.DataFrame:
    """Random responses for every model x condition x question, half the questions unanswerable."""
    rng = np.random.default_rng(seed)
    size = n_models * len(conditions) * n_questions
    q = np.tile(np.arange(n_questions), n_models * len(conditions))
    labels = rng.choice(["ABSTAIN", "DENY", "ANSWER"], size, p=[0.3, 0.1, 0.6])
    exhausted = rng.random(size) < 0.02
    return pl.DataFrame(
        {
            "model": np.repeat([f"m{i}" for i in range(n_models)], len(conditions) * n_questions),
            "condition": np.tile(np.repeat(conditions, n_questions), n_models),
            "question_id": q,
            "answerable": q % 2 == 0,
            "label": labels,
            "budget_exhausted": exhausted,
            "accuracy": rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0], size),
        }
    ).with_columns(label=pl.when(pl.col("budget_exhausted")).then(None).otherwise(pl.col("label")))


class TestSummarize:
    def test_table2_row(self) -> None:
        """Reproduces every published number of Table 2's Gemma 4 26B-A4B row."""
        row = metrics.summarize(gemma_26b_row().with_columns(model=pl.lit("g")), by=["model"]).row(0, named=True)
        got = {
            k: round(row[k] * 100, 1)
            for k in (
                "attempt",
                "attempt_low",
                "attempt_high",
                "car",
                "car_low",
                "car_high",
                "accuracy",
                "accuracy_when_attempted",
                "bal_f1",
            )
        }
        assert got == {
            "attempt": 95.4,
            "attempt_low": 93.6,
            "attempt_high": 96.7,
            "car": 80.7,
            "car_low": 75.8,
            "car_high": 84.7,
            "accuracy": 69.3,
            "accuracy_when_attempted": 72.6,
            "bal_f1": 88.9,
        }
        assert row["accuracy_low"] < row["accuracy"] < row["accuracy_high"]
        assert (row["n_answerable"], row["n_unanswerable"], row["car_lenient_k"]) == (700, 300, 272)

    def test_agrees_with_functions(self, mixed: pl.DataFrame) -> None:
        """Each column equals the single-metric function on the same group."""
        row = metrics.summarize(mixed, by=[]).row(0, named=True)
        assert row["car"] == metrics.correct_abstention_rate(mixed).rate
        assert row["car_lenient"] == metrics.correct_abstention_rate(mixed, lenient=True).rate
        assert row["attempt"] == metrics.attempt_rate(mixed).rate
        assert row["accuracy"] == pytest.approx(metrics.answer_accuracy(mixed))
        assert row["accuracy_when_attempted"] == pytest.approx(metrics.accuracy_when_attempted(mixed))
        assert row["share_deny"] == pytest.approx(metrics.label_shares(mixed)["DENY"])
        assert row["n_budget_exhausted"] == 2

    def test_groups(self) -> None:
        """One row per model x condition, in first-seen order, with accuracy in [low, high]."""
        out = metrics.summarize(grid(3, ("none", "rag"), 100), by=["model", "condition"])
        assert out.select("model", "condition").rows()[:2] == [("m0", "none"), ("m0", "rag")]
        assert out.height == 6 and (out["n_answerable"] + out["n_unanswerable"] == 100).all()
        assert ((out["accuracy_low"] <= out["accuracy"]) & (out["accuracy"] <= out["accuracy_high"])).all()

    def test_missing_condition(self) -> None:
        """complete=True adds a model's missing condition as NaN metrics with counts 0."""
        frame = grid(2, ("none", "rag"), 20).filter(~((pl.col("model") == "m1") & (pl.col("condition") == "rag")))
        out = metrics.summarize(frame, by=["model", "condition"], complete=True)
        row = out.filter((pl.col("model") == "m1") & (pl.col("condition") == "rag")).row(0, named=True)
        assert out.height == 4 and row["n_answerable"] == 0 and row["car_n"] == 0
        assert all(math.isnan(row[k]) for k in ("car", "car_low", "attempt", "accuracy", "accuracy_high", "bal_f1"))

    def test_only_answerable(self) -> None:
        """A group without unanswerable questions has NaN CAR but a real attempt rate."""
        row = metrics.summarize(grid(1, ("rag",), 20).filter(pl.col("answerable")), by=["model"]).row(0, named=True)
        assert math.isnan(row["car"]) and math.isnan(row["share_deny"]) and not math.isnan(row["attempt"])

    def test_empty(self) -> None:
        """An empty frame gives no rows when grouped and one all-NaN row overall."""
        empty = grid(1, ("rag",), 4).clear()
        assert metrics.summarize(empty, by=["model"]).height == 0
        row = metrics.summarize(empty, by=[]).row(0, named=True)
        assert row["n_answerable"] == 0 and math.isnan(row["car"]) and math.isnan(row["accuracy_low"])

    def test_seeded(self) -> None:
        """The same seed reproduces the bootstrap bounds; another seed changes them."""
        frame = grid(2, ("rag",), 100)
        a, b = (metrics.summarize(frame, by=["model"], seed=s)["accuracy_low"] for s in (0, 0))
        c = metrics.summarize(frame, by=["model"], seed=1)["accuracy_low"]
        assert a.equals(b) and not a.equals(c)

    def test_fast(self) -> None:
        """40 configurations x 3 conditions x 1,000 questions summarise in well under 2 seconds."""
        frame = grid(40, ("none", "rag", "iterative"), 1000)
        start = time.perf_counter()
        out = metrics.summarize(frame, by=["model", "condition"])
        assert time.perf_counter() - start < 2.0 and out.height == 120

    def test_missing_column(self, mixed: pl.DataFrame) -> None:
        """A frame without a required column is rejected, naming it."""
        with pytest.raises(ValueError, match="budget_exhausted"):
            metrics.summarize(mixed.drop("budget_exhausted"), by=[])

    def test_missing_group_column(self, mixed: pl.DataFrame) -> None:
        """Grouping by an absent column is rejected, naming it."""
        with pytest.raises(ValueError, match="'pipeline'"):
            metrics.summarize(mixed, by=["pipeline"])
