"""Tests for declinecraft.core.stages.index: stage 02's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue
from declinecraft.core.index_params import IndexParams
from declinecraft.core.stages import corpus, index


class TestStage:
    def test_reads_the_chunks(self) -> None:
        """The index reads both corpora's chunks and calls no model."""
        assert (index.STAGE.notebook, index.STAGE.params) == ("02_index", IndexParams)
        assert index.STAGE.reads == (corpus.CORPUS_CHUNKS_PRE, corpus.CORPUS_CHUNKS_POST)
        assert index.STAGE.models == ()

    def test_writes_a_folder_per_version(self) -> None:
        """Each index version is a folder family beside one manifest."""
        written = {a.name: a for a in catalogue.STAGES["index"].writes}
        assert set(written) == {"manifest.json", "index-{}/"}
        assert written["index-{}/"].kind == "folder" and written["index-{}/"].file("abc") == "index-abc"

    def test_bm25_b_a_proportion(self) -> None:
        """BM25's b lies in [0, 1]."""
        bad = dataclasses.replace(IndexParams(), bm25_b=1.5)
        assert bounds.check("index", bad, "index") == ["index.bm25_b: 1.5 is out of range (needs >= 0 and <= 1)"]
