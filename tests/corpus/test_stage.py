"""Tests for declinecraft.corpus.stage: stage 01 from the export and from a crawl."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from declinecraft.core import config
from declinecraft.corpus import corpora, stage, wiki
from tests.support import projects

TINY = projects.REPO / "tests" / "data" / "tiny.xml"


def params_file(project: Path, **corpus_block: object) -> Path:
    """Write params/<run>.yaml in the throwaway project with the given corpus block."""
    path = project / "params" / "unit.yaml"
    path.write_text(yaml.safe_dump({"corpus": {"dump": str(TINY), **corpus_block}}))
    return path


class TestRunStage:
    def test_outputs(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The stage writes every declared file with the documented columns, atomically."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        cfg = config.load(params_file(project))
        out = stage.run(cfg)
        folder = project / "outputs" / "unit" / "01_corpus"
        assert out.folder == folder
        names = sorted(p.name for p in folder.iterdir())
        assert names == [
            "chunks_post.parquet",
            "chunks_pre.parquet",
            "dropped.parquet",
            "manifest.json",
            "pages_post.parquet",
            "pages_pre.parquet",
            "stats.csv",
        ]
        for name in ("pre", "post"):
            chunks = pl.read_parquet(folder / f"chunks_{name}.parquet")
            assert tuple(chunks.columns) == corpora.CHUNK_COLUMNS
            assert set(chunks["corpus"]) == {name}
            assert dict(pl.read_parquet(folder / f"pages_{name}.parquet").schema) == corpora.PAGE_SCHEMA
        assert pl.read_parquet(folder / "chunks_pre.parquet")["url"][0] == "https://minecraft.wiki/w/Apple"
        assert pl.read_parquet(folder / "dropped.parquet").columns == ["title", "corpus", "reason", "detail"]
        assert json.loads((folder / "manifest.json").read_text())["input"]["source"] == "dump"

    def test_stats(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """stats.csv counts pages, chunks, date ranges and every drop reason per corpus."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        stage.run(config.load(params_file(project)))
        stats = {
            row["corpus"]: row
            for row in pl.read_csv(project / "outputs/unit/01_corpus/stats.csv").iter_rows(named=True)
        }
        assert (stats["pre"]["pages"], stats["post"]["pages"]) == (2, 3)
        assert (stats["pre"]["chunks"], stats["post"]["chunks"]) == (2, 3)
        assert (stats["pre"]["revision_from"], stats["pre"]["revision_to"]) == ("2023-01-10", "2025-03-31")
        assert stats["post"]["created_from"] == "2025-04-02"
        assert (stats["pre"]["chunks_per_page_median"], stats["pre"]["chunks_per_page_max"]) == (1.0, 1)
        assert stats["pre"]["dropped_excluded_title"] == 3 and stats["pre"]["dropped"] == 7
        assert stats["post"]["dropped_created_after_snapshot"] == 1 and stats["post"]["dropped_missing_page"] == 0

    def test_api_source(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """With source 'api' the stage crawls (here a mock wiki) and gets the export's corpora."""
        from declinecraft.corpus import crawl
        from tests.support import mock_mediawiki

        mock = mock_mediawiki.MockWiki(wiki.read_dump(TINY))
        real = crawl.crawl_corpus
        monkeypatch.setattr(crawl, "crawl_corpus", lambda p, d: real(p, d, transport=mock.transport()))
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        out = stage.run(
            config.load(
                params_file(
                    project,
                    source="api",
                    api_url="http://mock/api.php",
                    seed_source="allpages",
                    requests_per_second=1000.0,
                )
            )
        )
        assert out.pages_pre["title"].to_list() == ["Apple", "Bread"]
        assert out.pages_post["title"].to_list() == ["Camel Husk", "Copper Sword", "Harness"]
        assert (project / ".cache" / "crawl" / "crawl.sqlite").is_file()

    def test_bad_source(self, project: Path) -> None:
        """An unknown source is a config error naming the params file."""
        with pytest.raises(config.ConfigError, match="unit.yaml: corpus.source"):
            stage.run(config.load(params_file(project, source="zim")))

    def test_bad_dump_keeps_old_outputs(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A truncated export fails naming the file and leaves earlier outputs intact."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        stage.run(config.load(params_file(project)))
        before = (project / "outputs/unit/01_corpus/stats.csv").read_text()
        broken = project / "broken.xml"
        broken.write_text(TINY.read_text()[:3000])
        with pytest.raises(wiki.DumpError, match="broken.xml"):
            stage.run(config.load(params_file(project, dump=str(broken))))
        assert (project / "outputs/unit/01_corpus/stats.csv").read_text() == before

    def test_params_defaults_are_paper(self) -> None:
        """The corpus params' defaults are the paper's cut-off, sizes and length rule."""
        p = config.CorpusParams()
        assert (p.cutoff, p.min_chars, p.chunk_size, p.chunk_overlap) == ("2025-03-31", 200, 1500, 250)
        assert dataclasses.replace(p).namespaces == (0,)
