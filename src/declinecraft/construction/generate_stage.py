"""Stage 03 (``generate_stage.run``): serve each generator, draft every candidate, write
``outputs/<run>/03_generate/``.

The drafting itself is :func:`declinecraft.construction.generate.generate_drafts`; this module wires it to the
run's corpus chunks, its index (dense search for targets, a pipeline for verification) and the LLM
layer. The verifier stage (``verify``) reuses the same wiring.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from declinecraft.construction.generate import Search, generate_drafts
from declinecraft.core import artifacts, catalogue
from declinecraft.core.config import RunConfig
from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.core.stage_writer import StageWriter
from declinecraft.llm.calls import Ask
from declinecraft.llm.pool import ModelPool
from declinecraft.retrieval import retrieve
from declinecraft.retrieval.pipelines import Corpus, Pipeline


@dataclass(frozen=True)
class GenerateResult:
    """What stage 03 wrote (``outputs/<run>/03_generate/``)."""

    drafts: pl.DataFrame
    """One row per candidate and generator, with its status: ``drafts.parquet``."""
    input: dict[str, int]
    """Chunks and pages the generator could draw from (:func:`input_report`), in ``stage.json``."""
    timing: list[dict[str, Any]]
    """Seconds per generator, in ``stage.json``."""


def input_report(pre: pl.DataFrame, post: pl.DataFrame) -> dict[str, int]:
    """Count the chunks and pages the generator can draw from, and those without text (never drawn)."""
    out: dict[str, int] = {}
    for name, frame in (("pre", pre), ("post", post)):
        empty = frame["text"].fill_null("").str.strip_chars() == ""
        usable = frame.filter(~empty)["title"].unique()
        bare = frame.filter(empty & ~pl.col("title").is_in(usable.to_list()))["title"].n_unique()
        out |= {
            f"{name}_chunks": frame.height - int(empty.sum()),
            f"{name}_pages": usable.len(),
            f"{name}_empty_chunks": int(empty.sum()),
            f"{name}_pages_without_text": bare,
        }
    return out


def read_chunks(cfg: RunConfig) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return the run's C_pre and C_post chunk tables (from the corpus stage)."""
    chunks = artifacts.read_chunks(cfg)
    return chunks.filter(pl.col("corpus") == "pre"), chunks.filter(pl.col("corpus") == "post")


def retriever_search(cfg: RunConfig) -> Search:
    """Return a :data:`Search` over the run's index: dense cosine for "pre"/"post", else a
    pipeline name over C_pre. The index opens on the first query; its models run on
    ``llm.retrieval_device`` as a stage that starts model servers places them."""
    opened: list[retrieve.Retriever] = []

    def search(queries: Sequence[str], where: str, k: int) -> list[list[str]]:
        if not queries:
            return []
        if not opened:
            device = RetrievalDevice(cfg.llm.retrieval_device, servers=True)
            opened.append(retrieve.Retriever.open(cfg.stage_dir("index"), cache_dir=cfg.cache_dir, device=device))
        if where in ("pre", "post"):
            hits = opened[0].search_many(list(queries), "dense", k, corpus=cast(Corpus, where))
        else:
            hits = opened[0].search_many(list(queries), cast(Pipeline, where), k)
        return [[h.chunk_id for h in row] for row in hits]

    return search


@contextmanager
def completer(cfg: RunConfig, model_id: str, *, temperature: float, complete: Ask | None = None) -> Iterator[Ask]:
    """Yield an :data:`~declinecraft.llm.calls.Ask` for one registry model (served locally while
    the block runs; each call carries its own output budget); an injected ``complete`` is passed
    through unchanged (tests)."""
    if complete is not None:
        yield complete
        return
    with ModelPool(cfg, progress=True) as pool:
        yield pool.asker(model_id, thinking=None, max_tokens=0, temperature=temperature)


# --- the stage --------------------------------------------------------------------------------


def run(cfg: RunConfig, *, complete: Ask | None = None, search: Search | None = None) -> GenerateResult:
    """Draft candidates for every generator of the run; write ``03_generate/drafts.parquet`` and
    ``stage.json`` (:func:`input_report` and seconds per generator).

    ``complete``/``search`` default to the run's served generator and its index (the tests
    inject fakes). A rerun replays every LLM call from the cache.
    """
    writer = StageWriter.of(cfg, "generate")
    pre, post = read_chunks(cfg)
    search = search or retriever_search(cfg)
    report = input_report(pre, post)
    frames, timing = [], []
    for generator in dict.fromkeys((cfg.generate.generator, *cfg.generate.generators)):
        start = time.monotonic()
        with completer(cfg, generator, temperature=cfg.generate.temperature, complete=complete) as run:
            frames.append(
                generate_drafts(
                    pre, post, params=cfg.generate, seed=cfg.seed, complete=run, search=search, generator=generator
                )
            )
        timing.append({"generator": generator, "seconds": round(time.monotonic() - start, 1)})
    drafts = pl.concat(frames)
    writer.frame(catalogue.GENERATE_DRAFTS, drafts)
    writer.json(catalogue.GENERATE_STAGE, {"input": report, "timing": timing})
    writer.finish()
    return GenerateResult(drafts=drafts, input=report, timing=timing)
