"""Tests for declinecraft.retrieval.index: chunk checks, versioning, the LanceDB + Tantivy build."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import tantivy

from declinecraft.retrieval import index
from declinecraft.retrieval.hashing import HashEmbedder
from tests.support import retrieval_data


class TestValidateChunks:
    def test_pre_first_and_all_columns(self) -> None:
        """C_pre rows come first, in order, and every metadata column exists."""
        shuffled = retrieval_data.make_chunks()[::-1]
        frame = index.validate_chunks(shuffled.select("chunk_id", "text", "corpus"))
        assert frame.columns == list(index.CHUNK_COLUMNS)
        assert frame["corpus"].to_list() == ["pre"] * retrieval_data.N_PRE + ["post"] * retrieval_data.N_POST
        assert frame["chunk_id"][0] == shuffled.filter(pl.col("corpus") == "pre")["chunk_id"][0]

    def test_missing_column(self) -> None:
        """A missing required column is named."""
        with pytest.raises(ValueError, match="'corpus'"):
            index.validate_chunks(retrieval_data.make_chunks().drop("corpus"))

    def test_duplicate_id(self) -> None:
        """A repeated chunk_id is named."""
        frame = retrieval_data.make_chunks()
        with pytest.raises(ValueError, match="'Horse#0' occurs 2 times"):
            index.validate_chunks(pl.concat([frame, frame.head(1)]))

    def test_bad_corpus(self) -> None:
        """A corpus other than pre/post is named with its chunk."""
        frame = retrieval_data.make_chunks().with_columns(corpus=pl.lit("mid"))
        with pytest.raises(ValueError, match="'Horse#0' has corpus 'mid'"):
            index.validate_chunks(frame)

    def test_null_text(self) -> None:
        """A chunk without text is an error naming the row."""
        frame = retrieval_data.make_chunks().with_columns(
            text=pl.when(pl.col("chunk_id") == "Saddle#0").then(None).otherwise(pl.col("text"))
        )
        with pytest.raises(ValueError, match="row 6 has no text"):
            index.validate_chunks(frame)


class TestChunkHash:
    def test_stable(self) -> None:
        """The same chunks hash the same."""
        assert index.chunk_hash(retrieval_data.make_chunks()) == index.chunk_hash(retrieval_data.make_chunks())

    def test_changes_with_text(self) -> None:
        """Editing one character of one chunk changes the hash."""
        edited = retrieval_data.make_chunks().with_columns(pl.col("text").str.replace("saddle", "Saddle"))
        assert index.chunk_hash(edited) != index.chunk_hash(retrieval_data.make_chunks())


class TestIndexVersion:
    def test_depends_on_params_and_chunks(self) -> None:
        """The version changes with any index param and with the chunk hash."""
        base = index.index_version(retrieval_data.make_params(), "abc")
        assert base == index.index_version(retrieval_data.make_params(), "abc")
        assert base != index.index_version(retrieval_data.make_params(rrf_k=10), "abc")
        assert base != index.index_version(retrieval_data.make_params(), "abd")

    @pytest.mark.parametrize("field", ["dense_flat_max_rows", "dense_nprobes", "dense_refine_factor"])
    def test_depends_on_dense_params(self, field: str) -> None:
        """The dense threshold and ANN settings version the index like every other param."""
        changed = retrieval_data.make_params(**{field: getattr(retrieval_data.make_params(), field) + 1})
        assert index.index_version(changed, "abc") != index.index_version(retrieval_data.make_params(), "abc")

    def test_depends_on_embedder_weights(self) -> None:
        """Other weights under the same model name give another version."""
        assert index.index_version(retrieval_data.make_params(), "abc", "m@1.0") != index.index_version(
            retrieval_data.make_params(), "abc", "m@1.1"
        )


class TestBuild:
    def test_counts(self, tmp_path: Path) -> None:
        """Every chunk is in LanceDB and every C_pre chunk (only) in Tantivy."""
        manifest = index.build(
            retrieval_data.make_chunks(),
            tmp_path / "ix",
            embedder=HashEmbedder(retrieval_data.DIM),
            params=retrieval_data.make_params(),
        )
        assert manifest["counts"] == {
            "pre": retrieval_data.N_PRE,
            "post": retrieval_data.N_POST,
            "lancedb_rows": len(retrieval_data.CHUNKS),
            "bm25_docs": retrieval_data.N_PRE,
        }
        assert manifest["embedder"]["dim"] == retrieval_data.DIM and manifest["bm25"]["k1"] == 1.2
        assert json.loads((tmp_path / "ix" / "manifest.json").read_text()) == manifest
        assert index.open_bm25(tmp_path / "ix" / "tantivy", "en_stem").searcher().num_docs == retrieval_data.N_PRE

    def test_dense_tables(self, tmp_path: Path) -> None:
        """Each corpus gets its own LanceDB table, searched flat below the threshold."""
        manifest = index.build(
            retrieval_data.make_chunks(),
            tmp_path / "ix",
            embedder=HashEmbedder(retrieval_data.DIM),
            params=retrieval_data.make_params(),
        )
        tables = manifest["dense"]["tables"]
        assert {c: (t["table"], t["rows"], t["kind"]) for c, t in tables.items()} == {
            "pre": ("chunks_pre", retrieval_data.N_PRE, "flat"),
            "post": ("chunks_post", retrieval_data.N_POST, "flat"),
        }
        assert (tmp_path / "ix" / "lancedb" / "chunks_pre.lance").is_dir()

    def test_bad_dense_index(self, tmp_path: Path) -> None:
        """An unknown ANN kind fails before any work."""
        with pytest.raises(ValueError, match="dense_index"):
            index.build(
                retrieval_data.make_chunks(),
                tmp_path / "ix",
                embedder=HashEmbedder(retrieval_data.DIM),
                params=retrieval_data.make_params(dense_index="lsh"),
            )
        assert not (tmp_path / "ix").exists()

    def test_no_pre_chunks(self, tmp_path: Path) -> None:
        """A corpus without C_pre chunks is a clear error, and nothing is written."""
        post_only = retrieval_data.make_chunks().filter(pl.col("corpus") == "post")
        with pytest.raises(ValueError, match="no C_pre chunks"):
            index.build(
                post_only,
                tmp_path / "ix",
                embedder=HashEmbedder(retrieval_data.DIM),
                params=retrieval_data.make_params(),
            )
        assert not (tmp_path / "ix").exists()

    def test_no_post_chunks(self, tmp_path: Path) -> None:
        """A corpus without C_post chunks builds (C_post is only for question generation)."""
        pre_only = retrieval_data.make_chunks().filter(pl.col("corpus") == "pre")
        manifest = index.build(
            pre_only, tmp_path / "ix", embedder=HashEmbedder(retrieval_data.DIM), params=retrieval_data.make_params()
        )
        assert manifest["counts"]["post"] == 0

    def test_wrong_embedder(self, tmp_path: Path) -> None:
        """An embedder other than the one the params name is refused."""
        with pytest.raises(ValueError, match="index.embedder is 'hash-64'"):
            index.build(
                retrieval_data.make_chunks(),
                tmp_path / "ix",
                embedder=HashEmbedder(32),
                params=retrieval_data.make_params(),
            )

    def test_failed_build_leaves_nothing(self, tmp_path: Path) -> None:
        """An embedder that fails mid-build leaves neither the index nor a temporary folder."""

        class Broken(retrieval_data.CountingEmbedder):
            def embed_documents(self, texts):  # type: ignore[no-untyped-def]
                raise RuntimeError("model crashed")

        with pytest.raises(RuntimeError, match="model crashed"):
            index.build(
                retrieval_data.make_chunks(), tmp_path / "ix", embedder=Broken(), params=retrieval_data.make_params()
            )
        assert list(tmp_path.iterdir()) == []

    def test_rejects_paper_k1(self, tmp_path: Path) -> None:
        """Asking Tantivy for the paper's k1=1.5 fails before any work."""
        with pytest.raises(ValueError, match="k1=1.2"):
            index.build(
                retrieval_data.make_chunks(),
                tmp_path / "ix",
                embedder=HashEmbedder(retrieval_data.DIM),
                params=retrieval_data.make_params(bm25_k1=1.5),
            )


class TestEnsure:
    def test_reuses_unchanged(self, tmp_path: Path) -> None:
        """A second run with the same chunks and params embeds nothing and keeps the version."""
        embedder = retrieval_data.CountingEmbedder()
        first = index.ensure(
            retrieval_data.make_chunks(), tmp_path, embedder=embedder, params=retrieval_data.make_params()
        )
        second = index.ensure(
            retrieval_data.make_chunks(), tmp_path, embedder=embedder, params=retrieval_data.make_params()
        )
        assert embedder.documents == len(retrieval_data.CHUNKS)
        assert (first["built_now"], second["built_now"]) == (True, False)
        assert first["version"] == second["version"]

    @pytest.mark.parametrize("change", ["params", "chunks"])
    def test_rebuilds_on_change(self, tmp_path: Path, change: str) -> None:
        """Changed params or chunks give a new version folder; the stale one is removed."""
        first = index.ensure(
            retrieval_data.make_chunks(),
            tmp_path,
            embedder=HashEmbedder(retrieval_data.DIM),
            params=retrieval_data.make_params(),
        )
        chunks = (
            retrieval_data.make_chunks().with_columns(pl.col("text").str.replace("saddle", "harness"))
            if change == "chunks"
            else retrieval_data.make_chunks()
        )
        params = retrieval_data.make_params(rrf_k=30) if change == "params" else retrieval_data.make_params()
        second = index.ensure(chunks, tmp_path, embedder=HashEmbedder(retrieval_data.DIM), params=params)
        assert second["built_now"] and second["version"] != first["version"]
        assert sorted(p.name for p in tmp_path.glob("index-*")) == [second["path"]]

    def test_stage_manifest(self, tmp_path: Path) -> None:
        """The stage manifest points at the current version and replaces NOT_BUILT.md."""
        (tmp_path / "NOT_BUILT.md").write_text("not built")
        stage = index.ensure(
            retrieval_data.make_chunks(),
            tmp_path,
            embedder=HashEmbedder(retrieval_data.DIM),
            params=retrieval_data.make_params(),
        )
        assert index.resolve(tmp_path) == tmp_path / stage["path"]
        assert not (tmp_path / "NOT_BUILT.md").exists()


class TestReadManifest:
    def test_missing(self, tmp_path: Path) -> None:
        """A folder without an index is a FileNotFoundError naming the file."""
        with pytest.raises(FileNotFoundError, match="manifest.json is missing"):
            index.read_manifest(tmp_path)


class TestResolve:
    def test_version_folder_is_itself(self, tmp_path: Path) -> None:
        """A version folder resolves to itself."""
        assert index.resolve(retrieval_data.build_index(tmp_path / "ix")) == tmp_path / "ix"


class TestCheckCounts:
    def test_counts_match(self, tmp_path: Path) -> None:
        """Recounting a fresh index gives the manifest's counts."""
        assert index.check_counts(retrieval_data.build_index(tmp_path / "ix")) == {
            "pre": retrieval_data.N_PRE,
            "post": retrieval_data.N_POST,
            "lancedb_rows": len(retrieval_data.CHUNKS),
            "bm25_docs": retrieval_data.N_PRE,
        }

    def test_tampered_manifest(self, tmp_path: Path) -> None:
        """A manifest that disagrees with the files on disk is an error."""
        folder = retrieval_data.build_index(tmp_path / "ix")
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["counts"]["pre"] += 1
        (folder / "manifest.json").write_text(json.dumps(manifest))
        with pytest.raises(RuntimeError, match="on disk"):
            index.check_counts(folder)


class TestOpenBm25:
    def test_term_query(self, tmp_path: Path) -> None:
        """The on-disk index answers a term query with its analyzer registered."""
        bm25 = index.open_bm25(retrieval_data.build_index(tmp_path / "ix") / "tantivy", "en_stem")
        query = tantivy.Query.term_query(bm25.schema, "text", "quokkaberri", index_option="freq")
        assert len(bm25.searcher().search(query, 5).hits) == 1
