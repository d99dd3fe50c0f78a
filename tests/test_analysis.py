"""Tests of the analysis part (analyze, paired, models, judges, annotation, inputs, results,
paper_tables, stage): hand-built judged tables with known answers."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from tests.support import synthetic

from declinecraft.analysis import analyze as analysis
from declinecraft.analysis import annotation as analysis_annotation
from declinecraft.analysis import examples as analysis_examples
from declinecraft.analysis import inputs as analysis_inputs
from declinecraft.analysis import judges as analysis_judges
from declinecraft.analysis import models as analysis_models
from declinecraft.analysis import paired as analysis_paired
from declinecraft.analysis import paper_tables
from declinecraft.analysis import results as analysis_results
from declinecraft.analysis import stage as analysis_stage
from declinecraft.core import config, stats
from declinecraft.evaluation import metrics

ROOT = Path(__file__).resolve().parents[1]


def responses(rows: list[tuple]) -> pl.DataFrame:
    """A judged frame from (model, thinking, condition, question_id, answerable, label, accuracy) rows."""
    frame = pl.DataFrame(
        rows,
        schema=["model", "thinking", "condition", "question_id", "answerable", "label", "accuracy"],
        orient="row",
        schema_overrides={"label": pl.String, "accuracy": pl.Float64},
    )
    return analysis.prepare(frame.with_columns(budget_exhausted=pl.col("label").is_null()))


def unanswerable(model: str, condition: str, labels: list[str | None], thinking: str = "off") -> list[tuple]:
    return [(model, thinking, condition, f"u{i}", False, lab, None) for i, lab in enumerate(labels)]


def answerable(
    model: str, condition: str, n: int, thinking: str = "off", label: str = "ANSWER", acc: float = 1.0
) -> list[tuple]:
    return [(model, thinking, condition, f"a{i}", True, label, acc) for i in range(n)]


def grid(model: str = "m", **labels: list[str]) -> list[tuple]:
    rows = []
    for condition, labs in labels.items():
        rows += unanswerable(model, condition, labs) + answerable(model, condition, 4)
    return rows


@pytest.fixture(scope="module")
def synth() -> dict[str, pl.DataFrame]:
    """Every table of a 15-configuration synthetic run with ablations."""
    judged = synthetic.synthetic_judged(15, 150, seed=1, ablations=True)
    facts = synthetic.synthetic_models(15, seed=1)
    return analysis.analyze(judged, facts, analysis.Design(n_resamples=200))


def project(tmp_path: Path, judged: pl.DataFrame | None) -> config.RunConfig:
    """A throwaway project with the real params and, optionally, a judged table for the default run."""
    (tmp_path / "params").mkdir()
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for name in ("default.yaml", "models.yaml", "paper_reported.yaml"):
        shutil.copy(ROOT / "params" / name, tmp_path / "params" / name)
    cfg = config.load(tmp_path / "params" / "default.yaml")
    if judged is not None:
        cfg.stage_dir("judge").mkdir(parents=True)
        judged.write_parquet(cfg.stage_dir("judge") / "judged.parquet")
    return cfg


# --- synthetic ----------------------------------------------------------------------------------


class TestSyntheticJudged:
    def test_shape(self) -> None:
        """40 configurations x 3 conditions x 1,000 questions is the paper-sized table."""
        frame = synthetic.synthetic_judged(40, 1000)
        assert frame.height == 120_000
        assert frame.select("model", "thinking").unique().height == 40

    def test_directions(self) -> None:
        """Retrieval raises abstention and iterative retrieval lowers it, as built in."""
        car = analysis.analyze(synthetic.synthetic_judged(9, 400), design=analysis.Design(n_resamples=10))[
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
        assert analysis.release_month(text) == months

    @pytest.mark.parametrize("text", [None, "", "not published", "2025"])
    def test_unknown(self, text: str | None) -> None:
        """An unknown or malformed date is NaN, not an error."""
        assert math.isnan(analysis.release_month(text))


class TestModelFacts:
    def test_registry_and_unknown(self) -> None:
        """Registry facts are copied; an unregistered model keeps its id as family."""
        from declinecraft.core import registry

        specs = registry.load_models(ROOT / "params" / "models.yaml")
        facts = analysis.model_facts(specs, ["qwen3-4b", "nope"], {"qwen3-4b": "G"})
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
        frame = analysis.prepare(
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
            analysis.prepare(pl.DataFrame({"question_id": ["q"]}))


class TestMainGridRows:
    def test_excludes_ablations(self) -> None:
        """Ablation pipelines, other k and no-scenario rows are not in the main grid."""
        frame = analysis.prepare(synthetic.synthetic_judged(3, 10, ablations=True))
        main = analysis.main_grid_rows(frame)
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
        rows = grid("m", no_rag=["ANSWER"] * 6, single=["ABSTAIN"] * 6)
        out = analysis.analyze(pl.concat([responses(rows)]), design=analysis.Design(n_resamples=10))
        it = out["main_grid"].filter(pl.col("condition") == "iterative")
        assert math.isnan(it["car"][0]) and it["note"][0]
        test = out["paired_tests"].filter(pl.col("comparison") == "iterative_vs_single")
        assert math.isnan(test["p"][0]) and "iterative" in test["note"][0]

    def test_all_identical_labels(self) -> None:
        """All-ABSTAIN labels everywhere: kappa, rho and Wilcoxon are NaN with notes, never raise."""
        rows = []
        for m in ("a", "b", "c"):
            rows += grid(m, no_rag=["ABSTAIN"] * 5, single=["ABSTAIN"] * 5, iterative=["ABSTAIN"] * 5)
        frame = responses(rows).with_columns(score_j1=pl.lit(1.0), score_j2=pl.lit(1.0))
        out = analysis.analyze(frame, design=analysis.Design(n_resamples=10))
        assert out["paired_tests"].filter(pl.col("family") == "main_grid")["p"].to_list() == [1.0] * 6
        assert math.isnan(out["associations"].filter(pl.col("name") == "car_accuracy")["rho"][0])
        assert out["notes"].height > 0


class TestCollectNotes:
    def test_gathers(self) -> None:
        """Non-empty notes are collected with their table and identifying columns."""
        notes = analysis.collect_notes({"t": pl.DataFrame({"name": ["x", "y"], "note": ["why", ""]})})
        assert notes.rows() == [("t", "name=x", "why")]


class TestRolesOf:
    def test_default_run(self) -> None:
        """The default run's 1.5B model generates, verifies its own questions and judges; the 0.5B
        scores accuracy (J is not marked on the verifier, as in the paper's Table 2)."""
        cfg = config.load(ROOT / "params" / "default.yaml")
        marks = analysis_inputs.roles_of(cfg)
        assert marks["qwen2.5-coder-1.5b"] == "GVR" and marks["qwen2.5-coder-0.5b"] == "J"


class TestDesignFromConfig:
    def test_reads_blocks(self) -> None:
        """The main grid's pipeline and k come from the answer block."""
        cfg = config.load(ROOT / "params" / "k10.yaml")
        design = analysis.design_from_config(cfg)
        assert (design.pipeline, design.k, design.n_resamples) == ("hybrid", 10, 1000)


class TestStageInputs:
    def test_extra_runs(self, tmp_path: Path) -> None:
        """Extra runs' judged tables are listed next to the run's own."""
        cfg = project(tmp_path, None)
        assert set(analysis_inputs.stage_inputs(cfg)) == {"judged"}


class TestLoadJudged:
    def test_missing(self, tmp_path: Path) -> None:
        """No judged table gives None and a reason naming the file."""
        frame, reason = analysis_inputs.load_judged(project(tmp_path, None))
        assert frame is None and "judged.parquet" in reason


class TestStageRun:
    def test_writes_tables(self, tmp_path: Path) -> None:
        """A judged table gives every CSV, the paper tables and status ok, all in the result."""
        cfg = project(tmp_path, synthetic.synthetic_judged(6, 60))
        result = analysis_stage.run(cfg)
        out = cfg.run_dir() / "07_analysis"
        status = json.loads((out / "status.json").read_text())
        assert status["status"] == "ok" and result.ok and result.folder == out and result.reason == ""
        assert (
            (out / "main_grid.csv").is_file()
            and (out / "table02.csv").is_file()
            and (out / "annotation_sample.html").is_file()
        )
        assert status["tables"] == sorted(result.tables) and result.rows == status["rows"] == 6 * 3 * 60
        assert {f"{name}.csv" for name in result.tables} <= set(result.files())
        assert isinstance(result.paper_tables["table02"], pl.DataFrame) and isinstance(
            result.paper_tables["table10"], str
        )
        assert result.annotators == () and result.tables["annotation_sample"].height > 0
        means, counts, assoc = result.headline()
        assert set(means["metric"]) == {"car", "attempt", "accuracy"} and counts.height and assoc.height
        assert result.explain() is result.tables["notes"]

    def test_no_input(self, tmp_path: Path) -> None:
        """Without a judged table the stage records why and still writes the facts, Tables 11 and 12
        and the run health (what it could not count named in its ``missing`` rows)."""
        cfg = project(tmp_path, None)
        result = analysis_stage.run(cfg)
        out = cfg.run_dir() / "07_analysis"
        assert json.loads((out / "status.json").read_text())["status"] == "no_input"
        assert (out / "table11.csv").is_file() and (out / "table12.csv").is_file() and (out / "facts.csv").is_file()
        assert result.status == "no_input" and not result.ok and "judged.parquet" in result.reason
        assert sorted(result.tables) == ["facts", "run_health"] and result.rows == 0
        assert "missing" in result.tables["run_health"]["measure"].to_list() and (out / "run_health.csv").is_file()
        assert result.headline() == [] and result.explain() == result.reason

    def test_frozen(self, tmp_path: Path) -> None:
        """The result cannot be changed after the stage returns it."""
        result = analysis_stage.run(project(tmp_path, None))
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.status = "ok"  # type: ignore[misc]

    def test_reads_annotators(self, tmp_path: Path) -> None:
        """Annotators' labels in data/annotations/<run>/ give Table 10 (human_agreement)."""
        cfg = project(tmp_path, synthetic.synthetic_judged(6, 60))
        sample = analysis_stage.run(cfg).tables["annotation_sample"]
        folder = analysis_annotation.annotation_dir(cfg)
        folder.mkdir(parents=True)
        for name, flip in (("ann1", False), ("ann2", True)):
            rows = [
                f"{item},{'DENY' if flip else (label or '')},{score if score is not None else ''}"
                for item, label, score in zip(
                    sample["item_id"], sample["judge_label"], sample["judge_score"], strict=True
                )
            ]
            (folder / f"{name}.csv").write_text("item_id,label,score\n" + "\n".join(rows) + "\n")
        result = analysis_stage.run(cfg)
        assert result.annotators == ("ann1", "ann2") and result.tables["human_agreement"].height
        assert isinstance(result.paper_tables["table10"], pl.DataFrame)


def diagnostics_frame() -> pl.DataFrame:
    """``05_answer/retrieval.parquet`` of a run with a k sweep (hybrid) and a second pipeline."""
    rows = []
    for pipeline, k, target, scen in (
        ("hybrid", 1, 0.3, 0.2),
        ("hybrid", 5, 0.8, 0.6),
        ("hybrid", 10, 0.9, 0.7),
        ("bm25", 5, 0.7, 0.4),
    ):
        for metric, rate in (("hit_at_k", target), ("scenario_overlap", scen)):
            rows.append(
                dict(
                    metric=metric,
                    pipeline=pipeline,
                    k=k,
                    depth=k,
                    scenario=True,
                    n=10,
                    hits=round(10 * rate),
                    rate=rate,
                )
            )
    rows.append(
        dict(metric="scenario_overlap", pipeline="hybrid", k=5, depth=5, scenario=False, n=10, hits=1, rate=0.1)
    )
    return pl.DataFrame(rows)


class TestRetrievalTables:
    def test_by_k_and_pipeline(self) -> None:
        """Hit rates per k of the main pipeline (Figure 21) and scenario overlap per pipeline at the
        main k (Figure 24), questions with their scenario only."""
        found = analysis_inputs.retrieval_tables(diagnostics_frame(), pipeline="hybrid", k=5)
        by_k = found["retrieval_k"]
        assert by_k.select("k", "depth", "target_hit", "scenario_hit").rows() == [
            (1, 1, 0.3, 0.2),
            (5, 5, 0.8, 0.6),
            (10, 10, 0.9, 0.7),
        ]
        assert found["scenario_overlap"].select("pipeline", "share").rows() == [("bm25", 0.4), ("hybrid", 0.6)]

    def test_read_from_answer_stage(self, tmp_path: Path) -> None:
        """The analysis stage reads them from the answer stage's retrieval.parquet."""
        cfg = project(tmp_path, None)
        cfg.stage_dir("answer").mkdir(parents=True)
        diagnostics_frame().write_parquet(cfg.stage_dir("answer") / "retrieval.parquet")
        found = analysis_inputs.upstream_tables(cfg)
        assert found["retrieval_k"]["k"].to_list() == [1, 5, 10] and found["scenario_overlap"].height == 2


class TestWithFormatLosses:
    def test_split(self) -> None:
        """Drafts lost at the facts or question step are "lost to format"; scenario losses apart."""
        audit = pl.DataFrame({"generator": ["g1", "g2"], "lost_to_format": [3, 0]})
        drafts = pl.DataFrame(
            {
                "generator": ["g1", "g1", "g1", "g1", "g2"],
                "status": ["lost_to_format", "lost_to_format", "lost_to_format", "drafted", "no_target"],
                "step": ["scenario", "facts", "question", "", "target"],
            }
        )
        out = analysis_inputs.with_format_losses(audit, drafts)
        assert out.select("generator", "lost_to_format", "lost_at_scenario").rows() == [("g1", 2, 1), ("g2", 0, 0)]


class TestWriteCsv:
    def test_round_trip(self, tmp_path: Path) -> None:
        """NaN and booleans survive a write and read."""
        frame = pl.DataFrame({"x": [1.0, float("nan")], "b": [True, False]})
        analysis_results.write_csv(frame, tmp_path / "t.csv")
        back = analysis_results.read_tables(tmp_path)["t"]
        assert back["b"].to_list() == [True, False] and math.isnan(back["x"][1])


class TestReadTables:
    def test_empty_folder(self, tmp_path: Path) -> None:
        """A folder without CSVs gives no tables."""
        assert analysis_results.read_tables(tmp_path) == {}


# --- analysis_paired ----------------------------------------------------------------------------


class TestPairedAbstention:
    def test_mcnemar_counts(self) -> None:
        """12 abstentions lost and none gained: p = 2 * 0.5**12."""
        rows = unanswerable("m", "single", ["ABSTAIN"] * 12 + ["ANSWER"] * 3) + unanswerable(
            "m", "iterative", ["DENY"] * 12 + ["ANSWER"] * 3
        )
        out = analysis_paired.paired_abstention(
            responses(rows), group=["model"], column="condition", base="single", other="iterative"
        )
        row = out.row(0, named=True)
        assert (row["lost"], row["gained"], row["n_pairs"]) == (12, 0, 15)
        assert row["p"] == pytest.approx(2 * 0.5**12) and row["direction"] == "decrease"

    def test_lenient(self) -> None:
        """Under the lenient rule DENY counts as abstaining, so nothing is lost."""
        rows = unanswerable("m", "single", ["ABSTAIN"] * 5) + unanswerable("m", "iterative", ["DENY"] * 5)
        out = analysis_paired.paired_abstention(
            responses(rows), group=["model"], column="condition", base="single", other="iterative", lenient=True
        )
        assert out["p"][0] == 1.0 and out["note"][0] == "no discordant pairs"

    def test_budget_pairs_left_out(self) -> None:
        """A budget-exhausted response on either side drops the pair."""
        rows = unanswerable("m", "single", ["ABSTAIN", None, "ABSTAIN"]) + unanswerable(
            "m", "iterative", ["ANSWER", "ANSWER", None]
        )
        out = analysis_paired.paired_abstention(
            responses(rows), group=["model"], column="condition", base="single", other="iterative"
        )
        assert out["n_pairs"][0] == 1 and out["lost"][0] == 1


class TestWithBh:
    def test_per_family(self) -> None:
        """q values come from stats.benjamini_hochberg within each family."""
        table = pl.DataFrame({"family": ["a", "a", "b"], "p": [0.01, 0.04, 0.04]})
        out = analysis_paired.with_bh(table, alpha=0.05)
        assert out["q"].to_list() == pytest.approx([0.02, 0.04, 0.04])
        assert out["significant"].to_list() == [True, True, True]


class TestMainGridTests:
    def test_thinking_in_family(self) -> None:
        """Thinking on vs off joins the main-grid family when a model has both settings."""
        rows = []
        for thinking, labs in (("off", ["ABSTAIN"] * 8), ("on", ["DENY"] * 8)):
            for cond in ("no_rag", "single", "iterative"):
                rows += unanswerable("m", cond, labs, thinking) + answerable("m", cond, 2, thinking)
        out = analysis_paired.main_grid_tests(responses(rows))
        think = out.filter(pl.col("comparison") == "thinking_on_vs_off")
        assert think.height == 3 and set(out["family"]) == {"main_grid"}
        assert (think["lost"] == 8).all()


class TestAblationTests:
    def test_absent_ablation(self) -> None:
        """A run without the ablation gives an empty table with the paired columns."""
        out = analysis_paired.ablation_tests(pl.DataFrame(), family="x", column="pipeline", base="hybrid")
        assert out.height == 0 and out.columns == list(analysis_paired.PAIRED_COLUMNS)

    def test_pipelines(self, synth: dict[str, pl.DataFrame]) -> None:
        """Five alternative pipelines against hybrid for each of the ablation configurations."""
        pipes = synth["paired_tests"].filter(pl.col("family") == "pipeline_ablation")
        assert pipes.height == 5 * 10 and pipes["q"].is_not_nan().all()


class TestThinkingTransitionsTable:
    def test_counts(self) -> None:
        """Per model and condition: the transition counts of stats.thinking_transitions."""
        off = ["ABSTAIN"] * 6 + ["DENY"] * 2 + ["ANSWER"]
        on = ["DENY"] * 5 + ["ANSWER"] + ["ABSTAIN", "DENY", "ABSTAIN"]
        rows = unanswerable("m", "no_rag", off, "off") + unanswerable("m", "no_rag", on, "on")
        out = analysis_paired.thinking_transitions_table(responses(rows)).row(0, named=True)
        assert (out["a_to_d"], out["d_to_a"], out["a_to_x"], out["x_to_a"], out["n"]) == (5, 1, 1, 1, 9)
        assert out["net_shift"] == pytest.approx(4 / 9)

    def test_no_pairs(self) -> None:
        """Without thinking pairs the table is empty but has every column."""
        out = analysis_paired.thinking_transitions_table(responses(unanswerable("m", "no_rag", ["ABSTAIN"])))
        assert out.height == 0 and "sig_ad" in out.columns


class TestSignificanceCounts:
    def test_counts(self) -> None:
        """Significant increases and decreases are counted per comparison."""
        table = pl.DataFrame(
            {
                "family": ["f"] * 3,
                "comparison": ["c"] * 3,
                "p": [0.01, 0.01, 0.5],
                "significant": [True, True, False],
                "direction": ["increase", "decrease", "increase"],
            }
        )
        row = analysis_paired.significance_counts(table).row(0, named=True)
        assert (row["n_tests"], row["n_increase"], row["n_decrease"]) == (3, 1, 1)


# --- analysis_models ----------------------------------------------------------------------------


class TestConditionMeans:
    def test_t_interval(self) -> None:
        """Means over configurations carry stats.t_interval."""
        grid_ = pl.DataFrame(
            {"condition": ["single"] * 3, **{m: [0.2, 0.4, 0.6] for m in analysis_models.MEAN_METRICS}}
        )
        row = analysis_models.condition_means(grid_).filter(pl.col("metric") == "car").row(0, named=True)
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
        out = analysis_models.model_differences(grid_, pl.DataFrame())
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
        out = analysis_models.thinking_by_family(grid_)
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
        assert analysis_models.model_points(grid_)["car"].to_list() == [2.0, 3.0]


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
        out = analysis_models.associations(grid_)
        assert out.filter(pl.col("name") == "car_total_params")["rho"][0] == pytest.approx(1.0)
        release = out.filter(pl.col("name") == "car_release_month").row(0, named=True)
        assert release["n"] == 5 and "without release_month" in release["note"]


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
        out = analysis_models.frontier_table(grid_)
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
        out = analysis_models.direction_counts(grid_)
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
        assert analysis_models.family_label_shares(grid_)["deny_gt_abstain"].to_list() == [True]


class TestLeakage:
    def test_deny_scores_zero(self) -> None:
        """Premise denials count as not attempted and score 0 on the unanswerable questions."""
        rows = [
            ("m", "off", "no_rag", f"u{i}", False, lab, acc)
            for i, (lab, acc) in enumerate([("ANSWER", 1.0), ("DENY", 1.0), ("ABSTAIN", 0.0), ("ANSWER", 0.0)])
        ]
        facts = pl.DataFrame({"model": ["m"], "family": ["F"]})
        row = analysis_models.leakage(responses(rows), facts, by=("family",), n_resamples=20).row(0, named=True)
        assert row["accuracy"] == pytest.approx(0.25) and row["attempt"] == pytest.approx(0.5) and row["runs"] == 1

    def test_counts_unscored(self) -> None:
        """An answer without a judge score is left out of the mean and counted in ``dropped``
        (abstentions and denials need no score)."""
        labels = [("ANSWER", 1.0), ("ANSWER", None), ("ANSWER", 0.0), ("DENY", None), ("ABSTAIN", None)]
        rows = [("m", "off", "no_rag", f"u{i}", False, lab, acc) for i, (lab, acc) in enumerate(labels)]
        facts = pl.DataFrame({"model": ["m"], "family": ["F"]})
        row = analysis_models.leakage(responses(rows), facts, by=("model", "thinking"), n_resamples=20).row(
            0, named=True
        )
        assert (row["n"], row["dropped"]) == (5, 1) and row["accuracy"] == pytest.approx(0.25)


# --- analysis_judges ----------------------------------------------------------------------------


def scored(a: list[float], b: list[float], c: list[float] | None = None) -> pl.DataFrame:
    rows = answerable("m", "single", len(a))
    frame = responses(rows).with_columns(
        pl.Series("score_a", a, dtype=pl.Float64), pl.Series("score_b", b, dtype=pl.Float64)
    )
    return frame.with_columns(pl.Series("score_c", c, dtype=pl.Float64)) if c is not None else frame


class TestJudgeColumns:
    def test_prefix(self) -> None:
        """Numeric columns with the prefix are the judges."""
        assert analysis_judges.judge_columns(scored([1.0], [0.0])) == ["score_a", "score_b"]


class TestJudgeAgreement:
    def test_identical(self) -> None:
        """Identical judges agree exactly with kappa 1; Fleiss needs three judges."""
        out = analysis_judges.judge_agreement(scored([0, 0.5, 1, 1], [0, 0.5, 1, 1]), ["score_a", "score_b"])
        pair, fleiss = out.row(0, named=True), out.row(1, named=True)
        assert (pair["exact"], pair["kappa"], pair["mean_diff"]) == (1.0, 1.0, 0.0)
        assert math.isnan(fleiss["kappa"]) and "three" in fleiss["note"]

    def test_rule_scored_excluded(self) -> None:
        """Premise denials and empty responses got their 0 by rule: left out of the rows and counted."""
        frame = scored([1.0, 0.5, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]).with_columns(
            label=pl.Series(["ANSWER", "ANSWER", "DENY", "ANSWER", "ANSWER"]),
            label_source=pl.Series(["llm", "llm", "llm", "empty", "llm"]),
        )
        pair = analysis_judges.judge_agreement(frame, ["score_a", "score_b"]).row(0, named=True)
        assert (pair["rows"], pair["excluded"]) == (3, 2) and pair["exact"] == pytest.approx(2 / 3)

    def test_single_score(self) -> None:
        """All-identical scores: kappa undefined (NaN) with a note, not an error."""
        out = analysis_judges.judge_agreement(
            scored([1.0] * 4, [1.0] * 4, [1.0] * 4), ["score_a", "score_b", "score_c"]
        )
        assert out["kappa"].is_nan().all() and out["note"].str.contains("undefined").all()


class TestJudgeRunAccuracy:
    def test_per_judge(self) -> None:
        """Each judge's accuracy per run, abstentions scoring 0."""
        out = analysis_judges.judge_run_accuracy(scored([1, 0, 1, 1], [0, 0, 1, 1]), ["score_a", "score_b"], ["model"])
        assert out.row(0, named=True)["score_a"] == pytest.approx(0.75) and out.row(0, named=True)[
            "score_b"
        ] == pytest.approx(0.5)


class TestJudgeLeniency:
    def test_offsets(self) -> None:
        """Leniency is each judge's mean minus the mean of all judges."""
        out = analysis_judges.judge_leniency(scored([1, 1], [0, 0]), ["score_a", "score_b"])
        assert out["leniency"].to_list() == pytest.approx([0.5, -0.5])


class TestSelfPreferenceTable:
    def test_matches_stats(self) -> None:
        """The estimate is stats.self_preference on the long scores."""
        rows = answerable("own", "single", 4) + answerable("other", "single", 4)
        frame = responses(rows).with_columns(
            family=pl.when(pl.col("model") == "own").then(pl.lit("F")).otherwise(pl.lit("G")),
            score_a=pl.Series([1.0, 1, 1, 1, 0, 0, 0, 0]),
            score_b=pl.Series([0.0, 0, 0, 0, 0, 0, 0, 0]),
        )
        out = analysis_judges.self_preference_table(frame, {"score_a": "F", "score_b": None}, n_resamples=50)
        assert out.row(0, named=True)["estimate"] == pytest.approx(1.0)
        assert "no evaluated model" in out.row(1, named=True)["note"]


class TestAnnotationSample:
    def test_balanced(self, synth: dict[str, pl.DataFrame]) -> None:
        """70 + 30 items: 24/23/23 over labels, 10 per accuracy bin, no duplicates."""
        frame = analysis.main_grid_rows(analysis.prepare(synthetic.synthetic_judged(6, 200)))
        sample = analysis_judges.annotation_sample(frame, seed=3)
        part1 = sample.filter(pl.col("part") == 1)
        assert sorted(part1.group_by("judge_label").len()["len"].to_list()) == [23, 23, 24]
        assert sample.filter(pl.col("part") == 2).height == 30
        assert sample["item_id"].n_unique() == 100

    def test_short_strata(self) -> None:
        """Too few answers give fewer items, never duplicates."""
        frame = responses(unanswerable("m", "single", ["ABSTAIN", "DENY"]))
        assert analysis_judges.annotation_sample(frame).height == 2


class TestHumanAgreement:
    def test_perfect(self) -> None:
        """Annotators agreeing with each other and the judge give kappa 1 everywhere."""
        sample = pl.DataFrame(
            {
                "item_id": ["P1-1", "P1-2", "P1-3", "P2-1", "P2-2"],
                "part": [1, 1, 1, 2, 2],
                "judge_label": ["ABSTAIN", "DENY", "ANSWER", "ANSWER", "ANSWER"],
                "judge_score": [None, None, None, 0.0, 1.0],
            }
        )
        ann = pl.DataFrame(
            {
                "item_id": sample["item_id"],
                "label": ["ABSTAIN", "DENY", "ANSWER", None, None],
                "score": [None, None, None, 0.0, 1.0],
            }
        )
        out = analysis_judges.human_agreement(sample, {"x": ann, "y": ann}, n_resamples=20)
        assert out.filter(pl.col("measure") == "judge_human")["kappa"].to_list() == [1.0, 1.0]

    def test_one_annotator(self) -> None:
        """A single annotator: human-human is NaN with a note."""
        sample = pl.DataFrame(
            {
                "item_id": ["P1-1", "P1-2"],
                "part": [1, 1],
                "judge_label": ["ABSTAIN", "DENY"],
                "judge_score": [None, None],
            }
        )
        ann = pl.DataFrame({"item_id": ["P1-1", "P1-2"], "label": ["ABSTAIN", "DENY"]})
        out = analysis_judges.human_agreement(sample, {"x": ann}, n_resamples=10)
        row = out.filter((pl.col("part") == 1) & (pl.col("measure") == "human_human")).row(0, named=True)
        assert math.isnan(row["kappa"]) and "needs 2" in row["note"]


# --- analysis_annotation ------------------------------------------------------------------------


class TestSampleHtml:
    def test_hides_judge(self) -> None:
        """The annotators' page shows texts but neither model nor judge label."""
        sample = pl.DataFrame(
            {
                "item_id": ["P1-001"],
                "part": [1],
                "question": ["Q?"],
                "response": ["R <b>"],
                "reference": [None],
                "model": ["secret-model"],
                "judge_label": ["DENY"],
            }
        )
        page = analysis_annotation.sample_html(sample, "default")
        assert "R &lt;b&gt;" in page and "secret-model" not in page and "Download CSV" in page


class TestWriteSample:
    def test_files(self, tmp_path: Path) -> None:
        """CSV and HTML are written into the analysis folder."""
        cfg = project(tmp_path, None)
        sample = analysis_annotation.write_sample(cfg, synthetic.synthetic_judged(3, 80), tmp_path)
        assert sample.height == 100 and (tmp_path / "annotation_sample.html").is_file()


class TestAnnotationDir:
    def test_per_run(self, tmp_path: Path) -> None:
        """Annotator files live in data/annotations/<run>/."""
        assert analysis_annotation.annotation_dir(project(tmp_path, None)).parts[-2:] == ("annotations", "default")


class TestReadAnnotations:
    def test_reads_and_checks(self, tmp_path: Path) -> None:
        """Files are read by annotator name; a file without item_id is an error naming it."""
        cfg = project(tmp_path, None)
        folder = analysis_annotation.annotation_dir(cfg)
        folder.mkdir(parents=True)
        (folder / "ann1.csv").write_text("item_id,label,score\nP1-001,DENY,\nP2-001,,0.5\n")
        assert analysis_annotation.read_annotations(cfg)["ann1"]["score"].to_list() == [None, 0.5]
        (folder / "bad.csv").write_text("id,label\nx,DENY\n")
        with pytest.raises(ValueError, match="bad.csv"):
            analysis_annotation.read_annotations(cfg)


class TestLoadJudgedExtra:
    def test_extra_single_only(self, tmp_path: Path) -> None:
        """An extra run adds only its single-shot rows the run lacks (no double-counted no RAG)."""
        cfg = project(tmp_path, synthetic.synthetic_judged(3, 10))
        other = synthetic.synthetic_judged(3, 10).with_columns(
            pl.when(pl.col("condition") == "no_rag").then(None).otherwise(10).alias("k")
        )
        (cfg.run_dir("k10") / "06_judge").mkdir(parents=True)
        other.write_parquet(cfg.run_dir("k10") / "06_judge" / "judged.parquet")
        params = cfg.params_file.read_text() + "\n"
        cfg.params_file.write_text(params.replace("extra_runs: []", "extra_runs: [k10]"))
        frame, _ = analysis_inputs.load_judged(config.load(cfg.params_file))
        assert frame.height == 3 * 3 * 10 + 3 * 10


class TestAnalyzeErrors:
    def test_unlabelled_rows_noted(self) -> None:
        """Responses without a label that kept their budget (errors) are left out and counted."""
        frame = synthetic.synthetic_judged(3, 20).with_columns(
            label=pl.when(pl.col("question_id") == "q0000").then(None).otherwise(pl.col("label")),
            budget_exhausted=pl.when(pl.col("question_id") == "q0000")
            .then(False)
            .otherwise(pl.col("budget_exhausted")),
        )
        notes = analysis.analyze(frame, design=analysis.Design(n_resamples=10))["notes"]
        assert notes.filter(pl.col("table") == "judged")["reason"][0].startswith("9 responses")


# --- paper_tables -------------------------------------------------------------------------------


def published_row() -> pl.DataFrame:
    """Responses reproducing Table 2's first row: attempt 668/700, CAR 242/300."""
    q = [(f"a{i}", True, "ANSWER" if i < 668 else "ABSTAIN") for i in range(700)]
    q += [(f"u{i}", False, "ABSTAIN" if i < 242 else "DENY") for i in range(300)]
    frame = pl.DataFrame(q, schema=["question_id", "answerable", "label"], orient="row")
    return frame.with_columns(
        model=pl.lit("gemma-4-26b-a4b"),
        thinking=pl.lit("off"),
        condition=pl.lit("single"),
        budget_exhausted=pl.lit(False),
        accuracy=pl.lit(0.7),
    )


class TestOtherFamilyRerank:
    def rows(self) -> pl.DataFrame:
        """Three families F, G, H; judge a is of family F and scores F's answers 1, others 0.5."""
        parts = []
        for model, family, b in (("f1", "F", 0.2), ("g1", "G", 0.6), ("h1", "H", 1.0)):
            frame = responses(answerable(model, "single", 4)).with_columns(family=pl.lit(family))
            parts.append(frame.with_columns(score_a=pl.lit(1.0 if family == "F" else 0.5), score_b=pl.lit(b)))
        frame = pl.concat(parts)
        return frame.with_columns(accuracy=(pl.col("score_a") + pl.col("score_b")) / 2)

    def test_rerank(self) -> None:
        """Answers from F are rescored by b alone; the ranking of the three changes (rho 0.5)."""
        out = analysis_judges.other_family_rerank(
            self.rows(), {"score_a": "F", "score_b": "Other"}, ["model", "thinking"]
        )
        row = out.row(0, named=True)
        # full panel: f1 0.6, g1 0.55, h1 0.75; other families only: f1 0.2, g1 0.55, h1 0.75
        assert (row["n"], row["n_reduced"]) == (3, 1) and row["rho"] == pytest.approx(0.5)

    def test_one_family(self) -> None:
        """When every judge shares the answers' family nothing can be re-ranked: NaN and why."""
        frame = self.rows().with_columns(family=pl.lit("F"))
        row = analysis_judges.other_family_rerank(frame, {"score_a": "F", "score_b": "F"}, ["model"]).row(0, named=True)
        assert row["n_reduced"] == 0 and math.isnan(row["rho"]) and "nothing to re-rank" in row["note"]


class TestCompleteSweep:
    def test_full_only(self) -> None:
        """Only configurations run at every k of the ablation are kept."""
        frame = pl.DataFrame({"model": ["a", "a", "a", "b", "b"], "thinking": ["off"] * 5, "k": [1, 5, 10, 5, 10]})
        out = analysis_models.complete_sweep(frame, "k")
        assert out["model"].unique().to_list() == ["a"] and out.height == 3


class TestExampleRows:
    def frame(self, labels: dict[str, list[str]]) -> pl.DataFrame:
        rows = []
        for qid, labs in labels.items():
            for (model, condition), lab in zip(
                [("m1", "single"), ("m1", "no_rag"), ("m2", "single")], labs, strict=False
            ):
                rows.append((model, "off", condition, qid, False, lab, None))
        rows.append(("m1", "off", "single", "a0", True, "ANSWER", 1.0))
        frame = responses(rows)
        return frame.with_columns(
            question=pl.lit("Q ") + pl.col("question_id"),
            reference=pl.lit("ref"),
            response=pl.col("model") + pl.lit(" ") + pl.col("condition") + pl.lit(" ") + pl.col("label"),
        )

    def test_three_labels(self) -> None:
        """The question whose responses carry all three labels is chosen, single-shot first."""
        frame = self.frame({"u0": ["ABSTAIN", "ABSTAIN", "ANSWER"], "u1": ["DENY", "ABSTAIN", "ANSWER"]})
        out = analysis_examples.example_rows(frame, seed=3)
        assert out["part"].to_list() == [
            "Answerable",
            "",
            "Unanswerable",
            "Abstention",
            "Premise denial",
            "Confabulation",
        ]
        assert out["text"].to_list()[2:] == ["Q u1", "m1 no_rag ABSTAIN", "m1 single DENY", "m2 single ANSWER"]

    def test_missing_label(self) -> None:
        """Without a premise denial the table says so and counts the run's denials; seeded choice."""
        frame = self.frame({"u0": ["ABSTAIN", "ANSWER"], "u1": ["ANSWER", "ABSTAIN"]})
        a, b = (analysis_examples.example_rows(frame, seed=s)["question_id"][-1] for s in (0, 0))
        deny = (
            analysis_examples.example_rows(frame, seed=0).filter(pl.col("part") == "Premise denial").row(0, named=True)
        )
        assert a == b and deny["source"] == "(missing)" and "0 of its 4 labelled" in deny["text"]


class TestTable09:
    def test_car_and_losses(self) -> None:
        """The main generator's row carries the CAR of the verifier's single-shot run; others none."""
        audit = pl.DataFrame(
            {
                "generator": ["g1", "g2"],
                "accepted_answerable": [3, 2],
                "lost_to_format": [1, 2],
                "lost_at_scenario": [4, 0],
                "main_generator": [True, False],
            }
        )
        grid = pl.DataFrame(
            {
                "model": ["x", "v"],
                "thinking": ["off", "off"],
                "condition": ["single", "single"],
                "car": [0.2, 0.5],
                "config_label": ["X", "V"],
                "roles": ["", "V"],
            }
        )
        out = paper_tables.table09({"generator_audit": audit, "main_grid": grid})
        assert out["car"].to_list() == [50.0, None] and out["car_model"].to_list() == ["V", None]
        assert out["lost_at_scenario"].to_list() == [4.0, 0.0]

    def test_car_per_generator(self) -> None:
        """With the comparison answered, every generator's row has its own CAR, in percent, with
        the model's display name (the main results are not used)."""
        audit = pl.DataFrame(
            {
                "generator": ["g1", "g2"],
                "main_generator": [True, False],
                "car_model": ["m", "m"],
                "car": [0.25, 0.0],
                "car_k": [1, 0],
                "car_n": [4, 3],
            }
        )
        grid = pl.DataFrame(
            {
                "model": ["m"],
                "thinking": ["off"],
                "condition": ["single"],
                "car": [0.9],
                "config_label": ["M"],
                "roles": [""],
            }
        )
        facts = pl.DataFrame({"model": ["m"], "display_name": ["Model M"]})
        out = paper_tables.table09({"generator_audit": audit, "main_grid": grid, "facts": facts})
        assert out["car"].to_list() == [25.0, 0.0] and out["car_model"].to_list() == ["Model M"] * 2


class TestSelfPref:
    def test_rows(self) -> None:
        """One row per judge in points, then the other-family re-ranking."""
        sp = pl.DataFrame(
            {
                "judge": ["score_a"],
                "family": ["F"],
                "estimate": [0.012],
                "low": [0.005],
                "high": [0.02],
                "n_own": [10],
                "n_other": [20],
                "note": [""],
            }
        )
        rerank = pl.DataFrame({"n": [12], "n_reduced": [4], "rho": [0.84], "p": [0.001], "note": [""]})
        out = paper_tables.selfpref({"self_preference": sp, "judge_rerank": rerank})
        assert out["judge"].to_list() == ["a", "other-family judges only"] and out["estimate"][0] == pytest.approx(1.2)
        assert out["note"][1] == "rho = +0.84 over 12 configurations (4 re-scored)"


class TestPaperTablesBuild:
    def test_published_table2(self) -> None:
        """Table 2's published row: attempt 95.4 [93.6, 96.7], CAR 80.7 [75.8, 84.7], Bal. F1 88.9."""
        results = analysis.analyze(published_row(), design=analysis.Design(n_resamples=20))
        row = paper_tables.build(results)["table02"].row(0, named=True)
        got = [
            round(row[c], 1) for c in ("attempt", "attempt_low", "attempt_high", "car", "car_low", "car_high", "bal_f1")
        ]
        assert got == [95.4, 93.6, 96.7, 80.7, 75.8, 84.7, 88.9]
        assert metrics.balanced_f1(0.954, 0.807) == pytest.approx(0.889, abs=5e-4)

    def test_reasons(self) -> None:
        """Without results every table but 12 is a reason string; none raises; 12 needs the config."""
        out = paper_tables.build({})
        assert all(isinstance(v, str) for v in out.values()) and "table12" not in out

    def test_role_marks(self) -> None:
        """A model with a role in building the benchmark carries its marks as ``^{...}``."""
        results = analysis.analyze(published_row(), design=analysis.Design(n_resamples=5))
        facts = analysis.model_facts({}, ["gemma-4-26b-a4b"], {"gemma-4-26b-a4b": "GR"})
        results["main_grid"] = results["main_grid"].drop("roles").join(facts.select("model", "roles"), on="model")
        assert paper_tables.build(results)["table02"]["model"][0] == "gemma-4-26b-a4b^{GR}"


class TestTable12:
    def test_roles(self, tmp_path: Path) -> None:
        """The run's embedder, generator and judges."""
        cfg = project(tmp_path, None)
        out = paper_tables.table12(cfg)
        assert out["model"][0] == cfg.index.embedder and out.height >= 7
        assert "table12" in paper_tables.build({}, cfg)
