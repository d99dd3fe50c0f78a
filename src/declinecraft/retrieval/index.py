"""Index stage (Appendix D): chunk vectors in LanceDB, a Tantivy BM25 index over C_pre only.

Layout under ``outputs/<run>/02_index/``::

    manifest.json               the stage manifest: current version, counts, embedder, timing
    index-<version>/
        manifest.json           what this index holds and how it was made
        lancedb/chunks_pre.lance    C_pre chunks: metadata, text, vector, and their dense index
        lancedb/chunks_post.lance   the same for C_post (question generation only)
        tantivy/                BM25 over C_pre only (evaluated systems never see C_post)
        bm25_frequent.npy       each frequent term's BM25 score in every C_pre chunk (two-pass BM25,
                                see :mod:`declinecraft.retrieval.bm25`)

With ``IndexParams.lancedb_uri`` set, the two tables live there instead (a local folder or object
storage such as ``s3://bucket/prefix``), named ``chunks_<corpus>_<version>``; the manifest records
where. How each table is searched (exact or ANN) is :mod:`declinecraft.retrieval.dense`'s.

``<version>`` is ``config.fingerprint`` of the index params, the chunk hash, the embedder's exact
weights and the index format, so changing any of them builds a new index and an unchanged rerun
reuses the old one. Both
indexes are built once after all rows are known, and the build asserts that every row is indexed.

Deviation from the paper (a param, listed in the reproduction notes): Tantivy's BM25 constants are
fixed at k1=1.2, b=0.75; the paper's BM25 used k1=1.5, b=0.75. ``IndexParams.bm25_k1`` must say
1.2 — any other value is an error rather than a silently ignored setting.
``benchmarks/bench_retrieval.py`` measures how much the top-5 changes against k1=1.5.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import pyarrow as pa
import tantivy

from declinecraft.core import catalogue, config, paths
from declinecraft.core.artifacts import CHUNK_COLUMNS, CORPORA, validate_chunks
from declinecraft.core.config import IndexParams
from declinecraft.core.stage_writer import StageWriter, json_text
from declinecraft.retrieval.bm25 import TANTIVY_B, TANTIVY_K1, bm25_analyzer, check_bm25_params, write_frequent
from declinecraft.retrieval.dense import DenseTable, check_dense_params, dense_index, dense_uri, dense_write
from declinecraft.retrieval.embedding_cache import EmbeddingCache
from declinecraft.runtime import replay

if TYPE_CHECKING:
    from declinecraft.retrieval.embedder import Embedder

#: Bump when the on-disk layout changes: every index gets a new version.
INDEX_FORMAT = 3
TABLE = "chunks"
#: The manifest's name, in the stage folder and in each version's folder.
MANIFEST = catalogue.INDEX_MANIFEST.name


# --- chunks ----------------------------------------------------------------------------------


def chunk_hash(chunks: pl.DataFrame) -> str:
    """Return a sha256 over every chunk's id, corpus, metadata and text, in order."""
    digest = hashlib.sha256()
    cols = [chunks[c].cast(pl.Utf8).to_list() if c in chunks.columns else [None] * chunks.height for c in CHUNK_COLUMNS]
    for row in zip(*cols, strict=True):
        digest.update("\x1f".join("\x00" if v is None else v for v in row).encode())
        digest.update(b"\x1e")
    return digest.hexdigest()


def index_version(params: IndexParams, chunks_sha256: str, embedder_key: str = "") -> str:
    """Return the version of the index that ``params`` make from chunks with this hash.

    ``embedder_key`` (the model plus its exact weights, ``Embedder.key``) makes a new wheel
    version or new local weights under the same ``embedder_path`` rebuild the index.
    """
    return config.fingerprint(
        {"format": INDEX_FORMAT, "index": dataclasses.asdict(params), "chunks": chunks_sha256, "embedder": embedder_key}
    )


# --- building --------------------------------------------------------------------------------


def _arrow_table(frame: pl.DataFrame, vectors: np.ndarray, corpus: str) -> pa.Table:
    """One corpus's rows (``row`` = position within the corpus) with their vectors.

    ``frame`` is validated (C_pre rows first), so each corpus is one slice: no copy of the vectors.
    """
    n_pre = int((frame["corpus"] == "pre").sum())
    part = slice(0, n_pre) if corpus == "pre" else slice(n_pre, frame.height)
    table = frame[part].with_row_index("row").with_columns(pl.col("row").cast(pl.Int32)).to_arrow()
    flat = pa.array(np.ascontiguousarray(vectors[part], dtype=np.float32).ravel(), type=pa.float32())
    return table.append_column("vector", pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]))


def table_name(corpus: str, version: str, params: IndexParams) -> str:
    """Return the LanceDB table of one corpus: ``chunks_<corpus>``, or with the version when external."""
    return f"{TABLE}_{corpus}" + (f"_{version}" if params.lancedb_uri else "")


def dense_tables(folder: str | os.PathLike[str], params: IndexParams | None = None) -> dict[str, DenseTable]:
    """Open the LanceDB table of each corpus of the index version in ``folder``.

    ``params`` set the ANN search settings (default: the index's own).
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest.get("format") != INDEX_FORMAT:
        raise ValueError(
            f"the index at {folder} has format {manifest.get('format')}, this code reads format {INDEX_FORMAT}: "
            "rebuild it (make nb NB=02)"
        )
    dense = manifest["dense"]
    uri = dense["uri"] if "://" in dense["uri"] or Path(dense["uri"]).is_absolute() else str(folder / dense["uri"])
    params = params or params_of(manifest)
    return {corpus: DenseTable(uri, dense["tables"][corpus], params) for corpus in CORPORA}


def params_of(manifest: dict[str, Any]) -> IndexParams:
    """Return the IndexParams an index was built with (fields unknown to this version ignored)."""
    known = {f.name for f in dataclasses.fields(IndexParams)}
    return IndexParams(**{k: v for k, v in manifest["params"].items() if k in known})


def _bm25_schema(analyzer: str) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    # Frequencies but no positions: BM25 needs term frequencies, we never run phrase queries.
    builder.add_text_field("text", stored=False, tokenizer_name=analyzer, index_option="freq")
    builder.add_integer_field("row", stored=False, indexed=False, fast=True)
    return builder.build()


def open_bm25(folder: str | os.PathLike[str], analyzer: str) -> tantivy.Index:
    """Open a Tantivy index and register its analyzer."""
    index = tantivy.Index.open(str(folder))
    index.register_tokenizer(analyzer, bm25_analyzer(analyzer))
    return index


def _build_bm25(folder: Path, texts: pl.Series, analyzer: str) -> tantivy.Index:
    folder.mkdir(parents=True)
    index = tantivy.Index(_bm25_schema(analyzer), path=str(folder), reuse=False)
    index.register_tokenizer(analyzer, bm25_analyzer(analyzer))
    # One thread keeps one segment and document order equal to row order (reproducible builds).
    writer = index.writer(heap_size=128_000_000, num_threads=1)
    for row, text in enumerate(text for start in range(0, len(texts), 10_000) for text in texts.slice(start, 10_000)):
        doc = tantivy.Document()
        doc.add_text("text", text)
        doc.add_integer("row", row)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def build(
    chunks: pl.DataFrame,
    folder: str | os.PathLike[str],
    *,
    embedder: Embedder,
    params: IndexParams,
    chunks_sha256: str | None = None,
) -> dict[str, Any]:
    """Build one index (LanceDB table + Tantivy BM25 over C_pre) into ``folder`` atomically.

    The index is written to a temporary sibling and renamed into place only when every count
    check passed, so ``folder`` either holds a complete index or nothing.

    Returns:
        The index manifest (also written to ``folder/manifest.json``).

    Raises:
        ValueError: bad chunks, no C_pre chunk, a BM25 constant Tantivy cannot use, or an embedder
            that is not the one ``params`` name / returns the wrong shape.
        RuntimeError: an index holds a different number of rows than the chunks.
    """
    check_bm25_params(params)
    check_dense_params(params)
    frame = validate_chunks(chunks)
    n_pre = frame.filter(pl.col("corpus") == "pre").height
    n_post = frame.height - n_pre
    if n_pre == 0:
        raise ValueError(
            f"no C_pre chunks among {frame.height} chunks: BM25 and every evaluated pipeline search "
            "C_pre only, so there is nothing to index (check the corpus stage's cut-off)"
        )
    if embedder.name != params.embedder:
        raise ValueError(f"embedder {embedder.name!r} given, but index.embedder is {params.embedder!r}")
    folder = Path(folder)
    sha = chunks_sha256 or chunk_hash(frame)
    embedder_key = getattr(embedder, "key", embedder.name)
    version = index_version(params, sha, embedder_key)
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    timing: dict[str, float] = {}
    try:
        started = time.perf_counter()
        vectors = embedder.embed_documents(frame["text"].to_list())
        timing["embed_seconds"] = time.perf_counter() - started
        if vectors.shape != (frame.height, embedder.dim):
            raise ValueError(
                f"embedder {embedder.name!r} returned shape {vectors.shape}, expected {(frame.height, embedder.dim)}"
            )
        if not np.isfinite(vectors).all():
            raise ValueError(f"embedder {embedder.name!r} returned non-finite values")

        started = time.perf_counter()
        import lancedb

        uri = dense_uri(params, tmp)
        written = {
            c: dense_write(uri, table_name(c, version, params), _arrow_table(frame, vectors, c)) for c in CORPORA
        }
        del vectors  # LanceDB indexes from the tables: the build never holds the vectors twice
        tables = {c: dense_index(written[c], params) for c in CORPORA}
        lance_pre, lance_rows = tables["pre"]["rows"], tables["pre"]["rows"] + tables["post"]["rows"]
        timing["lancedb_seconds"] = time.perf_counter() - started
        if (lance_rows, lance_pre) != (frame.height, n_pre):
            raise RuntimeError(
                f"LanceDB holds {lance_rows} rows ({lance_pre} C_pre), expected {frame.height} ({n_pre} C_pre)"
            )

        started = time.perf_counter()
        pre_texts = frame.filter(pl.col("corpus") == "pre")["text"]
        bm25 = _build_bm25(tmp / "tantivy", pre_texts, params.bm25_analyzer)
        bm25_docs = bm25.searcher().num_docs
        if bm25_docs != n_pre:
            raise RuntimeError(f"Tantivy indexed {bm25_docs} documents, expected {n_pre} C_pre chunks")
        frequent = write_frequent(bm25, tmp, params.bm25_frequent_share)
        timing["bm25_seconds"] = time.perf_counter() - started

        manifest = {
            "format": INDEX_FORMAT,
            "version": version,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "params": dataclasses.asdict(params),
            "chunks_sha256": sha,
            "counts": {
                "pre": n_pre,
                "post": n_post,
                "lancedb_rows": lance_rows,
                "bm25_docs": bm25_docs,
            },
            "embedder": {
                "name": embedder.name,
                "key": embedder_key,
                "dim": int(embedder.dim),
            },
            "bm25": {
                "engine": str(tantivy.__version__),  # type: ignore[attr-defined]  # the binding's stubs omit it
                "k1": TANTIVY_K1,
                "b": TANTIVY_B,
                "analyzer": params.bm25_analyzer,
                "corpus": "pre",
                "search": "every query term at once up to index.bm25_exact_max_rows chunks, else two passes "
                "(index.bm25_candidates chunks by the rarer terms, the frequent terms' stored scores added)",
                "frequent": frequent,
            },
            "dense": {
                "engine": f"lancedb {lancedb.__version__}",
                "uri": uri if params.lancedb_uri else "lancedb",
                "tables": tables,
                "search": "flat (exact inner product) up to index.dense_flat_max_rows chunks, else "
                f"{params.dense_index} (nprobes, ef, refine_factor from the index params)",
            },
            "timing": {k: round(v, 3) for k, v in timing.items()},
        }
        paths.write_text_atomic(tmp / MANIFEST, json_text(manifest, sort_keys=True))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return manifest


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Return the manifest of an index folder (a version folder or the stage folder).

    Raises:
        FileNotFoundError: no manifest there (the index was never built, or the build failed).
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"no index at {Path(folder)}: {path} is missing (run {catalogue.notebook('index')})")
    return json.loads(path.read_text(encoding="utf-8"))


def check_counts(folder: str | os.PathLike[str]) -> dict[str, int]:
    """Recount an index on disk and check it against its manifest; return the counts.

    Raises:
        RuntimeError: LanceDB or Tantivy holds a different number of rows than the manifest says.
    """
    folder = resolve(folder)
    manifest = read_manifest(folder)
    tables = dense_tables(folder)
    found = {
        "pre": tables["pre"].count(),
        "post": tables["post"].count(),
        "lancedb_rows": tables["pre"].count() + tables["post"].count(),
        "bm25_docs": open_bm25(folder / "tantivy", manifest["bm25"]["analyzer"]).searcher().num_docs,
    }
    want = manifest["counts"]
    if found != want or found["bm25_docs"] != found["pre"] or found["lancedb_rows"] != found["pre"] + found["post"]:
        raise RuntimeError(f"{folder}: on disk {found}, manifest says {want}")
    return found


def resolve(folder: str | os.PathLike[str]) -> Path:
    """Return the index version folder that ``folder`` names: itself, or the stage's current one."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    if "path" in manifest:  # a stage manifest points at its current version
        return folder / manifest["path"]
    return folder


def ensure(
    chunks: pl.DataFrame,
    stage_folder: str | os.PathLike[str],
    *,
    embedder: Embedder,
    params: IndexParams,
    keep_stale: bool = False,
) -> dict[str, Any]:
    """Reuse the index these chunks and params make, or build it; return the stage manifest.

    Other ``index-*`` versions in ``stage_folder`` are deleted after a successful build (vectors
    stay in the embedding cache, so switching back is cheap) unless ``keep_stale``.
    """
    started = time.perf_counter()
    check_bm25_params(params)
    check_dense_params(params)
    frame = validate_chunks(chunks)
    sha = chunk_hash(frame)
    version = index_version(params, sha, getattr(embedder, "key", embedder.name))
    stage_folder = Path(stage_folder)
    target = stage_folder / catalogue.INDEX_VERSION.file(version)
    built = True
    if (target / MANIFEST).is_file():
        manifest = read_manifest(target)
        built = False
        # A replay builds the index afresh: the ledger lists the vectors a build would read.
        texts = frame["text"].to_list()
        replay.ledger_note(
            "embedding", getattr(embedder, "key", embedder.name), [EmbeddingCache.digest("document", t) for t in texts]
        )
    else:
        manifest = build(frame, target, embedder=embedder, params=params, chunks_sha256=sha)
    if not keep_stale:
        for other in stage_folder.glob(catalogue.INDEX_VERSION.pattern):
            if other != target and other.is_dir():
                shutil.rmtree(other)
    stage = {
        "stage": "index",
        "path": target.name,
        "built_now": built,
        "seconds_this_run": round(time.perf_counter() - started, 3),
        **manifest,
    }
    writer = StageWriter("index", stage_folder)
    writer.manifest(stage, sort_keys=True)
    writer.finish()
    return stage
