"""Tests for declinecraft.retrieval.diagnostics: result frames, example queries, hit rates."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.retrieval import diagnostics
from declinecraft.retrieval.retrieve import Retriever
from tests.support import retrieval_data


class TestResultsFrame:
    def test_shape(self, retriever: Retriever) -> None:
        """One row per (query, pipeline, rank) with titles and component ranks."""
        frame = diagnostics.results_frame(retriever, ["copper", "horse"], ["bm25", "hybrid"], k=2)
        assert frame.height == 8 and frame.filter(pl.col("pipeline") == "bm25")["dense_rank"].null_count() == 4
        assert set(frame["title"]) <= {c[1] for c in retrieval_data.CHUNKS}


class TestExampleQueries:
    def test_reproducible(self, retriever: Retriever) -> None:
        """The same seed gives the same questions, each naming a C_pre page."""
        queries = diagnostics.example_queries(retriever, 3, seed=1)
        assert queries == diagnostics.example_queries(retriever, 3, seed=1) and len(queries) == 3
        assert all(any(c[1] in q for c in retrieval_data.CHUNKS if c[3] == "pre") for q in queries)


def _questions() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "question_id": ["a1", "a2", "a3", "u1", "u2", "a1", "a2", "a3", "u1", "u2"],
            "pipeline": ["hybrid"] * 5 + ["bm25"] * 5,
            "answerable": [True, True, True, False, False] * 2,
            "target_chunk_id": ["t1", "t2", "t3", None, None] * 2,
            "scenario_chunk_ids": [["s"], ["s"], ["s"], ["s1", "s2"], ["s3"]] * 2,
            "retrieved_ids": [
                ["t1", "x"],
                ["x", "x", "x", "x", "x", "t2"],
                ["x", "t3"],
                ["x", "s2"],
                ["x"],
                ["x"],
                ["t2"],
                ["x"],
                ["s1"],
                ["s3"],
            ],
        }
    )


class TestHitAtK:
    def test_per_pipeline(self) -> None:
        """Hit@5 counts the target within the first 5, per pipeline, answerable questions only."""
        rates = diagnostics.hit_at_k(_questions(), 5)
        assert rates.select("pipeline", "n", "hits").rows() == [("hybrid", 3, 2), ("bm25", 3, 1)]
        assert rates["rate"][0] == pytest.approx(2 / 3)
        assert rates["low"][0] < 2 / 3 < rates["high"][0]

    def test_k(self) -> None:
        """At k=6 the sixth-ranked target counts."""
        assert diagnostics.hit_at_k(_questions(), 6, by=None)["hits"].to_list() == [4]

    def test_null_target(self) -> None:
        """An answerable question without a target is named."""
        frame = _questions().with_columns(target_chunk_id=pl.lit(None, dtype=pl.Utf8))
        with pytest.raises(ValueError, match="question 'a1' has no target_chunk_id"):
            diagnostics.hit_at_k(frame)

    def test_missing_column(self) -> None:
        """A missing column is named."""
        with pytest.raises(ValueError, match="missing column 'retrieved_ids'"):
            diagnostics.hit_at_k(_questions().drop("retrieved_ids"))


class TestScenarioHitRate:
    def test_per_pipeline(self) -> None:
        """Unanswerable questions whose top k holds a scenario chunk, per pipeline."""
        rates = diagnostics.scenario_hit_rate(_questions(), 5)
        assert rates.select("pipeline", "n", "hits").rows() == [("hybrid", 2, 1), ("bm25", 2, 2)]

    def test_k_one(self) -> None:
        """At k=1 only the first chunk counts."""
        assert diagnostics.scenario_hit_rate(_questions(), 1).select("pipeline", "hits").rows() == [
            ("hybrid", 0),
            ("bm25", 2),
        ]
