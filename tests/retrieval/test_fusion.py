"""Tests for declinecraft.retrieval.fusion: reciprocal rank fusion."""

from __future__ import annotations

import pytest

from declinecraft.retrieval import fusion
from tests.support import retrieval_data


class TestRrf:
    def test_hand_computed(self) -> None:
        """Scores are sums of 1/(K + rank), sorted descending, with each list's ranks kept."""
        hits = fusion.rrf({"bm25": ["a", "b", "c"], "dense": ["c", "a", "d"]}, k=60)
        assert retrieval_data.ids(hits) == ["a", "c", "b", "d"]
        assert hits[0].score == pytest.approx(1 / 61 + 1 / 62)
        assert hits[1].score == pytest.approx(1 / 63 + 1 / 61)
        assert hits[2].score == pytest.approx(1 / 62) and hits[3].score == pytest.approx(1 / 63)
        assert hits[0].ranks == {"bm25": 1, "dense": 2} and hits[3].ranks == {"dense": 3}

    def test_ties_favour_first_list(self) -> None:
        """Equal fused scores keep the first list's chunk first."""
        assert retrieval_data.ids(fusion.rrf({"bm25": ["x"], "dense": ["y"]})) == ["x", "y"]

    def test_deduplicated(self) -> None:
        """A chunk repeated within a list counts once, at its best rank."""
        hits = fusion.rrf({"bm25": ["a", "a", "b"]}, k=0)
        assert (
            retrieval_data.ids(hits) == ["a", "b"]
            and hits[0].score == pytest.approx(1.0)
            and hits[1].ranks == {"bm25": 3}
        )

    def test_limit_and_empty(self) -> None:
        """limit cuts the fused list; no input gives no hit."""
        assert len(fusion.rrf({"a": ["1", "2", "3"]}, limit=2)) == 2
        assert fusion.rrf({"bm25": [], "dense": []}) == []

    def test_negative_k(self) -> None:
        """A negative constant is refused."""
        with pytest.raises(ValueError, match="k must be >= 0"):
            fusion.rrf({"a": ["x"]}, k=-1)
