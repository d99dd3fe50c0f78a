"""Retrieval pipelines over the 02_index index (Appendix E).

Six pipelines, one function each, all batched (a list of queries in, one ranked list of
:class:`Hit` per query out):

==========================  ================================================================
``bm25``                    Tantivy BM25 over C_pre (k1=1.2, b=0.75: see ``index``), every
                            query term at once up to ``bm25_exact_max_rows`` chunks, in two
                            passes above (see ``bm25``)
``dense``                   cosine similarity over C_pre (or C_post, for question generation
                            only), searched by LanceDB: exact up to ``dense_flat_max_rows``
                            chunks, through its ANN index above (see ``dense``)
``hybrid``                  reciprocal rank fusion of both (K=``rrf_k``), keyed by chunk_id;
                            the default retriever of single-shot and iterative RAG
``hybrid+rerank``           the top ``rerank_pool`` fused chunks rescored by a cross-encoder;
                            with k=10 this is the verifier's R+
``hybrid+rewrite``          ``hybrid`` on queries rewritten by an injected callable
``hybrid+rewrite+rerank``   both
==========================  ================================================================

Query rewriting is injected (``rewrite: Callable[[list[str]], list[str]]``, a batch of queries to
a batch of rewritten queries) so this module never imports the LLM layer. The answer stage wires it
to the LLM client with the rewrite prompt (``params/prompts/rewrite_query.txt``, ours: the paper's
Appendix E is not in our copy). The rewritten query replaces the original for BM25, dense
retrieval and the cross-encoder alike; an empty rewrite falls back to the original (with a warning).

Dense search runs in LanceDB (:mod:`declinecraft.retrieval.dense`), one multi-vector query per
block of queries; no vector is held in this process. At the paper's size (11,612 chunks) it is
exact, so hybrid results are those of a brute-force search.

BM25 queries are built from our own tokens (the index's analyzer, one term query per distinct
token, boosted by its count), never by Tantivy's query parser, so colons, quotes, parentheses,
"?" and "-" in questions cannot cause a syntax error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from declinecraft.core import paths
from declinecraft.core.config import IndexParams
from declinecraft.core.retrieval_device import AUTO, RetrievalDevice
from declinecraft.retrieval import index
from declinecraft.retrieval.bm25 import FrequentScores, Rows, bm25_analyzer, search_rows, search_two_pass, text_query
from declinecraft.retrieval.embed import load_embedder
from declinecraft.retrieval.embedder import Embedder
from declinecraft.retrieval.fusion import Hit
from declinecraft.retrieval.pipelines import FUNCTIONS, PIPELINES, Corpus, Pipeline, Rewrite, dense
from declinecraft.retrieval.rerank import Reranker, load_reranker

# --- the retriever ---------------------------------------------------------------------------


class Retriever:
    """An opened index: chunk metadata in memory, LanceDB tables for dense search, the Tantivy
    BM25 searcher, lazy models.

    Open it with :meth:`open`. Models load on first use: a BM25-only user never loads the
    embedder, and the cross-encoder loads at the first rerank.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        rewrite: Rewrite | None = None,
        params: IndexParams | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        device: RetrievalDevice = AUTO,
    ) -> None:
        """Open the index in ``folder`` (a stage folder ``02_index/`` or one ``index-<version>/``).

        Args:
            embedder: the embedder for queries; default: the index's own, loaded on first use.
                Must be the model the index was built with (same name and dimension).
            reranker: the cross-encoder; default: ``params.reranker``, loaded on first rerank.
            rewrite: the query rewriter for the ``+rewrite`` pipelines (batch in, batch out).
            params: retrieval params (rrf_k, fusion_depth, rerank_pool, the BM25 search settings, the
                ANN search settings dense_nprobes / dense_ef / dense_refine_factor); default: the
                index's.
            cache_dir: where model caches live; default: the project's shared cache.
            device: where the embedder and cross-encoder it loads run; a stage that starts model
                servers passes ``RetrievalDevice(cfg.llm.retrieval_device, servers=True)``.

        Raises:
            FileNotFoundError: no index in ``folder``.
            ValueError: an embedder whose name or dimension does not match the index.
        """
        self.folder = index.resolve(folder)
        self.manifest = index.read_manifest(self.folder)
        self.params = params or index.params_of(self.manifest)
        self.rewrite = rewrite
        self.version: str = self.manifest["version"]
        try:
            self._root: Path | None = paths.find_root(self.folder)
        except FileNotFoundError:
            self._root = None
        if cache_dir is None and self._root is not None:
            cache_dir = paths.cache_dir(self._root)
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.device = device

        self._dense = index.dense_tables(self.folder, self.params)
        self._ids: dict[str, NDArray[np.object_]] = {}
        self._meta: dict[str, pl.DataFrame] = {}
        for corpus in index.CORPORA:
            table = self._dense[corpus]
            names = [n for n in table.schema.names if n != "vector"]
            part = pl.from_arrow(table.columns(names))
            assert isinstance(part, pl.DataFrame)
            self._meta[corpus] = part.sort("row")
            self._ids[corpus] = np.array(self._meta[corpus]["chunk_id"].to_list(), dtype=object)
        self._where = {cid: (c, i) for c in index.CORPORA for i, cid in enumerate(self._ids[c])}
        counts = self.manifest["counts"]
        if (len(self._ids["pre"]), len(self._ids["post"])) != (counts["pre"], counts["post"]):
            raise RuntimeError(f"{self.folder}: LanceDB rows do not match the manifest counts {counts}")

        analyzer = self.manifest["bm25"]["analyzer"]
        self._bm25 = index.open_bm25(self.folder / "tantivy", analyzer)
        self._searcher = self._bm25.searcher()
        self._schema = self._bm25.schema
        self._analyzer = bm25_analyzer(analyzer)
        self._frequent = FrequentScores.load(self.folder, self.manifest["bm25"].get("frequent"), counts["pre"])
        if self._searcher.num_docs != counts["pre"]:
            raise RuntimeError(
                f"{self.folder}: Tantivy holds {self._searcher.num_docs} documents, manifest says {counts['pre']}"
            )

        self._embedder: Embedder | None = None
        self._reranker: Reranker | None = reranker
        if embedder is not None:
            self.embedder = embedder

    @classmethod
    def open(cls, folder: str | os.PathLike[str], **options: Any) -> Retriever:
        """Open the index in ``folder``: the documented entry point, the same as the constructor."""
        return cls(folder, **options)

    # -- models --

    @property
    def embedder(self) -> Embedder:
        """The query embedder (loaded on first use)."""
        if self._embedder is None:
            path = self.params.embedder_path
            if path and not Path(path).is_absolute() and self._root is not None:
                path = str(self._root / path)
            self.embedder = load_embedder(
                self.manifest["embedder"]["name"],
                path=path or None,
                cache_dir=self.cache_dir,
                batch_size=self.params.batch_size,
                device=self.device,
            )
        assert self._embedder is not None
        return self._embedder

    @embedder.setter
    def embedder(self, model: Embedder) -> None:
        want = self.manifest["embedder"]
        if model.dim != want["dim"]:
            raise ValueError(
                f"embedder {model.name!r} gives {model.dim}-d vectors but the index at {self.folder} holds "
                f"{want['dim']}-d vectors (built with {want['name']!r})"
            )
        if model.name != want["name"]:
            raise ValueError(
                f"embedder {model.name!r} is not the model the index at {self.folder} was built with "
                f"({want['name']!r}): query and chunk vectors would not be comparable"
            )
        self._embedder = model

    @property
    def reranker(self) -> Reranker:
        """The cross-encoder (loaded on first use)."""
        if self._reranker is None:
            path = self.params.reranker_path
            if path and not Path(path).is_absolute() and self._root is not None:
                path = str(self._root / path)
            self._reranker = load_reranker(
                self.params.reranker,
                path=path or None,
                cache_dir=self.cache_dir,
                batch_size=self.params.batch_size,
                device=self.device,
            )
        return self._reranker

    # -- sizes and chunks --

    def size(self, corpus: Corpus = "pre") -> int:
        """Return the number of chunks in a corpus."""
        return len(self._ids[corpus])

    def ids(self, corpus: Corpus | None = None) -> list[str]:
        """Return the chunk ids of one corpus (in index order), or of both (C_pre first)."""
        corpora = index.CORPORA if corpus is None else (corpus,)
        return [cid for c in corpora for cid in self._ids[c]]

    def chunks(self, chunk_ids: Sequence[str]) -> pl.DataFrame:
        """Return the chunks' rows (chunk_id, title, text, url, revision_id, timestamp, corpus), in order.

        Raises:
            KeyError: an id is not in the index.
        """
        parts = []
        for cid in chunk_ids:
            if cid not in self._where:
                raise KeyError(f"chunk {cid!r} is not in the index at {self.folder}")
            corpus, row = self._where[cid]
            parts.append(self._meta[corpus].slice(row, 1))
        if not parts:
            return self._meta["pre"].clear().drop("row")
        return pl.concat(parts).drop("row")

    def texts(self, chunk_ids: Sequence[str]) -> list[str]:
        """Return the chunks' texts, in order."""
        out = []
        for cid in chunk_ids:
            if cid not in self._where:
                raise KeyError(f"chunk {cid!r} is not in the index at {self.folder}")
            corpus, row = self._where[cid]
            out.append(self._meta[corpus]["text"][row])
        return out

    # -- components (rows of one corpus, best first) --

    def bm25_counts(self, query: str) -> dict[str, int]:
        """Return a query's analyzed tokens and how often each occurs (empty when it has none)."""
        counts: dict[str, int] = {}
        for token in self._analyzer.analyze(query):
            counts[token] = counts.get(token, 0) + 1
        return counts

    def _bm25_one(self, query: str, depth: int) -> Rows:
        counts = self.bm25_counts(query)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if self.size("pre") > self.params.bm25_exact_max_rows:
            found = search_two_pass(
                self._searcher, self._schema, counts, self._frequent, depth, self.params.bm25_candidates
            )
            if found is not None:
                return found
        return search_rows(self._searcher, text_query(self._schema, counts), depth)

    def bm25_rows(self, queries: Sequence[str], depth: int) -> list[Rows]:
        """Return (C_pre rows, BM25 scores), best first, at most ``depth`` per query.

        Above ``bm25_exact_max_rows`` chunks each query is searched in two passes where it can be
        (:func:`~declinecraft.retrieval.bm25.search_two_pass`). A batch runs on a few threads
        (Tantivy releases the GIL while it searches), in order.
        """
        if len(queries) < 8:
            return [self._bm25_one(q, depth) for q in queries]
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            return list(pool.map(lambda q: self._bm25_one(q, depth), queries))

    def dense_rows(
        self, queries: Sequence[str], depth: int, *, corpus: Corpus = "pre", block: int = 256
    ) -> list[tuple[NDArray[np.int64], NDArray[np.float32]]]:
        """Return (rows of ``corpus``, cosine similarities), best first, at most ``depth`` per query."""
        table = self._dense[corpus]
        if table.rows == 0:
            return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in queries]
        vectors = self.embedder.embed_queries(list(queries))
        dim = int(self.manifest["embedder"]["dim"])
        if vectors.ndim != 2 or vectors.shape[1] != dim:
            raise ValueError(f"query vectors have shape {vectors.shape} but the index holds {dim}-d vectors")
        return table.search(vectors, depth, block=block)

    # -- the public entry points --

    def search(self, query: str, pipeline: Pipeline = "hybrid", k: int = 5, *, corpus: Corpus = "pre") -> list[Hit]:
        """Return the top ``k`` hits of one query (``corpus="post"`` only with ``pipeline="dense"``)."""
        if not isinstance(query, str):
            raise TypeError(f"expected one query string, got {type(query).__name__} (use search_many)")
        return self.search_many([query], pipeline, k, corpus=corpus)[0]

    def search_many(
        self, queries: Sequence[str], pipeline: Pipeline = "hybrid", k: int = 5, *, corpus: Corpus = "pre"
    ) -> list[list[Hit]]:
        """Return the top ``k`` hits of each query, in one batch.

        Raises:
            ValueError: unknown pipeline, empty query, k < 1, or C_post asked of a pipeline other
                than dense (evaluated systems never see C_post).
        """
        if pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline {pipeline!r} (known: {', '.join(PIPELINES)})")
        if corpus != "pre" and pipeline != "dense":
            raise ValueError(f"pipeline {pipeline!r} searches C_pre only; C_post exists for dense retrieval only")
        if pipeline == "dense":
            return dense(self, queries, k, corpus=corpus)
        return FUNCTIONS[pipeline](self, queries, k)
