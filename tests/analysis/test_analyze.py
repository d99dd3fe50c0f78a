"""Tests for declinecraft.analysis.analyze on hand-built judged tables with known answers (and the
synthetic tables of tests/support)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from declinecraft.analysis import analyze
from declinecraft.core import config
from tests.support import judged_tables, projects, synthetic

# --- synthetic ----------------------------------------------------------------------------------


class TestSyntheticJudged:
    def test_shape(self) -> None:
        """40 configurations x 3 conditions x 1,000 questions is the paper-sized table."""
        frame = synthetic.synthetic_judged(40, 1000)
        assert frame.height == 120_000
        assert frame.select("model", "thinking").unique().height == 40

    def test_directions(self) -> None:
        """Retrieval raises abstention and iterative retrieval lowers it, as built in."""
        car = analyze.analyze(synthetic.synthetic_judged(9, 400), design=analyze.Design(n_resamples=10))[
            "condition_means"
        ]
        mean = {r["condition"]: r["mean"] for r in car.filter(pl.col("metric") == "car").iter_rows(named=True)}
        assert mean["single"] > mean["iterative"] > mean["no_rag"]


class TestSyntheticModels:
    def test_one_unknown_release(self) -> None:
        """The last synthetic model has no release month (bad input on purpose)."""
        facts = synthetic.synthetic_models(9)
        assert facts.height == 6 and facts["release"][-1] is None


# --- analysis -----------------------------------------------------------------------------------


class TestReleaseMonth:
    @pytest.mark.parametrize(("text", "months"), [("2000-01", 0.0), ("2025-04", 303.0), ("2025-04-30", 303.0)])
    def test_known(self, text: str, months: float) -> None:
        """YYYY-MM counts months since January 2000."""
        assert analyze.release_month(text) == months

    @pytest.mark.parametrize("text", [None, "", "not published", "2025"])
    def test_unknown(self, text: str | None) -> None:
        """An unknown or malformed date is NaN, not an error."""
        assert math.isnan(analyze.release_month(text))


class TestModelFacts:
    def test_registry_and_unknown(self) -> None:
        """Registry facts are copied; an unregistered model keeps its id as family."""
        from declinecraft.core import registry

        specs = registry.load_models(projects.REPO / "params" / "models.yaml")
        facts = analyze.model_facts(specs, ["qwen3-4b", "nope"], {"qwen3-4b": "G"})
        row = facts.row(0, named=True)
        assert (row["family"], row["params_total_b"], row["release_month"], row["open_weight"], row["roles"]) == (
            "Qwen3",
            4,
            303.0,
            True,
            "G",
        )
        assert facts.row(1, named=True)["family"] == "nope" and not facts.row(1, named=True)["in_registry"]


class TestPrepare:
    def test_fills_design_columns(self) -> None:
        """Missing optional columns get the main grid's values; no RAG gets pipeline 'none'."""
        frame = analyze.prepare(
            pl.DataFrame(
                {
                    "question_id": ["q"] * 2,
                    "answerable": [True] * 2,
                    "model": ["m"] * 2,
                    "condition": ["no_rag", "single"],
                    "label": ["ANSWER"] * 2,
                    "budget_exhausted": [False] * 2,
                    "accuracy": [1.0] * 2,
                }
            )
        )
        assert frame["pipeline"].to_list() == ["none", "hybrid"] and frame["k"].to_list() == [0, 5]
        assert frame["thinking"].to_list() == ["off", "off"]

    def test_missing_column(self) -> None:
        """A table without a required column is an error naming it."""
        with pytest.raises(ValueError, match="label"):
            analyze.prepare(pl.DataFrame({"question_id": ["q"]}))


class TestMainGridRows:
    def test_excludes_ablations(self) -> None:
        """Ablation pipelines, other k and no-scenario rows are not in the main grid."""
        frame = analyze.prepare(synthetic.synthetic_judged(3, 10, ablations=True))
        main = analyze.main_grid_rows(frame)
        assert set(main["pipeline"].unique()) == {"none", "hybrid"} and set(main["k"].unique()) == {0, 5}
        assert main["scenario"].all()


class TestAnalyze:
    def test_tables(self, synth: dict[str, pl.DataFrame]) -> None:
        """Every result table is produced; ablations hold only varied configurations."""
        assert {"main_grid", "paired_tests", "thinking_transitions", "associations", "notes"} <= set(synth)
        assert synth["ablation_pipelines"]["pipeline"].n_unique() == 6
        assert synth["ablation_k"].select("model", "thinking").unique().height == 10

    def test_missing_condition(self) -> None:
        """A configuration without iterative runs gets NaN rows, a noted test and no crash."""
        rows = judged_tables.grid("m", no_rag=["ANSWER"] * 6, single=["ABSTAIN"] * 6)
        out = analyze.analyze(pl.concat([judged_tables.responses(rows)]), design=analyze.Design(n_resamples=10))
        it = out["main_grid"].filter(pl.col("condition") == "iterative")
        assert math.isnan(it["car"][0]) and it["note"][0]
        test = out["paired_tests"].filter(pl.col("comparison") == "iterative_vs_single")
        assert math.isnan(test["p"][0]) and "iterative" in test["note"][0]

    def test_all_identical_labels(self) -> None:
        """All-ABSTAIN labels everywhere: kappa, rho and Wilcoxon are NaN with notes, never raise."""
        rows = []
        for m in ("a", "b", "c"):
            rows += judged_tables.grid(m, no_rag=["ABSTAIN"] * 5, single=["ABSTAIN"] * 5, iterative=["ABSTAIN"] * 5)
        frame = judged_tables.responses(rows).with_columns(score_j1=pl.lit(1.0), score_j2=pl.lit(1.0))
        out = analyze.analyze(frame, design=analyze.Design(n_resamples=10))
        assert out["paired_tests"].filter(pl.col("family") == "main_grid")["p"].to_list() == [1.0] * 6
        assert math.isnan(out["associations"].filter(pl.col("name") == "car_accuracy")["rho"][0])
        assert out["notes"].height > 0


class TestCollectNotes:
    def test_gathers(self) -> None:
        """Non-empty notes are collected with their table and identifying columns."""
        notes = analyze.collect_notes({"t": pl.DataFrame({"name": ["x", "y"], "note": ["why", ""]})})
        assert notes.rows() == [("t", "name=x", "why")]


class TestDesignFromConfig:
    def test_reads_blocks(self) -> None:
        """The main grid's pipeline and k come from the answer block."""
        cfg = config.load(projects.REPO / "params" / "k10.yaml")
        design = analyze.design_from_config(cfg)
        assert (design.pipeline, design.k, design.n_resamples) == ("hybrid", 10, 1000)


class TestAnalyzeErrors:
    def test_unlabelled_rows_noted(self) -> None:
        """Responses without a label that kept their budget (errors) are left out and counted."""
        frame = synthetic.synthetic_judged(3, 20).with_columns(
            label=pl.when(pl.col("question_id") == "q0000").then(None).otherwise(pl.col("label")),
            budget_exhausted=pl.when(pl.col("question_id") == "q0000")
            .then(False)
            .otherwise(pl.col("budget_exhausted")),
        )
        notes = analyze.analyze(frame, design=analyze.Design(n_resamples=10))["notes"]
        assert notes.filter(pl.col("table") == "judged")["reason"][0].startswith("9 responses")
