"""Dense search in LanceDB: one table per corpus, exact below a size threshold, ANN above it.

A corpus of at most ``IndexParams.dense_flat_max_rows`` chunks gets an IVF_FLAT index with a
single partition: every query scores every full-precision vector, so the search is exact (flat),
but LanceDB keeps the vectors in its index cache instead of reading the table file per query
(measured at 11,612 x 384: 5 ms against 36 ms a query). A larger corpus gets the ANN index
``dense_index``, one IVF partition per ``dense_partition_rows`` chunks:

* ``ivf_flat`` (the default): each query scores the full-precision vectors of the
  ``dense_nprobes`` partitions nearest to it, exactly; only a neighbour in a partition it did not
  probe can be missed.
* ``ivf_hnsw_sq``: an HNSW graph per partition over 8-bit scalar-quantized vectors, searched with
  ``dense_ef`` candidates, the best ``dense_refine_factor`` x depth rescored at full precision.
* ``ivf_pq``: product-quantized codes per partition, rescored the same way.

LanceDB trains the IVF partitions with a k-means it does not let us seed, so two builds of an ANN
index may miss different neighbours; the exact index below the threshold (the paper's 11,612
chunks included) is the same whatever the build.

``benchmarks/bench_retrieval_scale.py`` measured the three at a million chunks (README "Retrieval
at scale"); IVF_FLAT built fastest and searched fastest at the highest recall, because scoring
1,000 full vectors a partition costs less than walking a graph and rereading vectors from the
table to rescore quantized candidates.

Vectors are unit length, so the distance is LanceDB's ``dot`` (1 - inner product) and the score a
hit carries is the cosine similarity. Queries go through LanceDB's async API on its own
background event loop: one multi-vector query per block (LanceDB shares one scan among them),
and the calls also work inside a running event loop (Jupyter).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from declinecraft.core import paths
from declinecraft.core.config import IndexParams

# LanceDB logs a WARN for every new table ("No existing dataset ... will be created").
os.environ.setdefault("LANCEDB_LOG", "error")


def _run(coroutine: Any) -> Any:
    """Run a LanceDB coroutine on LanceDB's own background loop (lancedb is imported lazily: slow)."""
    from lancedb.background_loop import LOOP

    return LOOP.run(coroutine)


#: The ANN index kinds ``IndexParams.dense_index`` may name.
DENSE_INDEXES = ("ivf_flat", "ivf_hnsw_sq", "ivf_pq")
VECTOR = "vector"
WRITE_BATCH_ROWS = 20_000
Rows = tuple[NDArray[np.int64], NDArray[np.float32]]
_EMPTY: Rows = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))


def check_dense_params(params: IndexParams) -> None:
    """Raise ValueError naming the ``index.dense_*`` field that cannot build or search an index."""
    if params.dense_index not in DENSE_INDEXES:
        raise ValueError(f"index.dense_index is {params.dense_index!r}; known: {', '.join(DENSE_INDEXES)}")
    for name in (
        "dense_flat_max_rows",
        "dense_partition_rows",
        "dense_hnsw_m",
        "dense_hnsw_ef_construction",
        "dense_nprobes",
        "dense_ef",
    ):
        if getattr(params, name) < 1:
            raise ValueError(f"index.{name} must be >= 1, got {getattr(params, name)}")
    for name in ("dense_partitions", "dense_pq_sub_vectors", "dense_refine_factor"):
        if getattr(params, name) < 0:
            raise ValueError(f"index.{name} must be >= 0 (0 = automatic / off), got {getattr(params, name)}")


def dense_uri(params: IndexParams, folder: str | os.PathLike[str]) -> str:
    """Return the LanceDB URI of an index whose version folder is ``folder``.

    "" means ``folder/lancedb``; a URI with a scheme (``s3://``…) is used as it is; any other
    relative path is resolved against the project root (like ``embedder_path``).
    """
    uri = params.lancedb_uri
    if not uri:
        return str(Path(folder) / "lancedb")
    if "://" in uri or Path(uri).is_absolute():
        return uri
    return str(paths.find_root(Path(folder).resolve()) / uri)


def _partitions(params: IndexParams, rows: int) -> int:
    return params.dense_partitions or max(1, round(rows / params.dense_partition_rows))


def index_config(params: IndexParams, rows: int, dim: int) -> tuple[str, Any]:
    """Return (kind, LanceDB index config) for a corpus of ``rows`` vectors of ``dim`` dimensions."""
    from lancedb.index import HnswSq, IvfFlat, IvfPq

    if rows <= params.dense_flat_max_rows:
        return "flat", IvfFlat(distance_type="dot", num_partitions=1)
    parts = _partitions(params, rows)
    if params.dense_index == "ivf_flat":
        return "ivf_flat", IvfFlat(distance_type="dot", num_partitions=parts)
    if params.dense_index == "ivf_pq":
        sub = params.dense_pq_sub_vectors or max(1, dim // 8)
        if dim % sub:
            raise ValueError(f"index.dense_pq_sub_vectors={sub} does not divide the vector dimension {dim}")
        return "ivf_pq", IvfPq(distance_type="dot", num_partitions=parts, num_sub_vectors=sub)
    return "ivf_hnsw_sq", HnswSq(
        distance_type="dot",
        num_partitions=parts,
        m=params.dense_hnsw_m,
        ef_construction=params.dense_hnsw_ef_construction,
    )


def dense_write(uri: str, name: str, table: pa.Table) -> dict[str, Any]:
    """Write one corpus's rows (a ``vector`` column included) as LanceDB table ``name``, unindexed.

    Returns:
        What :func:`dense_index` needs, with the write's seconds.
    """
    import lancedb

    started = time.perf_counter()
    db = _run(lancedb.connect_async(uri))
    # Streamed in batches: handed the whole table, LanceDB buffers copies of it while it writes
    # (measured at a million 384-d chunks with their texts: 3 GB above the table itself).
    batches = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=WRITE_BATCH_ROWS))
    _run(db.create_table(name, batches, mode="overwrite"))
    return {
        "uri": uri,
        "table": name,
        "dim": table.schema.field(VECTOR).type.list_size,
        "write_seconds": round(time.perf_counter() - started, 3),
    }


def dense_index(written: dict[str, Any], params: IndexParams) -> dict[str, Any]:
    """Index a table :func:`dense_write` wrote; LanceDB reads the vectors back from the table.

    Writing every table before indexing any lets the caller free its copy of the vectors first,
    so the build never holds them twice (at a million 384-d chunks, 1.5 GB).

    Returns:
        What the index manifest records: table, rows, kind (``flat`` or the ANN kind), partitions
        and seconds.
    """
    check_dense_params(params)
    import lancedb

    db = _run(lancedb.connect_async(written["uri"]))
    lance = _run(db.open_table(written["table"]))
    rows = _run(lance.count_rows())
    kind, config = index_config(params, rows, written["dim"])
    started = time.perf_counter()
    _run(lance.create_index(VECTOR, config=config))
    return {
        "table": written["table"],
        "rows": rows,
        "kind": kind,
        "partitions": int(config.num_partitions),
        "write_seconds": written["write_seconds"],
        "index_seconds": round(time.perf_counter() - started, 3),
    }


class DenseTable:
    """One corpus's vectors in LanceDB, searched the way its manifest entry says (flat or ANN)."""

    def __init__(self, uri: str, entry: dict[str, Any], params: IndexParams) -> None:
        """Open table ``entry["table"]`` at ``uri``; ``params`` give the ANN search settings."""
        check_dense_params(params)
        self.kind: str = entry["kind"]
        self.rows: int = int(entry["rows"])
        self.params = params
        import lancedb

        db = _run(lancedb.connect_async(uri))
        self._table = _run(db.open_table(entry["table"]))

    @property
    def schema(self) -> pa.Schema:
        """The table's Arrow schema."""
        return _run(self._table.schema())

    def count(self) -> int:
        """Return the number of rows LanceDB holds (recounted, not the manifest's)."""
        return int(_run(self._table.count_rows()))

    def columns(self, names: Sequence[str]) -> pa.Table:
        """Return every row's ``names`` columns (never the vectors unless asked), in table order."""
        return _run(self._table.query().select(list(names)).to_arrow())

    def _query(self, vectors: list[NDArray[np.float32]], depth: int) -> Any:
        query = self._table.query().nearest_to(vectors).distance_type("dot").select(["row", "_distance"]).limit(depth)
        if self.kind == "flat":
            return query.nprobes(1)
        p = self.params
        query = query.nprobes(p.dense_nprobes)
        if self.kind == "ivf_flat":  # full-precision vectors: nothing to rescore
            return query
        if self.kind == "ivf_hnsw_sq":  # LanceDB needs ef >= every candidate the refine step rescores
            query = query.ef(max(p.dense_ef, depth * max(1, p.dense_refine_factor)))
        return query.refine_factor(p.dense_refine_factor) if p.dense_refine_factor else query

    def search(self, vectors: NDArray[np.float32], depth: int, *, block: int = 256) -> list[Rows]:
        """Return (rows, cosine similarities), best first (ties by row), at most ``depth`` per query vector."""
        if self.rows == 0 or len(vectors) == 0:
            return [_EMPTY for _ in range(len(vectors))]
        out: list[Rows] = []
        for start in range(0, len(vectors), block):
            part = [np.ascontiguousarray(v, dtype=np.float32) for v in vectors[start : start + block]]
            result = _run(self._query(part, depth).to_arrow())
            rows = result["row"].to_numpy().astype(np.int64)
            scores = (1.0 - result["_distance"].to_numpy()).astype(np.float32)
            which = (
                result["query_index"].to_numpy()
                if "query_index" in result.column_names
                else np.zeros(len(rows), dtype=np.int64)
            )
            order = np.lexsort((rows, -scores, which))
            rows, scores, which = rows[order], scores[order], which[order]
            bounds = np.searchsorted(which, np.arange(len(part) + 1))
            out.extend((rows[a:b][:depth], scores[a:b][:depth]) for a, b in itertools.pairwise(bounds))
        return out
