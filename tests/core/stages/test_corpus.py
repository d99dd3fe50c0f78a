"""Tests for declinecraft.core.stages.corpus: stage 01's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.params import CorpusParams
from declinecraft.core.stages import corpus


class TestStage:
    def test_first_stage(self, cfg: config.RunConfig) -> None:
        """Stage 01 reads no artifact and calls no model; it reads the run's wiki dump."""
        assert (corpus.STAGE.block, corpus.STAGE.notebook, corpus.STAGE.params) == ("corpus", "01_corpus", CorpusParams)
        assert corpus.STAGE.reads == () and corpus.STAGE.models == () and corpus.STAGE.prompts == ()
        assert corpus.STAGE.data(cfg) == [cfg.corpus.dump] == ["data/miniwiki/miniwiki.xml"]
        assert list(catalogue.STAGES)[0] == "corpus"

    def test_writes(self) -> None:
        """C_pre and C_post, as pages and as chunks, are written by every run."""
        written = {a.name: a for a in catalogue.STAGES["corpus"].writes}
        for name in ("pages_pre.parquet", "pages_post.parquet", "chunks_pre.parquet", "chunks_post.parquet"):
            assert written[name].when == "" and written[name].notebook == "01_corpus"

    def test_overlap_below_chunk_size(self) -> None:
        """An overlap as long as the chunk is refused, and so is a negative minimum page length."""
        bad = dataclasses.replace(CorpusParams(), chunk_size=500, chunk_overlap=500, min_chars=-1)
        assert bounds.check("corpus", bad, "corpus") == [
            "corpus.min_chars: -1 is out of range (needs >= 0)",
            "corpus.chunk_overlap: 500 must be below chunk_size (500)",
        ]
