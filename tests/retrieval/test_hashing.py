"""Tests for declinecraft.retrieval.hashing: the hashing embedder behind the Embedder interface."""

from __future__ import annotations

import numpy as np
import pytest

from declinecraft.retrieval import embed
from declinecraft.retrieval.hashing import HashEmbedder


class TestHashEmbedder:
    def test_shape_and_norm(self) -> None:
        """Rows have the asked dimension and unit length."""
        vectors = HashEmbedder(32).embed_documents(["copper ingot", "horse armor", "a b c"])
        assert vectors.shape == (3, 32) and vectors.dtype == np.float32
        assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-6)

    def test_deterministic(self) -> None:
        """Two instances give identical vectors."""
        a = HashEmbedder(64).embed_queries(["Where do horses spawn?"])
        b = HashEmbedder(64).embed_queries(["Where do horses spawn?"])
        assert np.array_equal(a, b)

    def test_shared_words_are_closer(self) -> None:
        """Texts sharing words are more similar than unrelated texts."""
        vecs = HashEmbedder(256).embed_documents(["horse armor iron", "iron horse armor", "copper ingot furnace"])
        assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]

    def test_no_token_gives_zero_vector(self) -> None:
        """A text without tokens embeds to the zero vector, not NaN."""
        assert not HashEmbedder(16).embed_queries(["?!"]).any()

    def test_is_an_embedder(self) -> None:
        """It satisfies the Embedder protocol."""
        assert isinstance(HashEmbedder(8), embed.Embedder)

    def test_rejects_one_string(self) -> None:
        """A bare string (not a list) is a TypeError."""
        with pytest.raises(TypeError, match="sequence of strings"):
            HashEmbedder(8).embed_documents("horse")  # type: ignore[arg-type]
