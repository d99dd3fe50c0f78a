"""Builders of synthetic chunks and indexes with known answers, for the retrieval tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from declinecraft.core.config import IndexParams, RunConfig
from declinecraft.retrieval import index
from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.retrieval.retrieve import Hit

#: (chunk_id, title, body, corpus). "quokkaberry" occurs in pre-4 only; the post chunks are the
#: only ones about copper horse armor and the harness.
CHUNKS: tuple[tuple[str, str, str, str], ...] = (
    ("Horse#0", "Horse", "A horse is a passive mob that players can tame and ride with a saddle.", "pre"),
    (
        "Horse_Armor#0",
        "Horse Armor",
        "Horse armor protects a horse: iron gives 5 armor points, gold 7, diamond 11.",
        "pre",
    ),
    (
        "Copper_Ingot#0",
        "Copper Ingot",
        "Copper ingots are smelted from raw copper in a furnace or a blast furnace.",
        "pre",
    ),
    (
        "Oxidation#0",
        "Oxidation",
        "Copper blocks oxidize over time and turn green unless they are waxed with honeycomb.",
        "pre",
    ),
    ("Quokkaberry#0", "Quokkaberry", "The quokkaberry is a rare fruit that grows on a small shrub.", "pre"),
    (
        "Skeleton#0",
        "Skeleton",
        "Skeletons shoot arrows with a bow and burn in daylight unless they wear a helmet.",
        "pre",
    ),
    ("Saddle#0", "Saddle", "A saddle lets a player control a horse, a pig or a strider.", "pre"),
    ("Furnace#0", "Furnace", "A furnace smelts ores and cooks food using fuel such as coal.", "pre"),
    ("Copper_Horse_Armor#0", "Copper Horse Armor", "Copper horse armor gives a horse 4 armor points.", "post"),
    ("Harness#0", "Harness", "A harness lets players ride a happy ghast.", "post"),
)

N_PRE = sum(1 for c in CHUNKS if c[3] == "pre")
N_POST = len(CHUNKS) - N_PRE
PRE_IDS = [c[0] for c in CHUNKS if c[3] == "pre"]
POST_IDS = [c[0] for c in CHUNKS if c[3] == "post"]
DIM = 64


def make_chunks(rows: Sequence[tuple[str, str, str, str]] = CHUNKS) -> pl.DataFrame:
    """Return chunk rows shaped like the corpus stage's output."""
    return pl.DataFrame(
        {
            "chunk_id": [r[0] for r in rows],
            "title": [r[1] for r in rows],
            "text": [f"[Page: {r[1]}]\n{r[2]}" for r in rows],
            "url": [f"http://wiki.test/{r[1].replace(' ', '_')}" for r in rows],
            "revision_id": list(range(100, 100 + len(rows))),
            "timestamp": ["2025-01-01T00:00:00Z"] * len(rows),
            "corpus": [r[3] for r in rows],
        },
        schema_overrides={"revision_id": pl.Int64},
    )


def make_params(**overrides: object) -> IndexParams:
    """Index params for the hash test embedder."""
    return IndexParams(embedder=f"hash-{DIM}", **overrides)  # type: ignore[arg-type]


class CountingEmbedder:
    """A hash embedder that counts the texts it embeds (to check caching and reuse)."""

    def __init__(self, dim: int = DIM, name: str | None = None) -> None:
        self._inner = HashEmbedder(dim)
        self.name = name or self._inner.name
        self.dim = dim
        self.key = f"{self.name}@counting"
        self.documents = 0
        self.queries = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents += len(texts)
        return self._inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.queries += len(texts)
        return self._inner.embed_queries(texts)


def build_index(folder: Path, chunks: pl.DataFrame | None = None, **params: object) -> Path:
    """Build the synthetic index into ``folder`` with the hash embedder; return the folder."""
    index.build(
        make_chunks() if chunks is None else chunks, folder, embedder=HashEmbedder(DIM), params=make_params(**params)
    )
    return folder


def write_chunks(cfg: RunConfig, chunks: pl.DataFrame) -> None:
    """Write ``chunks`` as the run's corpus-stage files, one per corpus half."""
    folder = cfg.stage_dir("corpus")
    folder.mkdir(parents=True, exist_ok=True)
    for corpus in ("pre", "post"):
        chunks.filter(pl.col("corpus") == corpus).write_parquet(folder / f"chunks_{corpus}.parquet")


class LengthReranker:
    """Scores a pair by how many times the query's first word occurs in the passage."""

    name = "fake"

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.pairs.extend(pairs)
        return np.array([p.lower().count(q.split()[0].lower()) for q, p in pairs], dtype=np.float32)


def ids(hits: list[Hit]) -> list[str]:
    """The chunk ids of ``hits``, in order."""
    return [h.chunk_id for h in hits]
