"""Tests for declinecraft.retrieval.embedder: the embedding protocol, the text check and row normalisation."""

from __future__ import annotations

import numpy as np
import pytest

from declinecraft.retrieval.embed import load_embedder
from declinecraft.retrieval.embedder import Embedder, check_texts, normalise


class TestEmbedder:
    def test_protocol(self) -> None:
        """A shipped embedder (feature hashing here) is an Embedder; an object without query embedding is not."""

        class DocumentsOnly:
            name, dim = "half", 2

            def embed_documents(self, texts: list[str]) -> np.ndarray:
                return np.zeros((len(texts), 2), dtype=np.float32)

        assert isinstance(load_embedder("hash-16"), Embedder)
        assert not isinstance(DocumentsOnly(), Embedder)


class TestCheckTexts:
    def test_list_back(self) -> None:
        """Any sequence of strings comes back as a list."""
        assert check_texts(("a", "b"), "chunks") == ["a", "b"]

    @pytest.mark.parametrize(
        ("texts", "match"),
        [("one string", "chunks: expected a sequence of strings, got one string"), (["a", 3], r"chunks\[1\]: .*int")],
    )
    def test_not_strings_named(self, texts: object, match: str) -> None:
        """A lone string, or an item that is not a string, is a TypeError naming where."""
        with pytest.raises(TypeError, match=match):
            check_texts(texts, "chunks")  # type: ignore[arg-type]


class TestNormalise:
    def test_unit_rows(self) -> None:
        """Each row is scaled to unit L2 norm as float32; an all-zero row stays zero, not NaN."""
        out = normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
