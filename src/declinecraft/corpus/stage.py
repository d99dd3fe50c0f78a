"""Stage 01 (``01_corpus``): read the wiki (export or API crawl), split it at the cut-off, chunk it.

Writes into ``outputs/<run>/01_corpus/`` the catalogue's corpus artifacts
(:mod:`declinecraft.core.catalogue`): C_pre and C_post pages and chunks, every page left out with
its reason, the statistics and the manifest (the input's sha256 or crawl statistics, the counts).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.config import ConfigError, CorpusParams, RunConfig
from declinecraft.core.environment import sha256_file
from declinecraft.core.stage_writer import StageWriter
from declinecraft.corpus import crawl, wiki
from declinecraft.corpus.corpora import CHUNK_COLUMNS, DROP_SCHEMA, build, chunk, page_url, rules_from, stats_table

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CorpusResult:
    """What stage 01 wrote (``outputs/<run>/01_corpus/``)."""

    folder: Path
    stats: pl.DataFrame
    """Pages, chunks and drops per corpus: ``stats.csv``."""
    dropped: pl.DataFrame
    """Every page left out, with its corpus, reason and detail."""
    pages_pre: pl.DataFrame
    pages_post: pl.DataFrame
    chunks_pre: pl.DataFrame
    chunks_post: pl.DataFrame
    manifest: dict[str, Any]
    """Input, params and counts: ``manifest.json``."""


def run(cfg: RunConfig) -> CorpusResult:
    """Run stage 01: read pages (export or API crawl), build, chunk, write every output.

    Writes (atomically) into ``cfg.stage_dir("corpus")`` the pages, chunks, drops, statistics and
    manifest, and returns them so the notebook only displays them.
    """
    params: CorpusParams = cfg.corpus
    writer = StageWriter.of(cfg, "corpus")
    extra_drops: list[tuple[str, str, str, str]] = []
    if params.source == "dump":
        dump = cfg.resolve(params.dump)
        source: dict[str, Any] = {"source": "dump", "dump": params.dump, "sha256": sha256_file(dump)}
        result = build(wiki.read_dump(dump), params.cutoff, **rules_from(params))
    elif params.source == "api":
        crawled = crawl.crawl_corpus(params, cfg.cache_dir / "crawl")
        source = {"source": "api", "api_url": params.api_url, **crawled.stats}
        extra_drops = [(title, side, "missing page", why) for title, side, why in crawled.missing]
        result = build(crawled.pages, params.cutoff, **rules_from(params))
    else:
        raise ConfigError(f"{cfg.params_file}: corpus.source must be 'dump' or 'api', got {params.source!r}")
    dropped = pl.concat([result.dropped, pl.DataFrame(extra_drops, schema=DROP_SCHEMA, orient="row")])
    chunks = {}
    for name, pages in (("pre", result.pre), ("post", result.post)):
        with_url = pages.with_columns(
            pl.col("title")
            .map_elements(lambda t: page_url(params.url_template, t), return_dtype=pl.String)
            .alias("url"),
            pl.lit(name).alias("corpus"),
        )
        chunks[name] = chunk(with_url, params.chunk_size, params.chunk_overlap).select(CHUNK_COLUMNS)
    stats = stats_table(result, chunks, dropped)
    files = {
        "pages_pre": result.pre,
        "pages_post": result.post,
        "chunks_pre": chunks["pre"],
        "chunks_post": chunks["post"],
        "dropped": dropped,
    }
    artifacts = {
        "pages_pre": catalogue.CORPUS_PAGES_PRE,
        "pages_post": catalogue.CORPUS_PAGES_POST,
        "chunks_pre": catalogue.CORPUS_CHUNKS_PRE,
        "chunks_post": catalogue.CORPUS_CHUNKS_POST,
        "dropped": catalogue.CORPUS_DROPPED,
    }
    for stem, frame in files.items():
        writer.frame(artifacts[stem], frame)
    writer.frame(catalogue.CORPUS_STATS, stats)
    manifest = {
        "run": cfg.run,
        "params": cfg.block_dict("corpus"),
        "input": source,
        "counts": stats.select("corpus", "pages", "chunks", "dropped").to_dicts(),
    }
    writer.manifest(manifest)
    writer.finish()
    log.info("corpus: %s", manifest["counts"])
    return CorpusResult(folder=writer.folder, stats=stats, manifest=manifest, **files)
