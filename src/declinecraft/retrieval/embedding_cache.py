"""The embedding cache: every vector stored once per (model key, kind, text), shared by processes.

:class:`CachedEmbedder` wraps any embedder with it (``<cache>/embeddings/embeddings.sqlite``), so
re-indexing unchanged chunks costs nothing; the reranker keeps its scores in a second store of the
same kind (``<cache>/rerank/scores.sqlite``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from declinecraft.retrieval.embedder import Embedder, Kind, check_texts
from declinecraft.runtime import replay


class EmbeddingCache:
    """SQLite store of vectors keyed by (model key, kind, sha256 of the text).

    WAL mode and a long busy timeout let several processes share it; a write is one transaction,
    so a killed run leaves either all of a batch or none of it.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=120, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, sha TEXT NOT NULL, "
            "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, sha)) WITHOUT ROWID"
        )
        self._db.commit()

    @staticmethod
    def digest(kind: Kind, text: str) -> str:
        """Return the cache key of one text embedded as ``kind``."""
        return hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()

    def get_many(self, model: str, shas: Sequence[str], dim: int) -> dict[str, NDArray[np.float32]]:
        """Return the cached vectors among ``shas`` (missing ones are absent)."""
        found: dict[str, NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(shas))
        with self._lock:
            for start in range(0, len(unique), 500):
                part = unique[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT sha, dim, vec FROM vectors WHERE model = ? AND sha IN ({marks})",
                    [model, *part],
                ).fetchall()
                for sha, got_dim, blob in rows:
                    if got_dim == dim:
                        found[sha] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: Sequence[tuple[str, NDArray[np.float32]]]) -> None:
        """Store vectors (existing keys are kept)."""
        rows = [(model, sha, int(v.shape[0]), np.asarray(v, np.float32).tobytes()) for sha, v in items]
        with self._lock:
            with self._db:
                self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def count(self, model: str | None = None) -> int:
        """Return how many vectors are stored (for one model, or all)."""
        with self._lock:
            if model is None:
                return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
            return int(self._db.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


class CachedEmbedder:
    """Wrap an embedder so each (model, kind, text) is computed once, ever.

    ``hits`` and ``misses`` count texts served from and added to the cache since creation.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner, self.cache = inner, cache
        self.name, self.dim = inner.name, inner.dim
        self.key = getattr(inner, "key", inner.name)
        self.hits = 0
        self.misses = 0

    def _run(self, texts: Sequence[str], kind: Kind) -> NDArray[np.float32]:
        texts = check_texts(texts, f"{kind}s")
        shas = [EmbeddingCache.digest(kind, t) for t in texts]
        found = self.cache.get_many(self.key, shas, self.dim)
        replay.ledger_note("embedding", self.key, shas)
        self.hits += sum(1 for s in shas if s in found)
        todo = list(dict.fromkeys(s for s in shas if s not in found))
        if todo:
            first = {sha: i for i, sha in reversed(list(enumerate(shas)))}
            if replay.replaying():
                raise replay.replay_miss("embedding", self.key, len(todo), texts[first[todo[0]]])
            new_texts = [texts[first[s]] for s in todo]
            embed = self.inner.embed_documents if kind == "document" else self.inner.embed_queries
            vectors = embed(new_texts)
            if vectors.shape != (len(todo), self.dim):
                raise ValueError(f"{self.name}: returned shape {vectors.shape}, expected {(len(todo), self.dim)}")
            self.cache.put_many(self.key, list(zip(todo, vectors, strict=True)))
            found.update(zip(todo, vectors, strict=True))
        self.misses += len(todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[s] for s in shas]).astype(np.float32, copy=False)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed chunk texts, from the cache where possible."""
        return self._run(texts, "document")

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed queries, from the cache where possible."""
        return self._run(texts, "query")
