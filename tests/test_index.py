"""Tests for declinecraft.retrieval.index: chunk checks, versioning, the LanceDB + Tantivy build, the stage."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import tantivy

from declinecraft.core import artifacts, config
from declinecraft.retrieval import bm25, index
from declinecraft.retrieval import stage as index_stage
from declinecraft.retrieval.hashing import HashEmbedder
from retrieval_data import CHUNKS, DIM, N_POST, N_PRE, CountingEmbedder, build_index, make_chunks, make_params


class TestBm25Analyzer:
    def test_en_stem(self) -> None:
        """en_stem lowercases, folds accents, stems and splits on punctuation."""
        assert bm25.bm25_analyzer("en_stem").analyze('Horses\' "Armor": naïve-ghasts?') == [
            "hors",
            "armor",
            "naiv",
            "ghast",
        ]

    def test_default(self) -> None:
        """default only lowercases."""
        assert bm25.bm25_analyzer("default").analyze("Horses Armor") == ["horses", "armor"]

    def test_unknown(self) -> None:
        """An unknown analyzer name is a ValueError."""
        with pytest.raises(ValueError, match="unknown BM25 analyzer"):
            bm25.bm25_analyzer("klingon")


class TestCheckBm25Params:
    def test_tantivy_constants_pass(self) -> None:
        """k1=1.2, b=0.75 are accepted."""
        bm25.check_bm25_params(make_params())

    @pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (1.2, 0.4)])
    def test_other_constants_rejected(self, k1: float, b: float) -> None:
        """Any other BM25 constant is refused with the reason."""
        with pytest.raises(ValueError, match="Tantivy's BM25 is fixed"):
            bm25.check_bm25_params(make_params(bm25_k1=k1, bm25_b=b))


class TestValidateChunks:
    def test_pre_first_and_all_columns(self) -> None:
        """C_pre rows come first, in order, and every metadata column exists."""
        shuffled = make_chunks()[::-1]
        frame = index.validate_chunks(shuffled.select("chunk_id", "text", "corpus"))
        assert frame.columns == list(index.CHUNK_COLUMNS)
        assert frame["corpus"].to_list() == ["pre"] * N_PRE + ["post"] * N_POST
        assert frame["chunk_id"][0] == shuffled.filter(pl.col("corpus") == "pre")["chunk_id"][0]

    def test_missing_column(self) -> None:
        """A missing required column is named."""
        with pytest.raises(ValueError, match="'corpus'"):
            index.validate_chunks(make_chunks().drop("corpus"))

    def test_duplicate_id(self) -> None:
        """A repeated chunk_id is named."""
        frame = make_chunks()
        with pytest.raises(ValueError, match="'Horse#0' occurs 2 times"):
            index.validate_chunks(pl.concat([frame, frame.head(1)]))

    def test_bad_corpus(self) -> None:
        """A corpus other than pre/post is named with its chunk."""
        frame = make_chunks().with_columns(corpus=pl.lit("mid"))
        with pytest.raises(ValueError, match="'Horse#0' has corpus 'mid'"):
            index.validate_chunks(frame)

    def test_null_text(self) -> None:
        """A chunk without text is an error naming the row."""
        frame = make_chunks().with_columns(
            text=pl.when(pl.col("chunk_id") == "Saddle#0").then(None).otherwise(pl.col("text"))
        )
        with pytest.raises(ValueError, match="row 6 has no text"):
            index.validate_chunks(frame)


class TestChunkHash:
    def test_stable(self) -> None:
        """The same chunks hash the same."""
        assert index.chunk_hash(make_chunks()) == index.chunk_hash(make_chunks())

    def test_changes_with_text(self) -> None:
        """Editing one character of one chunk changes the hash."""
        edited = make_chunks().with_columns(pl.col("text").str.replace("saddle", "Saddle"))
        assert index.chunk_hash(edited) != index.chunk_hash(make_chunks())


class TestIndexVersion:
    def test_depends_on_params_and_chunks(self) -> None:
        """The version changes with any index param and with the chunk hash."""
        base = index.index_version(make_params(), "abc")
        assert base == index.index_version(make_params(), "abc")
        assert base != index.index_version(make_params(rrf_k=10), "abc")
        assert base != index.index_version(make_params(), "abd")

    @pytest.mark.parametrize("field", ["dense_flat_max_rows", "dense_nprobes", "dense_refine_factor"])
    def test_depends_on_dense_params(self, field: str) -> None:
        """The dense threshold and ANN settings version the index like every other param."""
        changed = make_params(**{field: getattr(make_params(), field) + 1})
        assert index.index_version(changed, "abc") != index.index_version(make_params(), "abc")

    def test_depends_on_embedder_weights(self) -> None:
        """Other weights under the same model name give another version."""
        assert index.index_version(make_params(), "abc", "m@1.0") != index.index_version(make_params(), "abc", "m@1.1")


class TestBuild:
    def test_counts(self, tmp_path: Path) -> None:
        """Every chunk is in LanceDB and every C_pre chunk (only) in Tantivy."""
        manifest = index.build(make_chunks(), tmp_path / "ix", embedder=HashEmbedder(DIM), params=make_params())
        assert manifest["counts"] == {"pre": N_PRE, "post": N_POST, "lancedb_rows": len(CHUNKS), "bm25_docs": N_PRE}
        assert manifest["embedder"]["dim"] == DIM and manifest["bm25"]["k1"] == 1.2
        assert json.loads((tmp_path / "ix" / "manifest.json").read_text()) == manifest
        assert index.open_bm25(tmp_path / "ix" / "tantivy", "en_stem").searcher().num_docs == N_PRE

    def test_dense_tables(self, tmp_path: Path) -> None:
        """Each corpus gets its own LanceDB table, searched flat below the threshold."""
        manifest = index.build(make_chunks(), tmp_path / "ix", embedder=HashEmbedder(DIM), params=make_params())
        tables = manifest["dense"]["tables"]
        assert {c: (t["table"], t["rows"], t["kind"]) for c, t in tables.items()} == {
            "pre": ("chunks_pre", N_PRE, "flat"),
            "post": ("chunks_post", N_POST, "flat"),
        }
        assert (tmp_path / "ix" / "lancedb" / "chunks_pre.lance").is_dir()

    def test_bad_dense_index(self, tmp_path: Path) -> None:
        """An unknown ANN kind fails before any work."""
        with pytest.raises(ValueError, match="dense_index"):
            index.build(
                make_chunks(), tmp_path / "ix", embedder=HashEmbedder(DIM), params=make_params(dense_index="lsh")
            )
        assert not (tmp_path / "ix").exists()

    def test_no_pre_chunks(self, tmp_path: Path) -> None:
        """A corpus without C_pre chunks is a clear error, and nothing is written."""
        post_only = make_chunks().filter(pl.col("corpus") == "post")
        with pytest.raises(ValueError, match="no C_pre chunks"):
            index.build(post_only, tmp_path / "ix", embedder=HashEmbedder(DIM), params=make_params())
        assert not (tmp_path / "ix").exists()

    def test_no_post_chunks(self, tmp_path: Path) -> None:
        """A corpus without C_post chunks builds (C_post is only for question generation)."""
        pre_only = make_chunks().filter(pl.col("corpus") == "pre")
        manifest = index.build(pre_only, tmp_path / "ix", embedder=HashEmbedder(DIM), params=make_params())
        assert manifest["counts"]["post"] == 0

    def test_wrong_embedder(self, tmp_path: Path) -> None:
        """An embedder other than the one the params name is refused."""
        with pytest.raises(ValueError, match="index.embedder is 'hash-64'"):
            index.build(make_chunks(), tmp_path / "ix", embedder=HashEmbedder(32), params=make_params())

    def test_failed_build_leaves_nothing(self, tmp_path: Path) -> None:
        """An embedder that fails mid-build leaves neither the index nor a temporary folder."""

        class Broken(CountingEmbedder):
            def embed_documents(self, texts):  # type: ignore[no-untyped-def]
                raise RuntimeError("model crashed")

        with pytest.raises(RuntimeError, match="model crashed"):
            index.build(make_chunks(), tmp_path / "ix", embedder=Broken(), params=make_params())
        assert list(tmp_path.iterdir()) == []

    def test_rejects_paper_k1(self, tmp_path: Path) -> None:
        """Asking Tantivy for the paper's k1=1.5 fails before any work."""
        with pytest.raises(ValueError, match="k1=1.2"):
            index.build(make_chunks(), tmp_path / "ix", embedder=HashEmbedder(DIM), params=make_params(bm25_k1=1.5))


class TestEnsure:
    def test_reuses_unchanged(self, tmp_path: Path) -> None:
        """A second run with the same chunks and params embeds nothing and keeps the version."""
        embedder = CountingEmbedder()
        first = index.ensure(make_chunks(), tmp_path, embedder=embedder, params=make_params())
        second = index.ensure(make_chunks(), tmp_path, embedder=embedder, params=make_params())
        assert embedder.documents == len(CHUNKS)
        assert (first["built_now"], second["built_now"]) == (True, False)
        assert first["version"] == second["version"]

    @pytest.mark.parametrize("change", ["params", "chunks"])
    def test_rebuilds_on_change(self, tmp_path: Path, change: str) -> None:
        """Changed params or chunks give a new version folder; the stale one is removed."""
        first = index.ensure(make_chunks(), tmp_path, embedder=HashEmbedder(DIM), params=make_params())
        chunks = (
            make_chunks().with_columns(pl.col("text").str.replace("saddle", "harness"))
            if change == "chunks"
            else make_chunks()
        )
        params = make_params(rrf_k=30) if change == "params" else make_params()
        second = index.ensure(chunks, tmp_path, embedder=HashEmbedder(DIM), params=params)
        assert second["built_now"] and second["version"] != first["version"]
        assert sorted(p.name for p in tmp_path.glob("index-*")) == [second["path"]]

    def test_stage_manifest(self, tmp_path: Path) -> None:
        """The stage manifest points at the current version and replaces NOT_BUILT.md."""
        (tmp_path / "NOT_BUILT.md").write_text("not built")
        stage = index.ensure(make_chunks(), tmp_path, embedder=HashEmbedder(DIM), params=make_params())
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
        assert index.resolve(build_index(tmp_path / "ix")) == tmp_path / "ix"


class TestCheckCounts:
    def test_counts_match(self, tmp_path: Path) -> None:
        """Recounting a fresh index gives the manifest's counts."""
        assert index.check_counts(build_index(tmp_path / "ix")) == {
            "pre": N_PRE,
            "post": N_POST,
            "lancedb_rows": len(CHUNKS),
            "bm25_docs": N_PRE,
        }

    def test_tampered_manifest(self, tmp_path: Path) -> None:
        """A manifest that disagrees with the files on disk is an error."""
        folder = build_index(tmp_path / "ix")
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["counts"]["pre"] += 1
        (folder / "manifest.json").write_text(json.dumps(manifest))
        with pytest.raises(RuntimeError, match="on disk"):
            index.check_counts(folder)


class TestOpenBm25:
    def test_term_query(self, tmp_path: Path) -> None:
        """The on-disk index answers a term query with its analyzer registered."""
        bm25 = index.open_bm25(build_index(tmp_path / "ix") / "tantivy", "en_stem")
        query = tantivy.Query.term_query(bm25.schema, "text", "quokkaberri", index_option="freq")
        assert len(bm25.searcher().search(query, 5).hits) == 1


def _write_corpus(cfg: config.RunConfig, chunks: pl.DataFrame) -> None:
    folder = cfg.stage_dir("corpus")
    folder.mkdir(parents=True, exist_ok=True)
    for corpus in ("pre", "post"):
        chunks.filter(pl.col("corpus") == corpus).write_parquet(folder / f"chunks_{corpus}.parquet")


class TestReadChunks:
    def test_reads_both(self, project: Path) -> None:
        """Both corpus files are read, C_pre first."""
        cfg = config.load(project / "params" / "default.yaml")
        _write_corpus(cfg, make_chunks())
        frame = artifacts.read_chunks(cfg)
        assert frame.height == len(CHUNKS) and frame["corpus"][0] == "pre"

    def test_missing_file(self, project: Path) -> None:
        """A missing upstream file is named, with how to make it."""
        cfg = config.load(project / "params" / "default.yaml")
        cfg.stage_dir("corpus").mkdir(parents=True)
        (cfg.stage_dir("corpus") / "NOT_BUILT.md").write_text("x")
        with pytest.raises(
            FileNotFoundError, match=r"chunks_pre\.parquet \(the corpus stage is not built yet.*make nb NB=01"
        ):
            artifacts.read_chunks(cfg)

    def test_missing_column(self, project: Path) -> None:
        """A corpus file without a column is named."""
        cfg = config.load(project / "params" / "default.yaml")
        _write_corpus(cfg, make_chunks().drop("url"))
        with pytest.raises(ValueError, match="chunks_pre.parquet: missing column 'url'"):
            artifacts.read_chunks(cfg)


class TestRunStage:
    def test_builds_and_reuses(self, project: Path) -> None:
        """The stage writes its manifest, and a rerun reuses the index."""
        cfg = config.load(project / "params" / "default.yaml")
        _write_corpus(cfg, make_chunks())
        embedder = CountingEmbedder(name=cfg.index.embedder)
        first = index_stage.run(cfg, embedder=embedder)
        second = index_stage.run(cfg, embedder=embedder)
        assert first.manifest["built_now"] and not second.manifest["built_now"]
        assert (cfg.stage_dir("index") / "manifest.json").is_file()
        assert index_stage.current(cfg) == cfg.stage_dir("index") / first.manifest["path"] == first.folder
        assert embedder.documents == len(CHUNKS)


class TestCurrent:
    def test_not_built(self, project: Path) -> None:
        """Asking for the index of a run that has none names the missing manifest."""
        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="run 02_index"):
            index_stage.current(cfg)
