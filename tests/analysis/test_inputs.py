"""Tests for declinecraft.analysis.inputs: what the analysis reads from the run."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.analysis import inputs
from declinecraft.core import config
from tests.support import judged_tables, projects, synthetic


class TestRolesOf:
    def test_default_run(self) -> None:
        """The default run's 1.5B model generates, verifies its own questions and judges; the 0.5B
        scores accuracy (J is not marked on the verifier, as in the paper's Table 2)."""
        cfg = config.load(projects.REPO / "params" / "default.yaml")
        marks = inputs.roles_of(cfg)
        assert marks["qwen2.5-coder-1.5b"] == "GVR" and marks["qwen2.5-coder-0.5b"] == "J"


class TestStageInputs:
    def test_extra_runs(self, tmp_path: Path) -> None:
        """Extra runs' judged tables are listed next to the run's own."""
        cfg = judged_tables.project(tmp_path, None)
        assert set(inputs.stage_inputs(cfg)) == {"judged"}


class TestLoadJudged:
    def test_missing(self, tmp_path: Path) -> None:
        """No judged table gives None and a reason naming the file."""
        frame, reason = inputs.load_judged(judged_tables.project(tmp_path, None))
        assert frame is None and "judged.parquet" in reason


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
        found = inputs.retrieval_tables(diagnostics_frame(), pipeline="hybrid", k=5)
        by_k = found["retrieval_k"]
        assert by_k.select("k", "depth", "target_hit", "scenario_hit").rows() == [
            (1, 1, 0.3, 0.2),
            (5, 5, 0.8, 0.6),
            (10, 10, 0.9, 0.7),
        ]
        assert found["scenario_overlap"].select("pipeline", "share").rows() == [("bm25", 0.4), ("hybrid", 0.6)]

    def test_read_from_answer_stage(self, tmp_path: Path) -> None:
        """The analysis stage reads them from the answer stage's retrieval.parquet."""
        cfg = judged_tables.project(tmp_path, None)
        cfg.stage_dir("answer").mkdir(parents=True)
        diagnostics_frame().write_parquet(cfg.stage_dir("answer") / "retrieval.parquet")
        found = inputs.upstream_tables(cfg)
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
        out = inputs.with_format_losses(audit, drafts)
        assert out.select("generator", "lost_to_format", "lost_at_scenario").rows() == [("g1", 2, 1), ("g2", 0, 0)]


class TestLoadJudgedExtra:
    def test_extra_single_only(self, tmp_path: Path) -> None:
        """An extra run adds only its single-shot rows the run lacks (no double-counted no RAG)."""
        cfg = judged_tables.project(tmp_path, synthetic.synthetic_judged(3, 10))
        other = synthetic.synthetic_judged(3, 10).with_columns(
            pl.when(pl.col("condition") == "no_rag").then(None).otherwise(10).alias("k")
        )
        (cfg.run_dir("k10") / "06_judge").mkdir(parents=True)
        other.write_parquet(cfg.run_dir("k10") / "06_judge" / "judged.parquet")
        params = cfg.params_file.read_text() + "\n"
        cfg.params_file.write_text(params.replace("extra_runs: []", "extra_runs: [k10]"))
        frame, _ = inputs.load_judged(config.load(cfg.params_file))
        assert frame.height == 3 * 3 * 10 + 3 * 10
