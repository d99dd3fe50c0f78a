"""02_index: the dense and BM25 indexes of both corpora (Appendix D, E)."""

from __future__ import annotations

from declinecraft.core.declaration import Stage, writer
from declinecraft.core.params import IndexParams
from declinecraft.core.stages.corpus import CORPUS_CHUNKS_POST, CORPUS_CHUNKS_PRE

_write = writer("index", "02_index")

INDEX_MANIFEST = _write(
    "manifest.json", "the stage manifest: current version (path), built_now, counts, embedder, timing"
)
INDEX_VERSION = _write(
    "index-{}/",
    "one index version (key: its fingerprint): its manifest, LanceDB tables of C_pre and C_post, Tantivy BM25 "
    "over C_pre, the frequent terms' BM25 scores (declinecraft.retrieval.index)",
)

STAGE = Stage(
    block="index",
    notebook="02_index",
    params=IndexParams,
    run="declinecraft.retrieval.stage:run",
    about="embeddings in LanceDB, BM25 in Tantivy (App. D, E)",
    reads=(CORPUS_CHUNKS_PRE, CORPUS_CHUNKS_POST),
    data=lambda cfg: [p for p in (cfg.index.embedder_path, cfg.index.reranker_path) if p],
)
