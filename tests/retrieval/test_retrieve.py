"""Tests for declinecraft.retrieval.retrieve: the retriever over a built index."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.retrieval.retrieve import Retriever
from tests.support import retrieval_data


class TestRetriever:
    def test_counts(self, retriever: Retriever) -> None:
        """The opened index knows both corpora's sizes."""
        assert (retriever.size("pre"), retriever.size("post")) == (retrieval_data.N_PRE, retrieval_data.N_POST)

    def test_search_many_equals_search(self, retriever: Retriever) -> None:
        """A batch gives the same hits as one call per query."""
        queries = ["horse armor", "copper", "quokkaberry"]
        assert retriever.search_many(queries, "hybrid", 3) == [retriever.search(q, "hybrid", 3) for q in queries]

    @pytest.mark.parametrize("pipeline", ["bm25", "dense", "hybrid", "hybrid+rerank"])
    def test_empty_batch(self, retriever: Retriever, pipeline: str) -> None:
        """No queries give no result lists."""
        assert retriever.search_many([], pipeline, 3) == []  # type: ignore[arg-type]

    def test_hits_hashable(self, retriever: Retriever) -> None:
        """Hits can go into sets (ranks are not part of the hash)."""
        assert len(set(retriever.search("copper", "hybrid", 3))) == 3

    def test_unknown_pipeline(self, retriever: Retriever) -> None:
        """An unknown pipeline name lists the known ones."""
        with pytest.raises(ValueError, match="known: bm25, dense"):
            retriever.search("horse", "sparse", 3)  # type: ignore[arg-type]

    def test_post_only_for_dense(self, retriever: Retriever) -> None:
        """Evaluated pipelines cannot search C_post."""
        with pytest.raises(ValueError, match="C_pre only"):
            retriever.search("horse", "hybrid", 3, corpus="post")

    def test_chunks(self, retriever: Retriever) -> None:
        """chunks() returns metadata and text in the asked order; unknown ids are KeyErrors."""
        frame = retriever.chunks(["Harness#0", "Horse#0"])
        assert frame["chunk_id"].to_list() == ["Harness#0", "Horse#0"]
        assert frame["url"][1] == "http://wiki.test/Horse" and frame["text"][1].startswith("[Page: Horse]")
        with pytest.raises(KeyError, match="nope"):
            retriever.chunks(["nope"])

    def test_dimension_mismatch(self, folder: Path) -> None:
        """An embedder of another dimension is refused when opening."""
        with pytest.raises(ValueError, match="gives 32-d vectors but the index .* holds 64-d"):
            Retriever.open(folder, embedder=HashEmbedder(32))

    def test_model_mismatch(self, folder: Path) -> None:
        """An embedder of the same dimension but another model is refused."""
        with pytest.raises(ValueError, match="not the model the index"):
            Retriever.open(folder, embedder=HashEmbedder(retrieval_data.DIM, name="other-64"))

    def test_lazy_embedder(self, folder: Path) -> None:
        """Without an embedder, the index's own loads on the first dense query."""
        opened = Retriever.open(folder, cache_dir=folder.parent)
        assert retrieval_data.ids(opened.search("quokkaberry shrub", "dense", 1)) == ["Quokkaberry#0"]

    def test_missing_index(self, tmp_path: Path) -> None:
        """Opening a folder without an index names the missing manifest."""
        with pytest.raises(FileNotFoundError, match="manifest.json is missing"):
            Retriever.open(tmp_path)

    def test_ids(self, retriever: Retriever) -> None:
        """retrieval_data.ids() lists the chunk ids of one corpus or both."""
        assert retriever.ids("pre") == retrieval_data.PRE_IDS and set(retriever.ids()) == set(
            retrieval_data.PRE_IDS
        ) | set(retrieval_data.POST_IDS)


def test_chunk_texts_roundtrip(retriever: Retriever) -> None:
    """texts() returns each chunk's stored text."""
    assert retriever.texts(["Furnace#0"]) == [
        retrieval_data.make_chunks().filter(pl.col("chunk_id") == "Furnace#0")["text"][0]
    ]
