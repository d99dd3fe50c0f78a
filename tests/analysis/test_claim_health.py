"""Tests for declinecraft.analysis.claim_health: the claims the run health rules out."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.analysis import analyze, claim_health, claims
from declinecraft.analysis.run_health import SCHEMA
from tests.support import synthetic


def health(*rows: tuple[str, str, str, int, int]) -> pl.DataFrame:
    """A run-health table from (measure, stage, detail, numerator, denominator) rows."""
    data = [
        dict(
            measure=m,
            stage=s,
            model="m",
            thinking="off",
            condition="",
            detail=d,
            numerator=k,
            denominator=n,
            rate=k / n if n else None,
        )
        for m, s, d, k, n in rows
    ]
    return pl.DataFrame(data, schema=SCHEMA)


HEALTHY = health(
    ("failed_calls", "05_answer", "", 0, 100),
    ("truncated", "05_answer", "", 1, 100),
    ("label_unparsable", "06_judge", "", 2, 100),
    ("further_rounds", "05_answer", "1", 3, 10),
    ("further_rounds", "05_answer", "0", 7, 10),
    ("accuracy_questions", "07_analysis", "", 30, 30),
)


class TestReason:
    def test_healthy_run_rules_nothing_out(self) -> None:
        """Shares at or below 5% and an iterative RAG that iterated leave every claim testable."""
        assert all(claim_health.reason(c.claim_id, HEALTHY, 6) == "" for c in claims.CLAIMS)

    @pytest.mark.parametrize(
        ("measure", "stage", "said"),
        [
            ("failed_calls", "05_answer", "6 of 100 answer calls failed (6%)"),
            ("truncated", "05_answer", "6 of 100 answers cut at the output budget (6%)"),
            ("label_unparsable", "06_judge", "6 of 100 responses unlabelled after the re-ask (6%)"),
        ],
    )
    def test_broken_run_rules_out_every_claim(self, measure: str, stage: str, said: str) -> None:
        """6 of 100 (above 5%) rules out every claim, with the count in the reason."""
        frame = pl.concat([HEALTHY.filter(pl.col("measure") != measure), health((measure, stage, "", 6, 100))])
        reasons = {c.claim_id: claim_health.reason(c.claim_id, frame, 6) for c in claims.CLAIMS}
        assert all(r.startswith(f"run health: {said}") for r in reasons.values())

    def test_iterative_that_never_iterated(self) -> None:
        """No second retrieval round rules out the iterative claims only."""
        frame = pl.concat(
            [
                HEALTHY.filter(pl.col("measure") != "further_rounds"),
                health(("further_rounds", "05_answer", "0", 12, 12)),
            ]
        )
        out = {c.claim_id: claim_health.reason(c.claim_id, frame, 6) for c in claims.CLAIMS}
        assert {k for k, v in out.items() if v} == claim_health.ITERATIVE_CLAIMS
        assert out["iter_lowers_car"] == (
            "run health: iterative RAG never retrieved twice (none of 12 iterative answers), so it equals "
            "single-shot RAG"
        )

    def test_accuracy_on_too_few_questions(self) -> None:
        """Accuracy resting on at most 1 question per configuration rules out the accuracy claims only."""
        frame = pl.concat(
            [
                HEALTHY.filter(pl.col("measure") != "accuracy_questions"),
                health(
                    ("accuracy_questions", "07_analysis", "", 1, 2), ("accuracy_questions", "07_analysis", "", 0, 2)
                ),
            ]
        )
        out = {c.claim_id: claim_health.reason(c.claim_id, frame, 6) for c in claims.CLAIMS}
        assert {k for k, v in out.items() if v} == claim_health.ACCURACY_CLAIMS
        assert (
            out["car_accuracy"]
            == "run health: accuracy on at most 1 question per configuration (the small-n rule needs 6)"
        )

    def test_no_health_table(self) -> None:
        """A run without a run-health table is judged on its n alone."""
        assert claim_health.reason("iter_lowers_car", None, 6) == ""


def test_check_reads_the_health() -> None:
    """The claims check turns a claim the synthetic run supports into not testable when its run
    health shows 10% of the answers cut, and keeps the run's value."""
    judged = synthetic.synthetic_judged(15, 150, seed=1, ablations=True)
    tables = dict(analyze.analyze(judged, synthetic.synthetic_models(15, seed=1), analyze.Design(n_resamples=100)))
    ctx = claims.Context(alpha=0.05, thinking=("off", "on"))
    before = {r["claim_id"]: r for r in claims.check(tables, ctx, {}).iter_rows(named=True)}
    tables["run_health"] = health(("truncated", "05_answer", "", 10, 100))
    after = {r["claim_id"]: r for r in claims.check(tables, ctx, {}).iter_rows(named=True)}
    held = [k for k, r in before.items() if r["verdict"] in ("supported", "contradicted")]
    assert held, "the synthetic run tests some claim"
    assert all(
        after[k]["verdict"] == "not testable"
        and after[k]["reason"].startswith("run health: 10 of 100 answers cut")
        and after[k]["run_value"] == before[k]["run_value"]
        for k in held
    )
