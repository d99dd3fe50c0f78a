"""Tests for declinecraft.retrieval.embedding_cache: the vector cache and the embedder that uses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from declinecraft.retrieval.embedding_cache import CachedEmbedder, EmbeddingCache
from tests.support import retrieval_data


class TestEmbeddingCache:
    def test_round_trip(self, tmp_path: Path) -> None:
        """Stored vectors come back unchanged."""
        cache = EmbeddingCache(tmp_path / "e.sqlite")
        vector = np.arange(4, dtype=np.float32)
        cache.put_many("m", [("sha1", vector)])
        assert np.array_equal(cache.get_many("m", ["sha1", "other"], 4)["sha1"], vector)
        assert cache.count("m") == 1 and cache.count("x") == 0

    def test_keyed_by_model(self, tmp_path: Path) -> None:
        """A vector stored for one model is not served for another."""
        cache = EmbeddingCache(tmp_path / "e.sqlite")
        cache.put_many("m1", [("sha", np.ones(2, np.float32))])
        assert cache.get_many("m2", ["sha"], 2) == {}

    def test_wrong_dim_ignored(self, tmp_path: Path) -> None:
        """A stored vector of another dimension is a miss."""
        cache = EmbeddingCache(tmp_path / "e.sqlite")
        cache.put_many("m", [("sha", np.ones(3, np.float32))])
        assert cache.get_many("m", ["sha"], 4) == {}

    def test_survives_reopen(self, tmp_path: Path) -> None:
        """A second connection (another process) sees what the first wrote."""
        EmbeddingCache(tmp_path / "e.sqlite").put_many("m", [("sha", np.ones(2, np.float32))])
        assert EmbeddingCache(tmp_path / "e.sqlite").count() == 1


class TestCachedEmbedder:
    def test_second_call_is_free(self, tmp_path: Path) -> None:
        """Re-embedding unchanged texts computes nothing and returns the same vectors."""
        inner = retrieval_data.CountingEmbedder()
        cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
        first = cached.embed_documents(["a horse", "a saddle"])
        second = cached.embed_documents(["a saddle", "a horse"])
        assert inner.documents == 2
        assert np.array_equal(first[::-1], second)
        assert (cached.misses, cached.hits) == (2, 2)

    def test_only_new_texts_computed(self, tmp_path: Path) -> None:
        """A batch with one new text embeds just that text."""
        inner = retrieval_data.CountingEmbedder()
        cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
        cached.embed_documents(["a horse"])
        cached.embed_documents(["a horse", "a mule"])
        assert inner.documents == 2

    def test_duplicates_computed_once(self, tmp_path: Path) -> None:
        """A text repeated within a batch is embedded once."""
        inner = retrieval_data.CountingEmbedder()
        out = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite")).embed_documents(["x y", "x y", "x y"])
        assert inner.documents == 1 and out.shape == (3, inner.dim)

    def test_query_and_document_keys_differ(self, tmp_path: Path) -> None:
        """A query is not served a document vector (prompts differ)."""
        inner = retrieval_data.CountingEmbedder()
        cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
        cached.embed_documents(["horse"])
        cached.embed_queries(["horse"])
        assert (inner.documents, inner.queries) == (1, 1)

    def test_empty_batch(self, tmp_path: Path) -> None:
        """No texts give a (0, dim) matrix."""
        cached = CachedEmbedder(retrieval_data.CountingEmbedder(), EmbeddingCache(tmp_path / "e.sqlite"))
        assert cached.embed_queries([]).shape == (0, cached.dim)
