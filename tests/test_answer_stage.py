"""Tests for declinecraft.evaluation.answer_stage: the stage's helpers (the whole stage: test_answer.TestRunStage)."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.core import artifacts
from declinecraft.evaluation import answer_stage
from declinecraft.evaluation.answer import Setting
from test_answer import FakeSearch, benchmark, lookup


class TestReadBenchmark:
    def test_missing_column(self, project) -> None:  # noqa: ANN001
        """A benchmark without a needed column is an error naming the file and the column."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        cfg.stage_dir("verify").mkdir(parents=True)
        benchmark().drop("asked_question").write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        with pytest.raises(ValueError, match="benchmark.parquet: missing column 'asked_question'"):
            artifacts.read_benchmark(cfg)


class TestCheckChunks:
    def test_ok(self) -> None:
        """Known target and scenario chunks pass; unanswerable targets (C_post) are not looked up."""
        answer_stage.check_chunks(benchmark(1, 1), lookup)

    def test_missing(self) -> None:
        """An unknown scenario chunk names the question and the chunk."""
        frame = benchmark(0, 1).with_columns(scenario_chunk_ids=pl.Series([["c2", "ghost"]]))
        with pytest.raises(ValueError, match="question 'u0': chunk 'ghost'"):
            answer_stage.check_chunks(frame, lookup)


class TestMemoSearch:
    def test_each_query_once(self) -> None:
        """A query seen before (same pipeline and k) is not searched again; order is kept."""
        inner = FakeSearch({"a": ["c1"], "b": ["c2"]})
        memo = answer_stage.MemoSearch(inner)
        memo(["a", "b"], "hybrid", 1)
        got = memo(["b", "a", "c"], "hybrid", 1)
        assert [h[0].chunk_id for h in got] == ["c2", "c1", "c1"]
        assert inner.calls == [(["a", "b"], "hybrid", 1), (["c"], "hybrid", 1)]


class TestPrefetch:
    def test_retrieval_settings_only(self) -> None:
        """Each retrieval setting's queries are searched once; no retrieval searches nothing."""
        inner = FakeSearch()
        memo = answer_stage.MemoSearch(inner)
        settings = [
            Setting("no_rag"),
            Setting("single", "hybrid", 5),
            Setting("iterative", "hybrid", 5),
            Setting("single", "hybrid", 5, scenario=False),
        ]
        answer_stage.prefetch(benchmark(1, 1), settings, memo)
        assert [(len(q), p, k) for q, p, k in inner.calls] == [(2, "hybrid", 5), (2, "hybrid", 5)]


class TestRetrievedFrame:
    def test_rows(self) -> None:
        """One row per question and retrieval setting, with the ranked chunk ids."""
        memo = answer_stage.MemoSearch(FakeSearch())
        settings = [Setting("single", "bm25", 2)]
        answer_stage.prefetch(benchmark(1, 1), settings, memo)
        frame = answer_stage.retrieved_frame(benchmark(1, 1), memo, settings)
        assert frame["retrieved_ids"].to_list() == [["c1", "c2"], ["c1", "c2"]] and set(frame["pipeline"]) == {"bm25"}


class TestRetrievalDiagnostics:
    def test_rates(self) -> None:
        """Hit@k on answerable and scenario overlap on unanswerable questions, per pipeline."""
        frame = pl.DataFrame(
            {
                "question_id": ["a0", "a1", "u0", "u1"],
                "answerable": [True, True, False, False],
                "pipeline": ["hybrid"] * 4,
                "k": [5] * 4,
                "scenario": [True] * 4,
                "target_chunk_id": ["c1", "c9", "p1", "p2"],
                "scenario_chunk_ids": [["c2"], ["c2"], ["c2"], ["c7"]],
                "retrieved_ids": [["c1", "c2"], ["c2"], ["c3", "c2"], ["c1"]],
            }
        )
        got = {
            r["metric"]: (r["hits"], r["n"]) for r in answer_stage.retrieval_diagnostics(frame).iter_rows(named=True)
        }
        assert got == {"hit_at_k": (1, 2), "scenario_overlap": (1, 2)}

    def test_depth_per_k(self) -> None:
        """Each k is scored at its own depth: a target at rank 7 counts at k=10, not at k=5."""
        ranked = [f"c{i}" for i in range(10)]
        frame = pl.DataFrame(
            {
                "question_id": ["a0", "a0"],
                "answerable": [True, True],
                "pipeline": ["hybrid"] * 2,
                "k": [5, 10],
                "scenario": [True] * 2,
                "target_chunk_id": ["c6", "c6"],
                "scenario_chunk_ids": [["x"], ["x"]],
                "retrieved_ids": [ranked[:5], ranked],
            }
        )
        hits = answer_stage.retrieval_diagnostics(frame).filter(pl.col("metric") == "hit_at_k").sort("k")
        assert hits.select("k", "depth", "hits").rows() == [(5, 5, 0), (10, 10, 1)]

    def test_no_rag_only_keeps_the_columns(self) -> None:
        """A run without retrieval writes an empty table that downstream filters can still read."""
        memo = answer_stage.MemoSearch(FakeSearch())
        settings = [Setting("no_rag", "hybrid", 5)]
        retrieved = answer_stage.retrieved_frame(benchmark(1, 1), memo, settings)
        table = answer_stage.retrieval_diagnostics(retrieved)
        assert table.is_empty() and table.schema == pl.Schema(answer_stage.DIAGNOSTICS_SCHEMA)
        assert table.filter(pl.col("scenario") & (pl.col("metric") == "hit_at_k")).is_empty()


class TestAnswerAll:
    def test_release_per_model(self) -> None:
        """Each model's server is released after all its settings (one server at a time)."""
        from declinecraft.core.config import AnswerParams
        from test_answer import FakeModels

        models = FakeModels()
        frame, timings = answer_stage.answer_all(
            benchmark(1, 1),
            AnswerParams(models=("m1", "m2"), conditions=("no_rag",)),
            models=models,
            search=FakeSearch(),
            lookup=lookup,
        )
        assert (frame.height, models.released, len(timings)) == (4, 2, 2)
