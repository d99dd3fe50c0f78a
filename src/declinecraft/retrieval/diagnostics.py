"""Retrieval diagnostics (Appendix D): example queries and result frames for the index notebook,
Hit@k of target chunks and scenario-chunk overlap with Wilson intervals for the audits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from declinecraft.core.stats import wilson_arrays
from declinecraft.retrieval.fusion import check_k
from declinecraft.retrieval.pipelines import Pipeline
from declinecraft.retrieval.retrieve import Retriever


def results_frame(
    retriever: Retriever,
    queries: Sequence[str],
    pipelines: Sequence[Pipeline] = ("bm25", "dense", "hybrid"),
    k: int = 5,
) -> pl.DataFrame:
    """Run several pipelines and return one row per (query, pipeline, rank) with titles and ranks."""
    rows: list[dict[str, Any]] = []
    for pipeline in pipelines:
        for q_index, (query, hits) in enumerate(zip(queries, retriever.search_many(queries, pipeline, k), strict=True)):
            titles = retriever.chunks([h.chunk_id for h in hits])["title"].to_list() if hits else []
            for rank, (hit, title) in enumerate(zip(hits, titles, strict=True), start=1):
                rows.append(
                    {
                        "query_index": q_index,
                        "query": query,
                        "pipeline": pipeline,
                        "rank": rank,
                        "chunk_id": hit.chunk_id,
                        "title": title,
                        "score": hit.score,
                        "bm25_rank": hit.ranks.get("bm25"),
                        "dense_rank": hit.ranks.get("dense"),
                        "rerank_rank": hit.ranks.get("rerank"),
                    }
                )
    schema = {
        "query_index": pl.Int64,
        "query": pl.Utf8,
        "pipeline": pl.Utf8,
        "rank": pl.Int64,
        "chunk_id": pl.Utf8,
        "title": pl.Utf8,
        "score": pl.Float64,
        "bm25_rank": pl.Int64,
        "dense_rank": pl.Int64,
        "rerank_rank": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema)


def example_queries(retriever: Retriever, n: int = 3, *, seed: int = 0) -> list[str]:
    """Return ``n`` reproducible example questions about random C_pre pages (for notebooks)."""
    titles = sorted(set(retriever._meta["pre"]["title"].drop_nulls().to_list()))
    if not titles:
        return []
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(titles), size=min(n, len(titles)), replace=False)
    forms = ("What should I know about {}?", "How does the {} work?", "Where do I find {} and what is it used for?")
    return [forms[i % len(forms)].format(titles[p]) for i, p in enumerate(sorted(picks))]


def _rate_frame(frame: pl.DataFrame, hit: pl.Expr, by: str | None, confidence: float) -> pl.DataFrame:
    keys = [by] if by else []
    grouped = (
        frame.with_columns(_hit=hit)
        .group_by(keys or pl.lit("all").alias("_all"), maintain_order=True)
        .agg(n=pl.len(), hits=pl.col("_hit").sum())
    )
    if not by:
        grouped = grouped.drop("_all")
    low, high = wilson_arrays(grouped["hits"].to_numpy(), grouped["n"].to_numpy(), confidence)
    return grouped.with_columns(
        rate=pl.col("hits") / pl.col("n"), low=pl.Series(low), high=pl.Series(high)
    ).with_columns(pl.col("n").cast(pl.Int64), pl.col("hits").cast(pl.Int64))


def _check_frame(frame: pl.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c and c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing column {missing[0]!r} (have: {', '.join(frame.columns)})")


def hit_at_k(
    questions: pl.DataFrame,
    k: int = 5,
    *,
    by: str | None = "pipeline",
    target: str = "target_chunk_id",
    retrieved: str = "retrieved_ids",
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Share of answerable questions whose target chunk is among the first ``k`` retrieved
    (the paper: 91.0% at k=5 with hybrid), per ``by`` group.

    Input: one row per (question, pipeline) with ``target`` (chunk id) and ``retrieved`` (ranked
    list of chunk ids); rows with ``answerable == False`` are ignored when that column exists.

    Returns:
        One row per group: ``by``, n, hits, rate, low, high (Wilson interval).

    Raises:
        ValueError: a missing column or a null target on an answerable question.
    """
    k = check_k(k)
    _check_frame(questions, [target, retrieved, by or ""], "hit_at_k")
    frame = questions.filter(pl.col("answerable")) if "answerable" in questions.columns else questions
    nulls = frame.filter(pl.col(target).is_null())
    if nulls.height:
        who = nulls["question_id"][0] if "question_id" in nulls.columns else "row"
        raise ValueError(f"hit_at_k: question {who!r} has no {target}")
    hit = pl.col(retrieved).list.head(k).list.contains(pl.col(target)).fill_null(False)
    return _rate_frame(frame, hit, by, confidence)


def scenario_hit_rate(
    questions: pl.DataFrame,
    k: int = 5,
    *,
    by: str | None = "pipeline",
    scenario: str = "scenario_chunk_ids",
    retrieved: str = "retrieved_ids",
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Share of unanswerable questions whose first ``k`` retrieved chunks include one of the
    scenario's source chunks (the paper: 71.3% at k=5 with hybrid), per ``by`` group.

    Input: one row per (question, pipeline) with ``scenario`` (list of chunk ids) and
    ``retrieved`` (ranked list); rows with ``answerable == True`` are ignored when that column exists.
    """
    k = check_k(k)
    _check_frame(questions, [scenario, retrieved, by or ""], "scenario_hit_rate")
    frame = questions.filter(~pl.col("answerable")) if "answerable" in questions.columns else questions
    top = pl.col(retrieved).list.head(k)
    hit = (top.list.set_intersection(pl.col(scenario)).list.len() > 0).fill_null(False)
    return _rate_frame(frame, hit, by, confidence)
