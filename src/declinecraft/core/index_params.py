"""The ``index`` params block (stage 02, Appendix D/E): embedder, BM25, fusion, reranking and the
dense index in LanceDB. Its own module because the block outgrew :mod:`declinecraft.core.params`,
which re-exports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from declinecraft.core.bounds import COUNT, POSITIVE, PROPORTION, Bound


@dataclass(frozen=True)
class IndexParams:
    """Appendix D/E: embedder, BM25 constants, fusion and reranking."""

    embedder: str = "all-minilm-l6-v2"
    """Dense model id (``embed.EMBEDDERS``); the paper: ``qwen3-embedding-8b``. Default chosen by
    measured Hit@5 on the mini wiki (benchmarks/bench_embedders.py)."""
    embedder_path: str = ""
    """Local weights for an embedder not shipped in a wheel (folder or .gguf; project-relative or
    absolute). Never a hub id: nothing is downloaded at run time."""
    reranker: str = "ms-marco-minilm-l12"
    """Cross-encoder id (``rerank.RERANKERS``); the paper: ``llama-nemotron-rerank-1b-v2``."""
    reranker_path: str = ""
    """Local weights for a reranker not shipped in a wheel (folder)."""
    bm25_analyzer: str = "en_stem"
    """Tantivy analyzer for chunks and queries: ``en_stem`` (lowercase, ASCII folding, English
    stemming) or ``default`` (lowercase only)."""
    # Tantivy's BM25 is fixed at k1=1.2, b=0.75; the paper used k1=1.5 (a listed deviation).
    bm25_k1: Annotated[float, Bound(0)] = 1.2
    """BM25 k1; must be 1.2 (Tantivy's constant; the paper's 1.5 is a recorded deviation)."""
    bm25_b: Annotated[float, PROPORTION] = 0.75
    """BM25 b; must be 0.75 (Tantivy's constant, same as the paper)."""
    bm25_exact_max_rows: Annotated[int, COUNT] = 100_000
    """A C_pre of at most this many chunks is searched by BM25 over every query term at once
    (exact; the paper's 11,612 included); a larger one in two passes (``bm25_candidates``).
    Measured on 2 cores: the one-pass search runs at about 700-900 q/s at 50,000 chunks, where two
    passes are no faster, and at 60-80 q/s at a million (bench_retrieval_scale)."""
    bm25_frequent_share: Annotated[float, PROPORTION] = 0.2
    """Terms found in at least this share of C_pre's chunks are "frequent": the build stores each
    one's BM25 score in every chunk (4 bytes a chunk a term), and a two-pass search adds them to
    its candidates instead of making Tantivy score every chunk that holds them."""
    bm25_candidates: Annotated[int, POSITIVE] = 1_000
    """Two-pass BM25: the chunks the query's rarer terms rank best, rescored with the frequent
    terms' stored scores; the search returns the best of them (a larger pool misses fewer chunks
    that rank by frequent terms alone, and costs more)."""
    rrf_k: Annotated[int, Bound(0)] = 60
    """Reciprocal rank fusion constant K: score = sum over retrievers of 1 / (K + rank)."""
    fusion_depth: Annotated[int, POSITIVE] = 50
    """Hits each retriever (BM25, dense) contributes to the fusion (at least k)."""
    rerank_pool: Annotated[int, POSITIVE] = 50
    """Fused candidates the cross-encoder rescores (at least k)."""
    batch_size: Annotated[int, POSITIVE] = 32
    """Texts per embedding / reranking forward pass."""
    lancedb_uri: str = ""
    """Where the chunk tables live: "" = ``lancedb/`` inside the index version folder (local, moved
    into place atomically with it); otherwise a LanceDB URI: a local folder (project-relative or
    absolute) or object storage (``s3://bucket/prefix``, ``gs://…``, ``az://…``; credentials from
    the environment), where tables are named by index version."""
    dense_flat_max_rows: Annotated[int, COUNT] = 25_000
    """A corpus of at most this many chunks is searched exactly (flat: every vector scored, the
    paper's 11,612 included); a larger one through the ANN index ``dense_index``."""
    dense_index: str = "ivf_flat"
    """ANN index above ``dense_flat_max_rows``: ``ivf_flat`` (full-precision vectors in IVF
    partitions, each probed partition scored exactly), ``ivf_hnsw_sq`` (HNSW graphs over 8-bit
    scalar-quantized vectors) or ``ivf_pq`` (product quantization); measured in
    bench_retrieval_scale, where ``ivf_flat`` built and searched fastest at the best recall."""
    dense_partitions: Annotated[int, COUNT] = 0
    """IVF partitions of the ANN index (0 = one per ``dense_partition_rows`` chunks)."""
    dense_partition_rows: Annotated[int, POSITIVE] = 1_000
    """Chunks per IVF partition when ``dense_partitions`` is 0: a million chunks get 1,000
    partitions (there, the square root of the rows, LanceDB's own default count)."""
    dense_hnsw_m: Annotated[int, POSITIVE] = 20
    """HNSW: neighbours per node (more = better recall, bigger and slower to build)."""
    dense_hnsw_ef_construction: Annotated[int, POSITIVE] = 100
    """HNSW: candidates examined per insertion while building."""
    dense_pq_sub_vectors: Annotated[int, COUNT] = 0
    """IVF-PQ: sub-vectors per vector (0 = dimension / 8)."""
    dense_nprobes: Annotated[int, POSITIVE] = 20
    """ANN search: IVF partitions searched per query (of a million chunks' 1,000 partitions, 20
    score 2% of the vectors)."""
    dense_ef: Annotated[int, POSITIVE] = 150
    """ANN search (HNSW): candidates kept per query (at least depth x ``dense_refine_factor``)."""
    dense_refine_factor: Annotated[int, POSITIVE] = 1
    """ANN search of the quantized indexes (``ivf_hnsw_sq``, ``ivf_pq``): rescore
    ``refine_factor`` x depth candidates with the full vectors (0 = off; 1 = reorder the hits by
    exact score, which 8-bit codes alone cannot rank among near-ties). ``ivf_flat`` scores full
    vectors already and ignores it."""
