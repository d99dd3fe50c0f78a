"""Tests for declinecraft.analysis.claims: the verdict rule, thinking that is not a native switch,
and the claims of synthetic runs with known directions."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.analysis import analyze, claims
from tests.support import projects, synthetic

NATIVE = claims.Context(alpha=0.05, thinking=("off", "on"))


@pytest.fixture(scope="module")
def synth() -> dict[str, pl.DataFrame]:
    """Every table of a 15-configuration synthetic run (5 switchable models) with ablations."""
    judged = synthetic.synthetic_judged(15, 150, seed=1, ablations=True)
    return analyze.analyze(judged, synthetic.synthetic_models(15, seed=1), analyze.Design(n_resamples=100))


@pytest.fixture(scope="module")
def tiny() -> dict[str, pl.DataFrame]:
    """Every table of a one-configuration run on 8 questions (5 unanswerable), like the default run."""
    judged = synthetic.synthetic_judged(1, 8, seed=0, answerable_share=0.375)
    return analyze.analyze(judged, synthetic.synthetic_models(1), analyze.Design(n_resamples=50))


def by_id(table: pl.DataFrame) -> dict[str, dict]:
    return {row["claim_id"]: row for row in table.iter_rows(named=True)}


class TestVerdict:
    def test_supported(self) -> None:
        """A claim that holds on enough data is supported, with no reason."""
        assert claims.verdict(claims.Evidence("x", holds=True, n=10, min_n=6)) == ("supported", "")

    def test_contradicted(self) -> None:
        """A claim that fails on enough data is contradicted."""
        assert claims.verdict(claims.Evidence("x", holds=False, n=6, min_n=6)) == ("contradicted", "")

    def test_not_testable_reason(self) -> None:
        """A run that lacks what the claim needs is not testable, with that reason, whatever it shows."""
        verdict = claims.verdict(claims.Evidence("x", holds=True, n=40, min_n=6, untestable="one k only"))
        assert verdict == ("not testable", "one k only")

    @pytest.mark.parametrize("holds", [True, False])
    def test_n_too_small(self, holds: bool) -> None:
        """An n below the test's minimum is not testable, never supported (nor contradicted)."""
        verdict, reason = claims.verdict(claims.Evidence("x", holds=holds, n=5, min_n=6, unit="configurations"))
        assert verdict == "not testable" and reason == "n too small: 5 configurations; the test needs 6"

    @pytest.mark.parametrize(
        ("n", "unit", "text"),
        [
            (1, "families", "1 family"),
            (1, "paired questions (most per test)", "1 paired questions (most per test)"),
            (1, "models", "1 model"),
            (3, "models", "3 models"),
        ],
    )
    def test_counted(self, n: int, unit: str, text: str) -> None:
        """The reason's count reads in the singular for one item."""
        assert claims.counted(n, unit) == text

    def test_undefined(self) -> None:
        """A test that is undefined on the data (holds None) is not testable."""
        assert claims.verdict(claims.Evidence("x", holds=None, n=10, min_n=6))[0] == "not testable"

    def test_small_n_rule(self) -> None:
        """The verdict uses the small-n rule: a set analysis.min_n above the test's minimum makes
        the same evidence not testable, saying what it needs; 0 keeps the test's own minimum."""
        ev = claims.Evidence("x", holds=True, n=10, min_n=6, unit="configurations")
        assert claims.verdict(ev, claims.Context(min_n=0)) == ("supported", "")
        assert claims.verdict(ev, claims.Context(min_n=20)) == (
            "not testable",
            "n too small: 10 configurations; the test needs 20",
        )
        assert claims.verdict(ev, claims.Context(min_n=3)) == ("supported", "")


class TestThinking:
    def test_prompted(self, synth: dict[str, pl.DataFrame]) -> None:
        """Prompted reasoning is not a native switch: every thinking claim is not testable, saying so."""
        table = by_id(claims.check(synth, claims.Context(thinking=("off", "prompted")), {}))
        thinking = [row for cid, row in table.items() if cid.startswith("thinking") or cid == "lost_to_denial"]
        assert len(thinking) == 5
        assert all(
            row["verdict"] == "not testable" and "prompted reasoning, not a native thinking switch" in row["reason"]
            for row in thinking
        )

    def test_one_way(self, synth: dict[str, pl.DataFrame]) -> None:
        """A run with thinking off only has no model with switchable thinking."""
        row = by_id(claims.check(synth, claims.Context(thinking=("off",)), {}))["thinking_lowers_car_sig"]
        assert row["verdict"] == "not testable" and "no model with switchable thinking" in row["reason"]

    def test_no_native_model(self, synth: dict[str, pl.DataFrame]) -> None:
        """On/off runs of models the registry gives no thinking switch are not native either."""
        grid = synth["main_grid"].with_columns(thinking_mode=pl.lit("none"))
        row = by_id(claims.check({**synth, "main_grid": grid}, NATIVE, {}))["lost_to_denial"]
        assert (row["verdict"], row["reason"]) == ("not testable", "no model with switchable thinking")

    def test_native(self, synth: dict[str, pl.DataFrame]) -> None:
        """With native pairs the count claims are tested: 5 models, at least 6 pairs each."""
        row = by_id(claims.check(synth, NATIVE, {}))["thinking_lowers_car_sig"]
        assert row["verdict"] in ("supported", "contradicted") and row["run_value"].endswith("increases")


class TestCheck:
    def test_columns(self, synth: dict[str, pl.DataFrame]) -> None:
        """At least ten claims, the documented columns, only the three verdicts, unique ids."""
        table = claims.check(synth, NATIVE, claims.reported_facts(projects.REPO))
        assert tuple(table.columns) == claims.COLUMNS and table.height >= 10
        assert set(table["verdict"]) <= {"supported", "contradicted", "not testable"}
        assert table["claim_id"].n_unique() == table.height

    def test_known_directions(self, synth: dict[str, pl.DataFrame]) -> None:
        """The synthetic run raises CAR with retrieval and lowers it with iteration: both supported."""
        table = by_id(claims.check(synth, NATIVE, {}))
        assert table["rag_raises_car"]["verdict"] == "supported" and table["iter_lowers_car"]["verdict"] == "supported"
        assert table["rag_raises_car_sig"]["verdict"] == "supported"

    def test_contradicted_direction(self, synth: dict[str, pl.DataFrame]) -> None:
        """The same claim on a run whose mean change is negative is contradicted."""
        diffs = synth["model_differences"].with_columns(
            mean=pl.when(pl.col("quantity") == "single_minus_no_rag_car")
            .then(-pl.col("mean"))
            .otherwise(pl.col("mean"))
        )
        row = by_id(claims.check({**synth, "model_differences": diffs}, NATIVE, {}))["rag_raises_car"]
        assert row["verdict"] == "contradicted" and "-37" in row["run_value"]

    def test_all_models(self, synth: dict[str, pl.DataFrame]) -> None:
        """ "Lowers CAR for every model" holds exactly when every paired difference is negative."""
        tests = synth["paired_tests"]
        mask = (pl.col("family") == "pipeline_ablation") & (pl.col("comparison") == "hybrid+rewrite+rerank_vs_hybrid")
        lower = tests.with_columns(diff=pl.when(mask).then(-pl.col("diff").abs() - 0.01).otherwise(pl.col("diff")))
        assert (
            by_id(claims.check({**synth, "paired_tests": lower}, NATIVE, {}))["rewrite_rerank_lowers_car"]["verdict"]
            == "supported"
        )
        one_up = lower.with_columns(
            diff=pl.when(mask & (pl.col("model") == "syn-00")).then(0.1).otherwise(pl.col("diff"))
        )
        row = by_id(claims.check({**synth, "paired_tests": one_up}, NATIVE, {}))["rewrite_rerank_lowers_car"]
        assert row["verdict"] == "contradicted" and row["run_value"].startswith("9 of 10")

    def test_tiny_run(self, tiny: dict[str, pl.DataFrame]) -> None:
        """One configuration and 5 unanswerable questions support nothing; each claim says why."""
        table = claims.check(tiny, claims.Context(), claims.reported_facts(projects.REPO))
        assert set(table["verdict"]) == {"not testable"} and table["reason"].str.len_chars().min() > 0
        rows = by_id(table)
        assert rows["rag_raises_car_sig"]["reason"].startswith("n too small: 5 paired questions")
        assert rows["k10_lowers_car"]["reason"] == "one k only (answer.k_sweep is empty)"
        assert rows["car_total_params"]["reason"] == "n too small: 1 model; the test needs 5"

    def test_no_input(self) -> None:
        """Without judged responses every claim is not testable with the analysis's reason."""
        table = claims.check({}, claims.Context(no_input="no judged.parquet"), {})
        assert set(table["verdict"]) == {"not testable"} and set(table["reason"]) == {"no judged.parquet"}


class TestPaperValue:
    def test_every_claim_reported(self) -> None:
        """Every claim's paper value is filled from params/paper_reported.yaml."""
        reported = claims.reported_facts(projects.REPO)
        values = [claims.paper_value(c.paper, reported) for c in claims.CLAIMS]
        assert not [v for v in values if v.startswith("not reported")]
        assert claims.paper_value(claims.CLAIMS[1].paper, reported) == "38 of 40 up, 0 down"

    def test_missing(self) -> None:
        """A missing reported value says which key is missing."""
        assert claims.paper_value("{nope}%", {}) == "not reported (nope missing from params/paper_reported.yaml)"

    def test_rho_format(self) -> None:
        """Correlations print signed with two decimals."""
        value = claims.paper_value("rho={r:+.2f}", {"r": {"value": 0.6}})
        assert value == "rho=+0.60"


class TestSentenceReason:
    def test_refuses_below_small_n(self) -> None:
        """A comparative sentence from fewer items than the small-n rule asks for is refused."""
        why = claims.sentence_reason("its reliability is higher (+16.7 points)", n=4, p=0.01, min_n=6, alpha=0.05)
        assert why.startswith("refused: 'higher' states a difference") and "n = 4 is below" in why

    def test_refuses_not_significant(self) -> None:
        """A comparative sentence whose test has p >= alpha is refused, as is one without a test."""
        assert "p = 0.65" in claims.sentence_reason("the most reliable", n=36, p=0.65, min_n=6, alpha=0.05)
        assert "no test" in claims.sentence_reason("retrieval leaves it lower", n=36, p=None, min_n=6, alpha=0.05)

    def test_accepts(self) -> None:
        """A tested, significant difference on enough items, or a sentence with no comparative word, passes."""
        assert claims.sentence_reason("its reliability is higher", n=36, p=0.01, min_n=6, alpha=0.05) == ""
        assert claims.sentence_reason("reliability shifts by +16.7 points", n=4, p=None, min_n=6, alpha=0.05) == ""
