"""Stage 04 (``04_verify``): verify the drafts, assemble the benchmark, write it with its audits.

Reads ``03_generate/drafts.parquet`` and the run's index; writes into ``outputs/<run>/04_verify/``
``benchmark.parquet`` / ``benchmark.jsonl`` (the questions kept), ``candidates.parquet`` (every
candidate with its fate), one CSV per audit (fates, format, verifier, style AUC, retrieval, page
and chunk spread, review; Table 9's generator comparison when the run has several generators)
and ``datasheet.md``. The checks themselves are :mod:`declinecraft.construction.verify`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from declinecraft.construction import audit, generate_stage, verify
from declinecraft.construction.generate import Search
from declinecraft.core import catalogue
from declinecraft.core.config import RunConfig, VerifyParams
from declinecraft.core.stage_writer import StageWriter
from declinecraft.llm.calls import Ask
from declinecraft.retrieval import diagnostics


@dataclass(frozen=True)
class VerifyResult:
    """What stage 04 wrote (``outputs/<run>/04_verify/``)."""

    candidates: pl.DataFrame
    """Every candidate with its fate: ``candidates.parquet``."""
    benchmark: pl.DataFrame
    """The questions kept: ``benchmark.parquet`` and ``benchmark.jsonl``."""
    audits: dict[str, pl.DataFrame]
    """Each audit table by name (``audit_fates``, ``audit_style``, ...), as its CSV."""
    seconds: float


#: Each table of the stage by its name in :class:`VerifyResult` (the catalogue's artifacts).
FILES = {
    "candidates": catalogue.VERIFY_CANDIDATES,
    "benchmark": catalogue.VERIFY_BENCHMARK,
    "audit_fates": catalogue.VERIFY_AUDIT_FATES,
    "audit_format": catalogue.VERIFY_AUDIT_FORMAT,
    "audit_verifier": catalogue.VERIFY_AUDIT_VERIFIER,
    "audit_style": catalogue.VERIFY_AUDIT_STYLE,
    "audit_retrieval": catalogue.VERIFY_AUDIT_RETRIEVAL,
    "audit_pages": catalogue.VERIFY_AUDIT_PAGES,
    "audit_chunks": catalogue.VERIFY_AUDIT_CHUNKS,
    "audit_review": catalogue.VERIFY_AUDIT_REVIEW,
    "audit_generators": catalogue.VERIFY_AUDIT_GENERATORS,
    "comparison_candidates": catalogue.VERIFY_COMPARISON_CANDIDATES,
}


def _retrieval_audit(bench: pl.DataFrame, search: Search, pipeline: str, k: int) -> pl.DataFrame:
    frame = bench.select(pl.col("id").alias("question_id"), "answerable", "target_chunk_id", "scenario_chunk_ids")
    hits = search(bench["question"].to_list(), pipeline, k) if bench.height else []
    frame = frame.with_columns(retrieved_ids=pl.Series(hits, dtype=pl.List(pl.String)))
    rows = []
    audits = (
        ("hit_at_k", diagnostics.hit_at_k, True),
        ("scenario_overlap", diagnostics.scenario_hit_rate, False),
    )
    for name, fn, half in audits:
        part = frame.filter(pl.col("answerable") == half)
        out = fn(part, k, by=None) if part.height else pl.DataFrame()
        row = out.row(0, named=True) if out.height else {"n": 0, "hits": 0, "rate": None, "low": None, "high": None}
        rows.append({"audit": name, "pipeline": pipeline, "k": k, **row})
    return pl.DataFrame(rows)


def run(cfg: RunConfig, *, complete: Ask | None = None, search: Search | None = None) -> VerifyResult:
    """Verify the drafts, assemble the benchmark and write it with its audits to ``04_verify/``.

    ``complete``/``search`` default to the run's served verifier and its index (tests inject
    fakes).
    """
    writer = StageWriter.of(cfg, "verify")
    params: VerifyParams = cfg.verify
    drafts = pl.read_parquet(catalogue.GENERATE_DRAFTS.path(cfg))
    pre, post = generate_stage.read_chunks(cfg)
    chunk_text = dict(zip(pre["chunk_id"], pre["text"], strict=True))
    search = search or generate_stage.retriever_search(cfg)
    main_gen = cfg.generate.generator
    with generate_stage.completer(cfg, params.verifier, temperature=params.temperature, complete=complete) as run:
        verified = verify.verify_drafts(
            drafts.filter(pl.col("generator") == main_gen),
            chunk_text=chunk_text,
            complete=run,
            search=search,
            params=params,
        )
    review_path = cfg.resolve(params.review_file)
    review = verify.load_review(review_path, cfg.run)
    cands = verify.assemble(
        verified,
        target_answerable=params.target_answerable,
        target_unanswerable=params.target_unanswerable,
        max_per_chunk=params.max_per_chunk,
        max_per_page=params.max_per_page,
        review=review,
        where=f"{review_path}: runs.{cfg.run}",
    )
    bench = verify.benchmark(cands)
    titles = set(pre["title"]) | set(post["title"])
    style_kw = {"folds": params.audit_folds, "seed": cfg.seed, "min_df": params.audit_min_df}
    out: dict[str, Any] = {
        "candidates": cands,
        "benchmark": bench,
        "audit_fates": audit.fate_table(cands),
        "audit_format": audit.format_table(cands),
        "audit_verifier": audit.verifier_table(cands),
        "audit_style": audit.style_table(bench, titles, **style_kw),
        "audit_retrieval": _retrieval_audit(bench, search, params.audit_pipeline, params.audit_k),
        "audit_pages": audit.spread_table(bench, by="target_title"),
        "audit_chunks": audit.spread_table(bench, by="target_chunk_id"),
        "audit_review": cands.filter(pl.col("review_reason").is_not_null() | pl.col("replacement")).select(
            "id", "answerable", "fate", "replacement", "review_reason", "asked_question"
        ),
    }
    if cfg.generate.generators:
        out.update(_compare(cfg, drafts, verified, chunk_text, titles, search, complete, style_kw))
    for name, frame in out.items():
        writer.frame(FILES[name], frame)
    writer.frame(catalogue.VERIFY_BENCHMARK_JSONL, bench)
    out["seconds"] = writer.seconds()
    writer.text(catalogue.VERIFY_DATASHEET, audit.datasheet(cfg, out, pre=pre, post=post))
    writer.finish()
    frames = {name: frame for name, frame in out.items() if isinstance(frame, pl.DataFrame)}
    return VerifyResult(
        candidates=frames.pop("candidates"), benchmark=frames.pop("benchmark"), audits=frames, seconds=out["seconds"]
    )


def _compare(
    cfg: RunConfig,
    drafts: pl.DataFrame,
    main: pl.DataFrame,
    chunk_text: Mapping[str, str],
    titles: set[str],
    search: Search,
    complete: Ask | None,
    style_kw: dict[str, Any],
) -> dict[str, pl.DataFrame]:
    """Table 9: every generator's drafts through the comparison verifier, assembled to its targets."""
    params: VerifyParams = cfg.verify
    verifier = params.comparison_verifier or params.verifier
    generators = list(dict.fromkeys((cfg.generate.generator, *cfg.generate.generators)))
    reuse = verifier == params.verifier
    todo = drafts.filter(pl.col("generator").is_in(generators[1:] if reuse else generators))
    with generate_stage.completer(cfg, verifier, temperature=params.temperature, complete=complete) as run:
        checked = verify.verify_drafts(
            todo, chunk_text=chunk_text, complete=run, search=search, params=params, verifier=verifier
        )
    if reuse:
        checked = pl.concat([main, checked])
    rows, frames = [], []
    for generator in generators:
        part = verify.assemble(
            checked.filter(pl.col("generator") == generator),
            target_answerable=params.comparison_answerable,
            target_unanswerable=params.comparison_unanswerable,
            max_per_chunk=params.max_per_chunk,
            max_per_page=params.max_per_page,
        )
        kept = part.filter(pl.col("fate") == "kept")
        words = audit.title_words(titles)
        style = audit.style_auc(
            [audit.strip_words(t, words) for t in kept["asked_question"]], kept["answerable"].to_list(), **style_kw
        )
        hit = _retrieval_audit(kept, search, params.audit_pipeline, params.audit_k)["rate"][0]
        rows.append(audit.comparison_row(part, style, hit))
        frames.append(part)
    return {"audit_generators": audit.generator_table(rows), "comparison_candidates": pl.concat(frames)}
