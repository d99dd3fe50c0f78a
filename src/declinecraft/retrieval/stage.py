"""Stage 02 (``02_index``): embed the corpus chunks and build the run's LanceDB + Tantivy index.

Reads ``01_corpus/chunks_pre.parquet`` and ``chunks_post.parquet``; writes
``outputs/<run>/02_index/manifest.json`` and an ``index-<version>/`` folder (see
:mod:`declinecraft.retrieval.index`). An unchanged rerun reuses the built index.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from declinecraft.core.artifacts import read_chunks
from declinecraft.core.config import IndexParams, RunConfig
from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.retrieval.embed import load_embedder
from declinecraft.retrieval.embedder import Embedder
from declinecraft.retrieval.index import ensure, resolve


@dataclass(frozen=True)
class IndexResult:
    """What stage 02 built or reused."""

    folder: Path
    """The current index version's folder (``02_index/index-<version>/``)."""
    manifest: dict[str, Any]
    """The stage manifest (version, built_now, counts, embedder, bm25, timing, seconds_this_run)."""


def load_stage_embedder(cfg: RunConfig, *, progress: bool = True) -> Embedder:
    """Load the run's embedder (``index.embedder``, ``index.embedder_path``) with the shared cache,
    on ``llm.retrieval_device`` (this stage starts no model server: ``auto`` may take a GPU)."""
    params: IndexParams = cfg.index
    path = cfg.resolve(params.embedder_path) if params.embedder_path else None
    return load_embedder(
        params.embedder,
        path=path,
        cache_dir=cfg.cache_dir,
        batch_size=params.batch_size,
        device=RetrievalDevice(cfg.llm.retrieval_device),
        progress=progress,
    )


def current(cfg: RunConfig) -> Path:
    """Return the folder of the run's current index version."""
    return resolve(cfg.stage_dir("index"))


def run(cfg: RunConfig, *, embedder: Embedder | None = None, progress: bool = True) -> IndexResult:
    """Run 02_index: read the chunks, embed them (cached), build or reuse the index, write the
    stage manifest ``outputs/<run>/02_index/manifest.json``."""
    chunks = read_chunks(cfg)
    embedder = embedder or load_stage_embedder(cfg, progress=progress)
    manifest = ensure(chunks, cfg.stage_dir("index"), embedder=embedder, params=cfg.index)
    return IndexResult(folder=current(cfg), manifest=manifest)
