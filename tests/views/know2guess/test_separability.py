"""Tests for declinecraft.views.know2guess.separability: the length test and the lexical probe."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views import know2guess
from declinecraft.views.know2guess.separability import separability
from tests.support import k2g_run


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
        r = k2g_run.row(probe, text="question")
        assert (r["n_dev"], r["n_test"], r["auprc_chance"]) == (15, 15, pytest.approx(5 / 15))
        assert (r["recall_unanswerable"], r["false_positive_rate"], r["auroc"]) == (1.0, 0.0, 1.0)
        assert k2g_run.row(features, text="question", half="unanswerable", rank=1)["feature"] in {
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
