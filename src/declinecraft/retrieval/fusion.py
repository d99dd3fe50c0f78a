"""Ranked hits and their fusion: the one :class:`Hit` type, reciprocal rank fusion, query checks.

Every retriever returns lists of :class:`Hit`; the answer stage records their component ranks
(``bm25``, ``dense``, ``hybrid``, ``rerank``) per response.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk."""

    chunk_id: str
    """The chunk."""
    score: float = 0.0
    """The pipeline's final score: BM25, cosine, RRF or cross-encoder logit (higher is better)."""
    ranks: Mapping[str, int] = field(default_factory=dict, hash=False)
    """1-based rank each component gave the chunk ("bm25", "dense", "hybrid", "rerank"); a
    component that did not return the chunk within its depth is absent."""


def fuse(lists: Mapping[str, Sequence[Key]], k: int) -> list[tuple[Key, float, dict[str, int]]]:
    scores: dict[Key, float] = {}
    ranks: dict[Key, dict[str, int]] = {}
    for name, keys in lists.items():
        for position, key in enumerate(keys, start=1):
            seen = ranks.setdefault(key, {})
            if name in seen:  # a repeated key keeps its best rank only
                continue
            seen[name] = position
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + position)
    # dicts keep first-appearance order (first list first), and sorted() is stable: ties go to
    # the chunk the first retriever (BM25) ranked, as in LangChain's EnsembleRetriever.
    order = sorted(scores, key=scores.__getitem__, reverse=True)
    return [(key, scores[key], ranks[key]) for key in order]


def rrf(rankings: Mapping[str, Sequence[str]], *, k: int = 60, limit: int | None = None) -> list[Hit]:
    """Reciprocal rank fusion: score(d) = sum over lists of 1 / (k + rank of d), ranks from 1.

    Args:
        rankings: retriever name -> chunk ids, best first. A chunk repeated within one list counts
            once, at its best rank.
        k: the RRF constant (the paper: 60).
        limit: keep the best ``limit`` fused hits (all when ``None``).

    Returns:
        Hits sorted by fused score; ties keep the order of first appearance (first list first).
    """
    if k < 0:
        raise ValueError(f"RRF constant k must be >= 0, got {k}")
    fused = fuse(rankings, k)
    return [Hit(str(key), score, dict(ranks)) for key, score, ranks in fused[:limit]]


def check_queries(queries: Sequence[str]) -> list[str]:
    if isinstance(queries, str):
        raise TypeError("expected a list of queries, got one string (use Retriever.search for one query)")
    out = list(queries)
    for i, query in enumerate(out):
        if not isinstance(query, str):
            raise TypeError(f"query {i}: expected str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError(f"query {i} is empty: a retrieval query needs at least one non-space character")
    return out


def check_k(k: int) -> int:
    """Return ``k`` as an int, or raise ValueError unless it is a positive integer."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)
