"""Tests for declinecraft.core.index_params: the index block's defaults and ranges."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds
from declinecraft.core.index_params import IndexParams


class TestIndexParams:
    def test_tantivy_constants(self) -> None:
        """BM25's constants are Tantivy's fixed ones (k1 = 1.2, b = 0.75); fusion uses RRF's K = 60."""
        p = IndexParams()
        assert (p.bm25_k1, p.bm25_b, p.rrf_k) == (1.2, 0.75, 60)

    def test_every_number_bounded(self) -> None:
        """Every number of the block has a range, and the defaults are in it."""
        assert bounds.numeric_fields(IndexParams) == set(bounds.of(IndexParams))
        assert bounds.check("index", IndexParams(), "index") == []

    def test_out_of_range_named(self) -> None:
        """Out-of-range values are named with the key and the range they need."""
        bad = dataclasses.replace(IndexParams(), fusion_depth=0, bm25_frequent_share=2.0)
        assert sorted(bounds.check("index", bad, "index")) == [
            "index.bm25_frequent_share: 2.0 is out of range (needs >= 0 and <= 1)",
            "index.fusion_depth: 0 is out of range (needs >= 1)",
        ]
