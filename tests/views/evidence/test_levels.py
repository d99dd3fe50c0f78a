"""Tests for declinecraft.views.evidence.levels: building the evidence levels at the edges."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views.evidence import levels
from tests.support import esb


def build(kv: pl.DataFrame, retrieved: list[str], *, k: int = 3, chunk_chars: int = 0) -> levels.Levels:
    return levels.build(
        esb.question(),
        esb.CHUNKS,
        retrieved={"q": retrieved},
        key_values=kv,
        titles=["Golem", "Ore"],
        k=k,
        chunk_chars=chunk_chars,
    )


class TestLevelEdges:
    def test_copy_still_holding_original(self) -> None:
        """A replacement that contains the original: the L5 pair is dropped with the reason, counted."""
        built = build(esb.key_values("Iron", "Iron Block"), ["o1", "t1"])
        assert "L5" not in built.instances["level"].to_list()
        assert esb.problems(built)["conflict_check_failed"] == "L5 dropped"
        detail = built.problems.filter(pl.col("problem") == "conflict_check_failed")["detail"][0]
        assert detail.startswith("original_value_present")
        q = built.quality.filter(pl.col("check") == "original_absent_in_copy").row(0, named=True)
        assert (q["n_checked"], q["n_failed"]) == (1, 1)

    def test_value_cut_from_context(self) -> None:
        """When context_chars hides the value, L5 is dropped and L1 counted as not showing the answer."""
        built = build(esb.key_values("Iron", "Gold"), ["o1", "t1"], chunk_chars=60)
        assert esb.problems(built)["value_cut_from_context"] == "L5 dropped"
        l1 = built.quality.filter(pl.col("check") == "answer_present", pl.col("level") == "L1").row(0, named=True)
        assert (l1["n_checked"], l1["n_failed"]) == (1, 1)

    def test_short_levels(self) -> None:
        """Too few retrieved chunks and unrelated pages: kept with what there is, counted; an unknown
        retrieved id is skipped and counted."""
        built = build(esb.key_values("20", "40", "number", "health"), ["t1", "o1", "gone"], k=4)
        got = esb.problems(built)
        assert got["l2_short"] == "kept" and got["retrieved_chunk_missing"] == "chunk skipped"
        assert got["no_unrelated_chunks"] == "L3 dropped"  # Ore is retrieved, so related
        assert built.instances.filter(pl.col("level") == "L2")["chunk_ids"].to_list()[0] in (
            ["t1#partial", "o1"],
            ["o1", "t1#partial"],
        )

    def test_no_distractors(self) -> None:
        """A retriever that returns only the target: no L2, counted."""
        built = build(esb.key_values("20", "40", "number", "health"), ["t1"])
        assert esb.problems(built)["no_distractors"] == "L2 dropped"
        assert set(built.instances["level"]) == {"L1", "L3", "L4", "L5"}

    def test_l3_avoids_the_answer(self) -> None:
        """An unrelated chunk stating the answer string is never drawn for L3 (o2 states "20 health")."""
        built = build(esb.key_values("20", "40", "number", "health"), ["t1"], k=2)
        assert built.instances.filter(pl.col("level") == "L3")["chunk_ids"].to_list() == [["o1"]]
        assert esb.problems(built)["l3_short"] == "kept"
        other = build(esb.key_values("Iron", "Gold"), ["t1"], k=2)
        assert sorted(other.instances.filter(pl.col("level") == "L3")["chunk_ids"][0]) == ["o1", "o2"]

    def test_k_must_be_positive(self) -> None:
        with pytest.raises(ValueError, match="evidence.k"):
            build(esb.key_values("20", "40"), ["t1"], k=0)
