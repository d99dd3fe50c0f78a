"""The six retrieval pipelines, one function each, batched: queries in, ranked hits out.

Each function takes the opened index (:class:`retrieve.Retriever`, seen here through the
:class:`Searchable` protocol so this module sits below it) and returns one list of
:class:`~declinecraft.retrieval.fusion.Hit` per query. See :mod:`declinecraft.retrieval.retrieve`
for what each pipeline does.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from declinecraft.core.config import IndexParams
from declinecraft.retrieval.fusion import Hit, check_k, check_queries, fuse
from declinecraft.retrieval.index import CORPORA

Pipeline = Literal["bm25", "dense", "hybrid", "hybrid+rerank", "hybrid+rewrite", "hybrid+rewrite+rerank"]
Corpus = Literal["pre", "post"]
Rewrite = Callable[[list[str]], list[str]]

PIPELINES: tuple[str, ...] = (
    "bm25",
    "dense",
    "hybrid",
    "hybrid+rerank",
    "hybrid+rewrite",
    "hybrid+rewrite+rerank",
)


class Searchable(Protocol):
    """What the pipelines need of an opened index (:class:`retrieve.Retriever`)."""

    params: IndexParams
    rewrite: Rewrite | None

    @property
    def _ids(self) -> Mapping[str, NDArray[np.object_]]: ...

    @property
    def reranker(self) -> Any: ...

    def texts(self, chunk_ids: Sequence[str]) -> list[str]: ...

    def bm25_rows(self, queries: Sequence[str], depth: int) -> list[tuple[NDArray[np.int64], NDArray[np.float32]]]: ...

    def dense_rows(
        self, queries: Sequence[str], depth: int, *, corpus: Corpus = "pre"
    ) -> list[tuple[NDArray[np.int64], NDArray[np.float32]]]: ...


def _hits(
    retriever: Searchable, corpus: Corpus, rows: NDArray[np.int64], scores: NDArray[np.float32], name: str, k: int
) -> list[Hit]:
    ids = retriever._ids[corpus]
    return [
        Hit(ids[r], float(s), {name: i}) for i, (r, s) in enumerate(zip(rows[:k], scores[:k], strict=True), start=1)
    ]


def bm25(retriever: Searchable, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
    """BM25 over C_pre (Tantivy, k1=1.2, b=0.75); a query without any token returns no hit."""
    queries, k = check_queries(queries), check_k(k)
    return [_hits(retriever, "pre", r, s, "bm25", k) for r, s in retriever.bm25_rows(queries, k)]


def dense(retriever: Searchable, queries: Sequence[str], k: int = 5, *, corpus: Corpus = "pre") -> list[list[Hit]]:
    """Cosine similarity over C_pre, or over C_post (question generation only): exact up to
    ``dense_flat_max_rows`` chunks, LanceDB's ANN index above."""
    queries, k = check_queries(queries), check_k(k)
    if corpus not in CORPORA:
        raise ValueError(f"corpus must be 'pre' or 'post', got {corpus!r}")
    return [_hits(retriever, corpus, r, s, "dense", k) for r, s in retriever.dense_rows(queries, k, corpus=corpus)]


def _hybrid(retriever: Searchable, queries: list[str], depth: int, limit: int) -> list[list[Hit]]:
    ids = retriever._ids["pre"]
    lexical = retriever.bm25_rows(queries, depth)
    semantic = retriever.dense_rows(queries, depth)
    out = []
    for (b_rows, _), (d_rows, _) in zip(lexical, semantic, strict=True):
        fused = fuse({"bm25": b_rows.tolist(), "dense": d_rows.tolist()}, retriever.params.rrf_k)
        out.append([Hit(ids[row], score, ranks) for row, score, ranks in fused[:limit]])
    return out


def hybrid(retriever: Searchable, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
    """BM25 and dense over C_pre fused by RRF (each contributes its top ``max(k, fusion_depth)``)."""
    queries, k = check_queries(queries), check_k(k)
    return _hybrid(retriever, queries, max(k, retriever.params.fusion_depth), k)


def _rerank(retriever: Searchable, queries: list[str], k: int) -> list[list[Hit]]:
    pool = max(k, retriever.params.rerank_pool)
    candidates = _hybrid(retriever, queries, max(pool, retriever.params.fusion_depth), pool)
    pairs = [
        (q, text)
        for q, hits in zip(queries, candidates, strict=True)
        for text in retriever.texts([h.chunk_id for h in hits])
    ]
    scores = retriever.reranker.score(pairs) if pairs else np.zeros(0, dtype=np.float32)
    out, start = [], 0
    for hits in candidates:
        part = scores[start : start + len(hits)]
        start += len(hits)
        order = sorted(range(len(hits)), key=lambda i: (-float(part[i]), i))
        out.append(
            [
                Hit(hits[i].chunk_id, float(part[i]), {**hits[i].ranks, "hybrid": i + 1, "rerank": r})
                for r, i in enumerate(order[:k], start=1)
            ]
        )
    return out


def hybrid_rerank(retriever: Searchable, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
    """Hybrid, then the cross-encoder rescores the top ``max(k, rerank_pool)`` (R+ with k=10)."""
    return _rerank(retriever, check_queries(queries), check_k(k))


def _rewritten(retriever: Searchable, queries: list[str], rewrite: Rewrite | None) -> list[str]:
    rewrite = rewrite or retriever.rewrite
    if rewrite is None:
        raise ValueError(
            "the +rewrite pipelines need a query rewriter: pass rewrite=... (a batch of queries -> a batch "
            "of rewritten queries); the answer stage wires it to the LLM client with the rewrite prompt"
        )
    out = list(rewrite(list(queries)))
    if len(out) != len(queries):
        raise ValueError(f"the rewriter returned {len(out)} queries for {len(queries)}")
    final = []
    for i, (original, new) in enumerate(zip(queries, out, strict=True)):
        if not isinstance(new, str) or not new.strip():
            warnings.warn(f"query {i}: the rewriter returned {new!r}; searching the original query", stacklevel=3)
            new = original
        final.append(new)
    return final


def hybrid_rewrite(
    retriever: Searchable, queries: Sequence[str], k: int = 5, *, rewrite: Rewrite | None = None
) -> list[list[Hit]]:
    """Hybrid on rewritten queries (``rewrite`` or the retriever's rewriter)."""
    queries, k = check_queries(queries), check_k(k)
    return hybrid(retriever, _rewritten(retriever, queries, rewrite), k)


def hybrid_rewrite_rerank(
    retriever: Searchable, queries: Sequence[str], k: int = 5, *, rewrite: Rewrite | None = None
) -> list[list[Hit]]:
    """Hybrid + rerank on rewritten queries; the cross-encoder scores the rewritten query."""
    queries, k = check_queries(queries), check_k(k)
    return _rerank(retriever, _rewritten(retriever, queries, rewrite), k)


FUNCTIONS: dict[str, Callable[..., list[list[Hit]]]] = {
    "bm25": bm25,
    "dense": dense,
    "hybrid": hybrid,
    "hybrid+rerank": hybrid_rerank,
    "hybrid+rewrite": hybrid_rewrite,
    "hybrid+rewrite+rerank": hybrid_rewrite_rerank,
}
