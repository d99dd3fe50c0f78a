"""Tests for declinecraft.views.know2guess.crossprotocol: K2G's decisions beside our judge's labels."""

from __future__ import annotations

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from declinecraft.views.know2guess import (
    crossprotocol,
)
from declinecraft.views.know2guess.decisions import ABSTAIN
from tests.support import k2g_run


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
                "question_id": k2g_run.IDS,
                "label": labels,
            }
        )
        other = judged.with_columns(
            condition=pl.lit("single"), pipeline=pl.lit("bm25"), k=pl.lit(5), label=pl.lit("DENY")
        )  # another retrieval setting: never joined
        return crossprotocol.with_judge_labels(k2g_run.decisions(), pl.concat([judged, other]), pipeline="hybrid", k=5)

    def test_agreement(self, joined: pl.DataFrame) -> None:
        """ABSTAIN vs ABSTAIN and vs ABSTAIN-or-DENY over the items both sides decided; κ as scikit-learn's."""
        table = crossprotocol.cross_protocol(joined, n_resamples=200, confidence=0.95, seed=0)
        r = k2g_run.row(table, model="m", prompt="standard")
        assert (r["n_pairs"], r["n_unpaired"]) == (7, 1)
        assert (r["agreement_abstain"], r["agreement_decline"]) == pytest.approx((6 / 7, 5 / 7))
        k2g = [False, True, False, False, True, False, False]
        judge = [False, True, False, False, True, False, True]
        assert r["kappa_abstain"] == pytest.approx(cohen_kappa_score(k2g, judge))
        assert (r["car_k2g"], r["car_judge"], r["car_shift"]) == pytest.approx((1 / 3, 2 / 3, -1 / 3))

    def test_pooled_and_unmatched(self, joined: pl.DataFrame) -> None:
        """A pooled row per condition and prompt; model n has no judged responses: all unpaired."""
        table = crossprotocol.cross_protocol(joined, n_resamples=200, confidence=0.95, seed=0)
        assert k2g_run.row(table, model="n", prompt="standard")["n_pairs"] == 0
        assert k2g_run.row(table, model="all", prompt="standard")["n_pairs"] == 7
        tab = crossprotocol.crosstab(joined).filter(pl.col("model") == "m", pl.col("prompt") == "standard")
        assert k2g_run.row(tab, k2g_state="REFUSE_POLICY")["judge_label"] == "DENY" and tab["n"].sum() == 8


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
        assert k2g_run.row(table, model="m1")["car_shift"] == pytest.approx(1.0)
        assert k2g_run.row(table, model="m2")["car_shift"] == pytest.approx(0.0)
        pooled = k2g_run.row(table, model="all")
        assert (pooled["car_k2g"], pooled["car_judge"], pooled["car_shift"]) == pytest.approx((1.0, 0.5, 0.5))
        assert pooled["n_unanswerable_pairs"] == 4

    def test_pooled_interval(self) -> None:
        """Every resample of questions keeps both models' items: the pooled interval is the point, +50."""
        table = crossprotocol.cross_protocol(self.two_models(), n_resamples=200, confidence=0.95, seed=0)
        pooled = k2g_run.row(table, model="all")
        assert (pooled["car_shift_low"], pooled["car_shift_high"]) == pytest.approx((0.5, 0.5))

    def test_order_free(self) -> None:
        """The pooled shift does not depend on the order of the models' rows."""
        frame = self.two_models()
        one = crossprotocol.cross_protocol(frame, n_resamples=200, confidence=0.95, seed=0)
        two = crossprotocol.cross_protocol(frame.reverse(), n_resamples=200, confidence=0.95, seed=0)
        assert (
            k2g_run.row(one, model="all")["car_shift"]
            == k2g_run.row(two, model="all")["car_shift"]
            == pytest.approx(0.5)
        )
