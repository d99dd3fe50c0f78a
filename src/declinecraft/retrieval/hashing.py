"""A model-free embedder: signed feature hashing of BM25 tokens (tests and speed benchmarks only)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from declinecraft.retrieval.bm25 import bm25_analyzer
from declinecraft.retrieval.embedder import check_texts, normalise


class HashEmbedder:
    """Signed feature hashing of analyzer tokens into ``dim`` buckets (tests and benchmarks only).

    Equivalent to a sparse random projection of the bag of words: similar wording gives similar
    vectors, with no model to load.
    """

    def __init__(self, dim: int = 384, *, name: str | None = None) -> None:
        if dim < 2:
            raise ValueError(f"hash embedder needs dim >= 2, got {dim}")
        self.name = name or f"hash-{dim}"
        self.dim = dim
        self.key = f"{self.name}@v1"
        self._analyzer = bm25_analyzer("en_stem")
        self._buckets: dict[str, tuple[int, float]] = {}

    def _bucket(self, token: str) -> tuple[int, float]:
        hit = self._buckets.get(token)
        if hit is None:
            digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            hit = (digest % self.dim, 1.0 if (digest >> 63) & 1 else -1.0)
            self._buckets[token] = hit
        return hit

    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            counts: dict[str, int] = {}
            for token in self._analyzer.analyze(text):
                counts[token] = counts.get(token, 0) + 1
            for token, count in counts.items():
                col, sign = self._bucket(token)
                out[row, col] += sign * (1.0 + np.log(count))
        return normalise(out)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed chunk texts."""
        return self._encode(check_texts(texts, "documents"))

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed queries (no prompt)."""
        return self._encode(check_texts(texts, "queries"))


class HashReranker:
    """A model-free reranker: the cosine of two :class:`HashEmbedder` vectors (the simulated run
    and benchmarks, where a cross-encoder on a few CPU cores would cost more than the rest)."""

    def __init__(self, dim: int = 384, *, name: str | None = None) -> None:
        self._embedder = HashEmbedder(dim, name=name)
        self.name = self._embedder.name
        self.key = f"{self.name}@rerank-v1"

    def score(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Return the cosine of each (query, passage) pair's hashed vectors."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        queries = self._embedder._encode([q for q, _ in pairs])
        passages = self._embedder._encode([p for _, p in pairs])
        return np.asarray((queries * passages).sum(axis=1), dtype=np.float32)
