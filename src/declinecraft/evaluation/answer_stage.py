"""Stage 05 (``answer_stage.run``): read the benchmark, answer every setting, write the outputs.

Reads the benchmark and the index; writes the catalogue's answer artifacts
(:mod:`declinecraft.core.catalogue`) into ``outputs/<run>/05_answer/``: the responses (one row per
question, model, thinking, condition, pipeline, k, scenario and prompt variant; schema
:data:`answer.SCHEMA`), Hit@k and scenario-chunk overlap per pipeline, k and scenario, the chunks
each setting retrieved, Table 9's CAR responses in runs that compare generators
(:mod:`declinecraft.evaluation.comparison`) and the manifest (settings, counts, seconds per model).

Models run at once where their endpoints are separate and the machine has room for their servers, else
one at a time (:func:`~declinecraft.llm.pool.each_model`); every call goes through the LLM cache,
so an interrupted run resumes where it stopped and a cached rerun starts no server.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.artifacts import read_benchmark
from declinecraft.core.config import AnswerParams, RunConfig
from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.core.stage_writer import StageWriter
from declinecraft.evaluation import answer, comparison
from declinecraft.evaluation.answer import Search
from declinecraft.evaluation.context import Chunk, Lookup, chunks_by_id
from declinecraft.llm.pool import ModelPool, Models, each_model, rewriter
from declinecraft.retrieval import retrieve
from declinecraft.retrieval.diagnostics import hit_at_k, scenario_hit_rate
from declinecraft.retrieval.fusion import Hit
from declinecraft.retrieval.pipelines import Pipeline

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerResult:
    """What stage 05 wrote (``outputs/<run>/05_answer/``)."""

    responses: pl.DataFrame
    """One row per (question, model, thinking, setting): ``responses.parquet``."""
    retrieval: pl.DataFrame
    """Hit@k and scenario-chunk overlap per pipeline, k and scenario: ``retrieval.parquet``."""
    retrieved: pl.DataFrame
    """The chunk ids each retrieval setting returned per question: ``retrieved.parquet``."""
    questions: pl.DataFrame
    """The benchmark questions this run answered."""
    manifest: dict[str, Any]
    """Counts, settings and seconds: ``manifest.json``."""


def check_chunks(questions: pl.DataFrame, lookup: Lookup) -> None:
    """Check that every answerable target chunk and every scenario chunk is in the index.

    Raises:
        ValueError: names the question and the chunk (the benchmark and the index disagree).
    """
    for row in questions.iter_rows(named=True):
        wanted = list(row["scenario_chunk_ids"] or []) + ([row["target_chunk_id"]] if row["answerable"] else [])
        try:
            lookup(wanted)
        except KeyError as exc:
            raise ValueError(
                f"question {row['id']!r}: {exc.args[0]} (benchmark and index are from different builds?)"
            ) from exc


class MemoSearch:
    """Retrieval memoised per (query, pipeline, k): iterative RAG starts from exactly the chunks
    single-shot RAG saw, and each distinct query is searched once per run."""

    def __init__(self, search: Search) -> None:
        self.inner = search
        self.memo: dict[tuple[str, str, int], list[Hit]] = {}

    def __call__(self, queries: Sequence[str], pipeline: str, k: int) -> list[list[Hit]]:
        todo = list(dict.fromkeys(q for q in queries if (q, pipeline, k) not in self.memo))
        if todo:
            for q, hits in zip(todo, self.inner(todo, pipeline, k), strict=True):
                self.memo[(q, pipeline, k)] = list(hits)
        return [self.memo[(q, pipeline, k)] for q in queries]


def retriever_adapters(cfg: RunConfig, rewrite: Any = None) -> tuple[Search, Lookup]:
    """Search and chunk lookup over the run's index (``retrieve.Retriever``), its models on
    ``llm.retrieval_device`` as a stage that starts model servers places them."""
    retriever = retrieve.Retriever.open(
        cfg.stage_dir("index"),
        cache_dir=cfg.cache_dir,
        rewrite=rewrite,
        device=RetrievalDevice(cfg.llm.retrieval_device, servers=True),
    )

    def search(queries: Sequence[str], pipeline: str, k: int) -> list[list[Hit]]:
        rows = retriever.search_many(list(queries), cast(Pipeline, pipeline), k)
        return [list(hits) for hits in rows]

    def lookup(chunk_ids: Sequence[str]) -> list[Chunk]:
        table = chunks_by_id(retriever.chunks(list(chunk_ids)).iter_rows(named=True))
        return [table[c] for c in chunk_ids]

    return search, lookup


def retrieved_frame(questions: pl.DataFrame, memo: MemoSearch, settings: Sequence[answer.Setting]) -> pl.DataFrame:
    """One row per (question, pipeline, k, scenario) that single-shot or iterative RAG retrieved."""
    rows = []
    seen = {(s.pipeline, s.k, s.scenario) for s in settings if s.condition != "no_rag"}
    for pipeline, k, scenario in sorted(seen):
        for r in questions.iter_rows(named=True):
            hits = memo.memo.get((answer.query_of(r, scenario), pipeline, k))
            if hits is None:
                continue
            rows.append(
                {
                    "question_id": r["id"],
                    "answerable": r["answerable"],
                    "pipeline": pipeline,
                    "k": k,
                    "scenario": scenario,
                    "target_chunk_id": r["target_chunk_id"],
                    "scenario_chunk_ids": list(r["scenario_chunk_ids"] or []),
                    "retrieved_ids": [h.chunk_id for h in hits],
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "question_id": pl.String,
            "answerable": pl.Boolean,
            "pipeline": pl.String,
            "k": pl.Int64,
            "scenario": pl.Boolean,
            "target_chunk_id": pl.String,
            "scenario_chunk_ids": pl.List(pl.String),
            "retrieved_ids": pl.List(pl.String),
        },
    )


#: Columns of ``retrieval.parquet``.
DIAGNOSTICS_SCHEMA = {
    "metric": pl.String,
    "pipeline": pl.String,
    "k": pl.Int64,
    "depth": pl.Int64,
    "scenario": pl.Boolean,
    "n": pl.Int64,
    "hits": pl.Int64,
    "rate": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
}


def retrieval_diagnostics(retrieved: pl.DataFrame) -> pl.DataFrame:
    """Hit@k (answerable) and scenario-chunk overlap (unanswerable) per pipeline/k/scenario.

    ``retrieved`` has one row per (question, pipeline, k, scenario) with ``answerable``,
    ``target_chunk_id``, ``scenario_chunk_ids`` and ``retrieved_ids``; the rates are the
    retriever's own diagnostics (``retrieval_diagnostics.hit_at_k``, ``scenario_hit_rate``) at
    each setting's own depth (``depth`` = ``k``), so a k sweep records what every k retrieves
    (Figure 21, top) and the pipelines what their k chunks hold (Figure 24).
    """
    parts = []
    for (pipeline, k_used, scenario), group in retrieved.group_by(["pipeline", "k", "scenario"], maintain_order=True):
        depth = int(k_used)
        for metric, fn in (("hit_at_k", hit_at_k), ("scenario_overlap", scenario_hit_rate)):
            rate = fn(group, depth, by=None)
            parts.append(
                rate.with_columns(
                    metric=pl.lit(metric),
                    pipeline=pl.lit(pipeline),
                    k=pl.lit(depth),
                    depth=pl.lit(depth),
                    scenario=pl.lit(scenario),
                )
            )
    if not parts:  # a no-RAG-only run retrieves nothing: the table is empty but keeps its columns
        return pl.DataFrame(schema=DIAGNOSTICS_SCHEMA)
    return pl.concat(parts, how="diagonal_relaxed").select(list(DIAGNOSTICS_SCHEMA))


def prefetch(questions: pl.DataFrame, settings: Sequence[answer.Setting], memo: MemoSearch) -> None:
    """Retrieve every setting's first chunks before any model runs (query rewriting included),
    so the rewriter's server runs once, not between the answering models."""
    rows = questions.to_dicts()
    for s in dict.fromkeys((s.pipeline, s.k, s.scenario) for s in settings if s.condition != "no_rag"):
        memo([answer.query_of(r, s[2]) for r in rows], s[0], s[1])


def setting_rows(
    questions: pl.DataFrame,
    setting: answer.Setting,
    model: str,
    thinking: str,
    params: AnswerParams,
    *,
    models: Models,
    search: Search,
    lookup: Lookup,
    answerable: dict[str, bool],
) -> list[dict[str, Any]]:
    """Answer every question under one setting with one model and thinking mode; the rows of
    ``responses.parquet`` (the answer params give the budget, rounds and chunk cut)."""
    ask = models.asker(model, thinking=thinking, max_tokens=params.max_tokens, temperature=params.temperature)
    done = answer.answer_setting(
        questions,
        setting,
        ask=ask,
        search=search,
        lookup=lookup,
        max_rounds=params.max_rounds,
        chunk_chars=params.context_chars,
    )
    return answer.rows_of(done, model=model, thinking=thinking, setting=setting, answerable=answerable)


def locked(function: Any) -> Any:
    """``function`` called by one thread at a time (retrieval shared by models answering at once)."""
    lock = threading.Lock()

    def call(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return function(*args, **kwargs)

    return call


def answer_all(
    questions: pl.DataFrame, params: AnswerParams, *, models: Models, search: Search, lookup: Lookup
) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Answer every setting with every model; return rows and timings, both in model order.

    The models run at once where their endpoints are separate and the machine has room for their
    servers (:func:`~declinecraft.llm.pool.each_model`), else one after another; retrieval is
    shared between them, one search at a time, and memoised, so the rows do not depend on which
    model finished first.
    """
    answerable = dict(zip(questions["id"], questions["answerable"], strict=True))
    search, lookup = locked(search), locked(lookup)

    def one_model(model: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        rows: list[dict[str, Any]] = []
        timings: list[dict[str, Any]] = []
        for thinking, setting in answer.plan(params, models.thinking_switch(model), model):
            start = time.monotonic()
            rows += setting_rows(
                questions,
                setting,
                model,
                thinking,
                params,
                models=models,
                search=search,
                lookup=lookup,
                answerable=answerable,
            )
            timings.append(
                {
                    "model": model,
                    "thinking": thinking,
                    **setting.__dict__,
                    "seconds": round(time.monotonic() - start, 2),
                }
            )
            log.info("%s (%s) %s: %.1fs", model, thinking, setting, timings[-1]["seconds"])
        return rows, timings

    done = each_model(models, params.models, one_model)
    rows = [row for model_rows, _ in done for row in model_rows]
    return answer.responses_frame(rows), [timing for _, model_timings in done for timing in model_timings]


def answer_comparison(
    questions: pl.DataFrame, cfg: RunConfig, *, models: Models, search: Search, lookup: Lookup
) -> pl.DataFrame:
    """Table 9's CAR responses (:mod:`declinecraft.evaluation.comparison`): the compared
    generators' unanswerable questions, one model with thinking off where it can, one setting."""
    model = comparison.model(cfg)
    thinking = answer.thinking_modes(("off",), models.thinking_switch(model))[0]
    answerable = dict(zip(questions["id"], questions["answerable"], strict=True))
    rows = setting_rows(
        questions,
        comparison.setting(cfg),
        model,
        thinking,
        cfg.answer,
        models=models,
        search=search,
        lookup=lookup,
        answerable=answerable,
    )
    models.release()
    return answer.responses_frame(rows)


def run(
    cfg: RunConfig,
    *,
    models: Models | None = None,
    search: Search | None = None,
    lookup: Lookup | None = None,
    progress: bool = False,
) -> AnswerResult:
    """Run stage 05 and write its outputs (``05_answer/``); return them.

    ``models``/``search``/``lookup`` default to the run's model servers and index (tests inject
    fakes). Every benchmark chunk is checked against the index before any model runs.
    """
    writer = StageWriter.of(cfg, "answer")
    params: AnswerParams = cfg.answer
    bench = read_benchmark(cfg)
    questions = answer.select_questions(bench, params.limit_questions, cfg.seed)
    own: ModelPool | None = None
    if models is None:
        models = own = ModelPool(cfg, progress=progress)
    try:
        if search is None or lookup is None:
            needs_rewrite = any("rewrite" in s.pipeline for s in answer.settings(params))
            rewrite = None
            if needs_rewrite:
                rewrite = rewriter(models.asker(params.rewriter, thinking=None, max_tokens=128))
            search, lookup = retriever_adapters(cfg, rewrite)
        check_chunks(questions, lookup)
        memo = MemoSearch(search)
        prefetch(questions, answer.settings(params), memo)
        models.release()  # the rewriter's server, if the +rewrite pipelines started it
        frame, timings = answer_all(questions, params, models=models, search=memo, lookup=lookup)
        compared = comparison.questions(cfg)
        if compared.height:
            check_chunks(compared, lookup)
            compared = answer_comparison(compared, cfg, models=models, search=memo, lookup=lookup)
    finally:
        if own is not None:
            own.close()
    retrieved = retrieved_frame(questions, memo, answer.settings(params))
    diagnostics = retrieval_diagnostics(retrieved)
    writer.frame(catalogue.ANSWER_RESPONSES, frame)
    writer.frame(catalogue.ANSWER_RETRIEVAL, diagnostics)
    writer.frame(catalogue.ANSWER_RETRIEVED, retrieved)
    if compared.height:
        writer.frame(comparison.RESPONSES, compared)
    else:
        writer.remove(comparison.RESPONSES)
    summary = {
        "run": cfg.run,
        "params": cfg.block_dict("answer"),
        "questions": questions.height,
        "answerable": int(questions["answerable"].sum()),
        "n_responses": frame.height,
        "budget_exhausted": int(frame["budget_exhausted"].sum()),
        "errors": int(frame["error"].is_not_null().sum()),
        "comparison_responses": compared.height,
        "empty": int((frame["response"].str.strip_chars() == "").sum()),
        "seconds": writer.seconds(),
        "timings": timings,
    }
    writer.manifest(summary)
    writer.finish()
    return AnswerResult(
        responses=frame, retrieval=diagnostics, retrieved=retrieved, questions=questions, manifest=summary
    )
