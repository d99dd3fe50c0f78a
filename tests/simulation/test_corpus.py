"""Tests for declinecraft.simulation.corpus: the generated wiki export."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.corpus import corpora, wiki
from declinecraft.simulation import corpus


def test_wiki_at_scale(tmp_path: Path) -> None:
    """1/20 of the paper's wiki: both sides of the cut-off, every page kept by stage 01, no short chunk."""
    counts = corpus.write_dump(tmp_path / "w.xml", scale=20)
    built = corpora.build(wiki.read_dump(tmp_path / "w.xml"), "2025-03-31", snapshot="2026-09-08", min_chars=200)
    assert (built.pre.height, built.post.height) == (counts["pre_pages"], counts["post_pages"]) == (132, 8)
    chunks = corpora.chunk(built.pre, 1500, 250)
    assert 4 * 132 < chunks.height < 5 * 132  # the paper: 11,612 chunks of 2,642 pages
    # Pages end where a chunk closes, so no chunk is short (a short chunk's few words sit near every query).
    lengths = pl.concat([chunks, corpora.chunk(built.post, 1500, 250)])["text"].str.len_chars()
    assert lengths.min() > 1000
    assert all(not corpus.is_post(t) for t in built.pre["title"]) and all(map(corpus.is_post, built.post["title"]))
