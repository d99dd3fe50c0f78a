"""Tests of Know2Guess's scores on a scripted run: reliability and its companions, R_λ, ECE,
outcome profile, parser and prompt sensitivity, cross-protocol agreement."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import cohen_kappa_score

from declinecraft.llm.calls import Reply
from declinecraft.views import know2guess
from declinecraft.views.know2guess import (
    crossprotocol,
    ece,
    grading,
    protocol,
    reliability,
    reliability_from_counts,
    sensitivity,
)
from declinecraft.views.know2guess.decisions import ABSTAIN
from declinecraft.views.know2guess.protocol import Run
from declinecraft.views.know2guess.separability import separability

IDS = ["a0", "a1", "a2", "a3", "u0", "u1", "u2", "u3"]


def ans(answer: str, conf: int) -> str:
    return f"DECISION: ANSWER\nCONFIDENCE: {conf}\nFINAL_ANSWER: {answer}\nREASON_CODE: k"


ABST = "DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 10\nFINAL_ANSWER: NA\nREASON_CODE: k"
#: Model m, standard prompt: one of each outcome (u3's call fails).
M_STANDARD = [
    ans("right", 90),
    ABST,
    ans("wrong", 60),
    "DECISION: REFUSE_POLICY\nCONFIDENCE: 5\nFINAL_ANSWER: NA",
    ABST,
    "I don't know.",
    "",
    None,
]
#: Model m, compact prompt: as standard, but a1 is answered correctly.
M_COMPACT = [M_STANDARD[0], ans("right", 70), *M_STANDARD[2:]]
#: Model n abstains on everything.
N_STANDARD = [ABST] * 8


def questions() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": IDS,
            "answerable": [i.startswith("a") for i in IDS],
            "question": [f"Q {i}?" for i in IDS],
            "asked_question": [f"Q {i}?" for i in IDS],
        }
    )


def replies(texts: list[str | None]) -> list[Reply]:
    return [Reply("", error="boom") if t is None else Reply(t) for t in texts]


def decisions() -> pl.DataFrame:
    rows = []
    for run, texts in (
        (Run("m", "off", "no_rag", "standard"), M_STANDARD),
        (Run("m", "off", "no_rag", "compact"), M_COMPACT),
        (Run("n", "off", "no_rag", "standard"), N_STANDARD),
    ):
        rows += protocol.decision_rows(questions(), run, replies(texts))
    frame = protocol.decisions_frame(rows)
    refs = pl.DataFrame({"question_id": IDS, "reference": "ref"})
    items = grading.judge_items(frame, refs)
    accuracy = items.select(
        "response_id", accuracy=(pl.col("response") == "right").cast(pl.Float64), score_source=pl.lit("llm")
    )
    return grading.credit(frame, accuracy)


def row(frame: pl.DataFrame, **key: str) -> dict[str, object]:
    out = frame.filter(*[pl.col(k) == v for k, v in key.items()])
    assert out.height == 1, out
    return out.row(0, named=True)


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
        return reliability.summary(decisions(), n_resamples=200, confidence=0.95, seed=0)

    def test_rates(self, table: pl.DataFrame) -> None:
        """Every companion rate of model m's strict standard run, computed by hand (u3 failed: left out)."""
        r = row(table, model="m", prompt="standard", parser="strict")
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
        r = row(table, model="m", prompt="standard", parser="strict")
        assert r["hallucination_rate"] == pytest.approx(2 / 3) and r["boundary_sharpness"] == pytest.approx(1 / 12)
        n = row(table, model="n", prompt="standard", parser="strict")
        assert n["hallucination_rate"] is None or np.isnan(n["hallucination_rate"])
        assert n["boundary_sharpness"] == pytest.approx(1.0)

    def test_normalized_reads_the_phrase(self, table: pl.DataFrame) -> None:
        """u1's "I don't know." is a missed abstention under strict, productive under normalized."""
        r = row(table, model="m", prompt="standard", parser="normalized")
        assert r["productive_abstention"] == pytest.approx(2 / 3) and r["reliability"] == pytest.approx(3 / 7)

    def test_refusal_and_parse_error_earn_no_credit(self) -> None:
        """REFUSE_POLICY and PARSE_ERROR score 0 on both halves; only ABSTAIN on unanswerable earns 1."""
        frame = decisions().filter(pl.col("model") == "m", pl.col("prompt") == "standard", pl.col("parser") == "strict")
        credit = dict(zip(frame["question_id"], frame["credit"], strict=True))
        assert (credit["a3"], credit["u2"], credit["u0"], credit["u3"]) == (0.0, 0.0, 1.0, None)


class TestCostSensitive:
    def test_values_and_ranks(self) -> None:
        """R_λ from the counts; ranks within condition, prompt, parser and λ (1 = best)."""
        table = reliability.cost_sensitive(decisions(), (0.5, 1.0, 1.5)).filter(
            pl.col("prompt") == "standard", pl.col("parser") == "strict"
        )
        m = row(table, model="m", lam=0.5)
        assert m["reliability"] == pytest.approx(1.5 / 5.5) and m["rank"] == 2
        n = row(table, model="n", lam=1.0)
        assert n["reliability"] == pytest.approx(0.5) and n["rank"] == 1
        assert row(table, model="m", lam=1.0)["reliability"] == pytest.approx(2 / 7)


class TestOutcomes:
    def test_profile(self) -> None:
        """Correct / wrong / unnecessary on answerable, productive / missed on unanswerable; sums to n."""
        r = row(reliability.outcomes(decisions()), model="m", prompt="standard", parser="strict")
        assert (r["correct"], r["wrong"], r["unnecessary_abstention"]) == (1.0, 2.0, 1)
        assert (r["productive_abstention"], r["missed_abstention"], r["wrong_refusal"], r["missed_parse_error"]) == (
            1,
            2,
            1,
            1,
        )
        assert (
            r["correct"]
            + r["wrong"]
            + r["unnecessary_abstention"]
            + r["productive_abstention"]
            + r["missed_abstention"]
            == 7
        )


class TestSensitivity:
    def test_parser(self) -> None:
        """Normalized minus strict, paired by item, and the one item whose state changed."""
        table = sensitivity.parser_sensitivity(decisions(), n_resamples=200, confidence=0.95, seed=0)
        r = row(table, model="m", prompt="standard", metric="reliability")
        assert (r["base_value"], r["value"], r["difference"]) == pytest.approx((2 / 7, 3 / 7, 1 / 7))
        assert (r["n_pairs"], r["n_state_changed"]) == (7, 1) and r["low"] <= r["difference"] <= r["high"]
        assert row(table, model="n", prompt="standard", metric="reliability")["difference"] == 0.0

    def test_prompt(self) -> None:
        """Compact minus standard: a1 answered correctly instead of abstaining."""
        table = sensitivity.prompt_sensitivity(decisions(), n_resamples=200, confidence=0.95, seed=0)
        assert set(table["prompt"]) == {"compact"}  # model n has no control run
        r = row(table, model="m", parser="strict", metric="reliability")
        assert r["difference"] == pytest.approx(1 / 7)
        assert row(table, model="m", parser="strict", metric="unnecessary_abstention")["difference"] == pytest.approx(
            -1 / 4
        )


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
        table = sensitivity.prompt_sensitivity(decisions(), n_resamples=2000, confidence=0.95, seed=0)
        r = row(table, model="m", parser="strict", metric="reliability")
        assert r["p"] == pytest.approx(2 * (6 / 7) ** 7, abs=0.05)
        assert row(table, model="m", parser="strict", metric="productive_abstention")["p"] == 1.0


class TestLengthTest:
    def test_known_answer(self) -> None:
        """Answerable 1, 2, 3 tokens, unanswerable 4, 5, 6: means 2 and 5, KS D = 1, exact two-sided
        p = 2 / C(6, 3) = 0.1."""
        texts = ["a", "a b", "a b c", "a b c d", "a b c d e", "a b c d e f"]
        got = know2guess.length_test(texts, [False] * 3 + [True] * 3)
        assert got == pytest.approx(
            {"tokens_answerable": 2.0, "tokens_unanswerable": 5.0, "ks_statistic": 1.0, "ks_p": 0.1}
        )

    def test_same_lengths(self) -> None:
        """Equal distributions: D = 0 and p = 1."""
        got = know2guess.length_test(["a b", "c d", "e f", "g h"], [False, True, False, True])
        assert (got["ks_statistic"], got["ks_p"]) == (0.0, 1.0)


class TestCrossProtocol:
    @pytest.fixture()
    def joined(self) -> pl.DataFrame:
        labels = ["ANSWER", "ABSTAIN", "ANSWER", "DENY", "ABSTAIN", "ANSWER", "ABSTAIN", "ANSWER"]
        judged = pl.DataFrame(
            {
                "model": "m",
                "thinking": "off",
                "condition": "no_rag",
                "pipeline": "none",
                "k": 0,
                "scenario": True,
                "prompt_variant": "default",
                "question_id": IDS,
                "label": labels,
            }
        )
        other = judged.with_columns(
            condition=pl.lit("single"), pipeline=pl.lit("bm25"), k=pl.lit(5), label=pl.lit("DENY")
        )  # another retrieval setting: never joined
        return crossprotocol.with_judge_labels(decisions(), pl.concat([judged, other]), pipeline="hybrid", k=5)

    def test_agreement(self, joined: pl.DataFrame) -> None:
        """ABSTAIN vs ABSTAIN and vs ABSTAIN-or-DENY over the items both sides decided; κ as scikit-learn's."""
        table = crossprotocol.cross_protocol(joined, n_resamples=200, confidence=0.95, seed=0)
        r = row(table, model="m", prompt="standard")
        assert (r["n_pairs"], r["n_unpaired"]) == (7, 1)
        assert (r["agreement_abstain"], r["agreement_decline"]) == pytest.approx((6 / 7, 5 / 7))
        k2g = [False, True, False, False, True, False, False]
        judge = [False, True, False, False, True, False, True]
        assert r["kappa_abstain"] == pytest.approx(cohen_kappa_score(k2g, judge))
        assert (r["car_k2g"], r["car_judge"], r["car_shift"]) == pytest.approx((1 / 3, 2 / 3, -1 / 3))

    def test_pooled_and_unmatched(self, joined: pl.DataFrame) -> None:
        """A pooled row per condition and prompt; model n has no judged responses: all unpaired."""
        table = crossprotocol.cross_protocol(joined, n_resamples=200, confidence=0.95, seed=0)
        assert row(table, model="n", prompt="standard")["n_pairs"] == 0
        assert row(table, model="all", prompt="standard")["n_pairs"] == 7
        tab = crossprotocol.crosstab(joined).filter(pl.col("model") == "m", pl.col("prompt") == "standard")
        assert row(tab, k2g_state="REFUSE_POLICY")["judge_label"] == "DENY" and tab["n"].sum() == 8


class TestCrossProtocolPooled:
    @staticmethod
    def two_models() -> pl.DataFrame:
        """Models m1 and m2 answer the same three questions without retrieval. On the two
        unanswerable ones both declare ABSTAIN; the judge finds m1 answering and m2 abstaining."""
        rows = []
        for model, judged in (("m1", "ANSWER"), ("m2", "ABSTAIN")):
            for q, answerable in (("a0", True), ("u0", False), ("u1", False)):
                rows.append(
                    {
                        "model": model,
                        "thinking": "off",
                        "condition": "no_rag",
                        "prompt": "standard",
                        "parser": "strict",
                        "question_id": q,
                        "answerable": answerable,
                        "state": "ANSWER" if answerable else ABSTAIN,
                        "judge_label": "ANSWER" if answerable else judged,
                    }
                )
        return pl.DataFrame(rows)

    def test_pooled_shift_known(self) -> None:
        """The pooled shift is the mean over both models' items: (+100 + 0) / 2 = +50 points."""
        table = crossprotocol.cross_protocol(self.two_models(), n_resamples=200, confidence=0.95, seed=0)
        assert row(table, model="m1")["car_shift"] == pytest.approx(1.0)
        assert row(table, model="m2")["car_shift"] == pytest.approx(0.0)
        pooled = row(table, model="all")
        assert (pooled["car_k2g"], pooled["car_judge"], pooled["car_shift"]) == pytest.approx((1.0, 0.5, 0.5))
        assert pooled["n_unanswerable_pairs"] == 4

    def test_pooled_interval(self) -> None:
        """Every resample of questions keeps both models' items: the pooled interval is the point, +50."""
        table = crossprotocol.cross_protocol(self.two_models(), n_resamples=200, confidence=0.95, seed=0)
        pooled = row(table, model="all")
        assert (pooled["car_shift_low"], pooled["car_shift_high"]) == pytest.approx((0.5, 0.5))

    def test_order_free(self) -> None:
        """The pooled shift does not depend on the order of the models' rows."""
        frame = self.two_models()
        one = crossprotocol.cross_protocol(frame, n_resamples=200, confidence=0.95, seed=0)
        two = crossprotocol.cross_protocol(frame.reverse(), n_resamples=200, confidence=0.95, seed=0)
        assert row(one, model="all")["car_shift"] == row(two, model="all")["car_shift"] == pytest.approx(0.5)


class TestSeparability:
    def test_decision_metrics(self) -> None:
        """At 0.5, by hand: 2 of 3 unanswerable caught, 1 of 5 answerable flagged -> accuracy 6/8,
        recall 2/3, FPR 1/5; F1 unanswerable 2*2/(4+1+1) = 2/3, answerable 2*4/(8+1+1) = 0.8."""
        y = [True, True, True, False, False, False, False, False]
        p = [0.9, 0.5, 0.2, 0.7, 0.1, 0.3, 0.49, 0.0]
        got = know2guess.decision_metrics(y, p)
        assert got == pytest.approx(
            {"accuracy": 0.75, "macro_f1": (2 / 3 + 0.8) / 2, "recall_unanswerable": 2 / 3, "false_positive_rate": 0.2}
        )

    def test_probe_known_answer(self) -> None:
        """A phrase only unanswerable questions use, seen in development, is the probe's signal:
        test items with it are caught, one unanswerable item worded like the answerable ones is
        missed -> recall 2/3, FPR 0, accuracy 5/6, macro-F1 (0.8 + 6/7) / 2."""
        dev_a = ["how do I tame a wolf", "how do I craft a torch", "how do I smelt iron", "how do I dye a sheep"]
        dev_u = [
            "what does the sulfur cube drop",
            "what does the copper chest drop",
            "what does the frost cube drop",
            "what does the ghast lamp drop",
        ]
        test_a = ["how do I tame a cat", "how do I craft a bow", "how do I smelt gold"]
        test_u = ["what does the sulfur golem drop", "what does the copper cube drop", "how do I tame a fox"]
        texts = dev_a + dev_u + test_a + test_u
        y = [False] * 4 + [True] * 4 + [False] * 3 + [True] * 3
        dev = [True] * 8 + [False] * 6
        r = know2guess.separability_probe(texts, y, dev=dev, top=3)
        assert (r["recall_unanswerable"], r["false_positive_rate"]) == (pytest.approx(2 / 3), 0.0)
        assert (r["accuracy"], r["macro_f1"]) == (pytest.approx(5 / 6), pytest.approx((0.8 + 6 / 7) / 2))
        assert (r["n_dev"], r["n_test"], r["n_test_unanswerable"]) == (8, 6, 3)
        assert r["top_features"][0][0] in {"what does", "does the", "drop", "what", "does", "the", "cube"}

    def test_split(self) -> None:
        """The development split takes 10% of each half (at least one, never all), seeded."""
        y = [True] * 20 + [False] * 80
        dev = know2guess.separability.split(y, seed=3)
        assert (dev[:20].sum(), dev[20:].sum()) == (2, 8)
        assert (know2guess.separability.split(y, seed=3) == dev).all()
        assert know2guess.separability.split([True, False, False], seed=0).tolist().count(True) == 1

    def test_table(self) -> None:
        """The stage's table: one row per text, unanswerable-weighted words first; the chance AUPRC is
        the test split's unanswerable share."""
        words = ["zombie", "creeper", "spider", "skeleton", "golem", "villager", "wolf", "cat", "bee", "cow"]
        asked = [f"How do I tame a {w} today?" for w in words * 2] + [
            f"How was the newly added {w} found?" for w in words
        ]
        bench = pl.DataFrame(
            {
                "answerable": [True] * 20 + [False] * 10,
                "asked_question": asked,
                "question": [f"In my world. {q}" for q in asked],
            }
        )
        probe, features = separability(bench, seed=0, top=2, dev_share=0.5)
        r = row(probe, text="question")
        assert (r["n_dev"], r["n_test"], r["auprc_chance"]) == (15, 15, pytest.approx(5 / 15))
        assert (r["recall_unanswerable"], r["false_positive_rate"], r["auroc"]) == (1.0, 0.0, 1.0)
        assert row(features, text="question", half="unanswerable", rank=1)["feature"] in {
            "newly",
            "added",
            "found",
            "was",
            "how was",
            "was the",
            "the newly",
            "newly added",
        }

    def test_too_few(self) -> None:
        """A split without both halves gives NaN with a note, never an error."""
        bench = pl.DataFrame(
            {"answerable": [True, True, False], "asked_question": ["a b c"] * 3, "question": ["a"] * 3}
        )
        probe, features = separability(bench, seed=0, top=2)
        assert probe["auroc"].is_nan().all() and probe["note"][0].startswith("the development") and features.is_empty()
