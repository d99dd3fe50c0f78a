"""Stage 06 (``judge_stage.run``): label, reference, score, audit; write ``06_judge/``.

Reads the answer stage's responses, the benchmark and the corpus stage's pages and chunks; writes
the catalogue's judge artifacts (:mod:`declinecraft.core.catalogue`) into
``outputs/<run>/06_judge/``: the labels (response judge and second-opinion judges, with the
phrase rule's label), one oracle reference per question (answerable: as of the cut-off;
unanswerable: the current game, for the leakage audit), the accuracy judges' scores, the judged
table (responses + label + per-judge ``score_<judge>`` + panel ``accuracy``), the metrics per
configuration and setting (as CSV and Parquet), the leakage and agreement tables, the labels of
the comparison responses (runs that compare generators; Table 9's CAR, :mod:`.comparison`), the
judges' check set as each accuracy judge scored it (:mod:`.judge_check`; its agreement is in the
manifest and in run health) and the manifest.

Judges run one model at a time, in the order response judge, second judges, oracle, accuracy
judges (the open model first), so a judge that plays several roles is started once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.artifacts import read_benchmark, read_chunks, read_pages, read_responses
from declinecraft.core.config import JudgeParams, RunConfig
from declinecraft.core.stage_writer import StageWriter
from declinecraft.evaluation import comparison, judge, judge_check
from declinecraft.evaluation.context import Chunk, Lookup, chunks_by_id
from declinecraft.llm.pool import ModelPool, Models, each_model


@dataclass(frozen=True)
class JudgeResult:
    """What stage 06 wrote (``outputs/<run>/06_judge/``)."""

    labels: pl.DataFrame
    """One row per (response, judge): ``labels.parquet``."""
    references: pl.DataFrame
    """One oracle reference per question: ``references.parquet``."""
    scores: pl.DataFrame
    """One row per (response, accuracy judge): ``scores.parquet``."""
    judged: pl.DataFrame
    """Responses with label, per-judge scores and panel accuracy: ``judged.parquet``."""
    results: pl.DataFrame
    """The metrics per model and setting: ``results.csv``."""
    leakage: pl.DataFrame
    """No-RAG accuracy on unanswerable questions: ``leakage.csv``."""
    agreement: pl.DataFrame
    """Response judge against the rule labels and second judges: ``agreement.csv``."""
    manifest: dict[str, Any]
    """Counts and seconds: ``manifest.json``."""


def chunk_lookup(cfg: RunConfig) -> Lookup:
    """Chunks of both corpora by id, read from the corpus stage (KeyError for an unknown id)."""
    table = chunks_by_id(read_chunks(cfg).iter_rows(named=True))

    def lookup(chunk_ids: Sequence[str]) -> list[Chunk]:
        missing = [c for c in chunk_ids if c not in table]
        if missing:
            raise KeyError(f"chunk {missing[0]!r} is not in the corpus chunks of {cfg.stage_dir('corpus')}")
        return [table[c] for c in chunk_ids]

    return lookup


def reference_questions(bench: pl.DataFrame, responses: pl.DataFrame) -> pl.DataFrame:
    """Questions that need a reference: answered answerable ones and leakage-audit unanswerable ones."""
    leak = responses.filter(~pl.col("answerable"), *[pl.col(c) == v for c, v in judge.LEAKAGE.items()])
    ids = set(responses.filter(pl.col("answerable"))["question_id"]) | set(leak["question_id"])
    return bench.filter(pl.col("id").is_in(sorted(ids))).sort("id")


def checked(cfg: RunConfig, judges: Sequence[str], ask: Any, constrain: bool) -> pl.DataFrame:
    """The check set (``judge.check_file``; ``judge.check_items`` of it) scored by each accuracy
    judge model once; no rows when the run names no check file."""
    if not cfg.judge.check_file:
        return pl.DataFrame(schema=judge_check.SCHEMA)
    items = judge_check.sample_check_set(
        judge_check.read_check_set(cfg.resolve(cfg.judge.check_file)), cfg.judge.check_items, cfg.seed
    )
    parts = [judge_check.score_check_set(items, ask(j), judge_id=j, constrain=constrain) for j in dict.fromkeys(judges)]
    return pl.concat(parts) if parts else pl.DataFrame(schema=judge_check.SCHEMA)


def run(
    cfg: RunConfig,
    *,
    models: Models | None = None,
    lookup: Lookup | None = None,
    pages: dict[bool, dict[str, str]] | None = None,
    progress: bool = False,
) -> JudgeResult:
    """Run stage 06 and write its outputs (``06_judge/``); return the frames and the counts.

    ``models``, ``lookup`` and ``pages`` default to the run's model servers and corpus (tests
    inject fakes).
    """
    writer = StageWriter.of(cfg, "judge")
    params: JudgeParams = cfg.judge
    # Judge calls in question order: consecutive prompts then share their prefix up to the
    # question (and the reference), which a llama.cpp server does not prefill again.
    responses = read_responses(cfg).sort("question_id", "response_id")
    bench = read_benchmark(cfg)
    lookup = lookup or chunk_lookup(cfg)
    pages = pages if pages is not None else read_pages(cfg)
    own: ModelPool | None = None
    if models is None:
        models = own = ModelPool(cfg, progress=progress)
    assert models is not None

    def ask(model: str, max_tokens: int = params.max_tokens) -> Any:
        return models.asker(model, thinking=None, max_tokens=max_tokens, temperature=params.temperature)

    try:
        writer.mark()
        constrain = params.constrain_reask
        labels = judge.label_responses(
            responses,
            ask(params.response_judge),
            judge=params.response_judge,
            truncate_chars=params.truncate_chars,
            constrain=constrain,
        )
        compared_path = comparison.RESPONSES.path(cfg)
        compared = None
        if compared_path.is_file():
            compared = judge.label_responses(
                pl.read_parquet(compared_path),
                ask(params.response_judge),
                judge=params.response_judge,
                truncate_chars=params.truncate_chars,
                constrain=constrain,
            )
        parts = [labels]
        sample = judge.second_judge_sample(labels, responses, params.second_judge_sample, cfg.seed)
        parts += each_model(  # at once where the judges' endpoints are separate (llm.pool.each_model)
            models,
            params.second_judges,
            lambda other: judge.label_responses(
                sample,
                ask(other),
                judge=other,
                truncate_chars=params.truncate_chars,
                role="second_judge",
                constrain=constrain,
            ),
        )
        all_labels = pl.concat(parts)
        writer.lap("labels")

        need = reference_questions(bench, responses)
        contexts = {
            r["id"]: judge.reference_context(
                r,
                pages[bool(r["answerable"])],
                lookup,
                page_chars=params.oracle_page_chars,
                chunk_chars=params.oracle_chunk_chars,
            )
            for r in need.iter_rows(named=True)
        }
        refs = judge.write_references(
            need, contexts, ask(params.oracle, params.oracle_max_tokens or params.max_tokens), oracle=params.oracle
        )
        writer.lap("references")

        record = judge.of_record(all_labels, params.labels_by_rule)
        items = judge.scoring_items(responses, record, refs)
        order = sorted(dict.fromkeys(params.accuracy_judges), key=lambda j: j != params.oracle)  # open model first
        scores = pl.concat(
            each_model(models, order, lambda j: judge.score_responses(items, ask(j), judge=j, constrain=constrain)),
            how="vertical",
        )
        writer.lap("scores")
        # The check set, once per accuracy judge model, right after its scores (it is still loaded).
        check = checked(cfg, order, ask, constrain)
        writer.lap("check set")
    finally:
        if own is not None:
            own.close()

    judged = judge.judged_frame(responses, record, scores, list(params.accuracy_judges))
    question_text = bench.select(pl.col("id").alias("question_id"), "question")
    judged = judged.join(question_text, on="question_id", how="left", maintain_order="left").join(
        refs.select("question_id", "reference"), on="question_id", how="left", maintain_order="left"
    )
    tables = {
        "results": judge.results(judged, seed=cfg.seed),
        "leakage": judge.leakage(judged, seed=cfg.seed),
        "agreement": judge.agreement(all_labels, responses),
    }
    for artifact, frame in (
        (catalogue.JUDGE_LABELS, all_labels),
        (catalogue.JUDGE_REFERENCES, refs),
        (catalogue.JUDGE_SCORES, scores),
        (catalogue.JUDGE_JUDGED, judged),
        (catalogue.JUDGE_CHECK, check),
    ):
        writer.frame(artifact, frame)
    if compared is not None:
        writer.frame(comparison.LABELS, judge.of_record(compared, params.labels_by_rule))
    else:
        writer.remove(comparison.LABELS)
    writer.frame(catalogue.JUDGE_RESULTS, tables["results"])
    writer.frame(catalogue.JUDGE_SUMMARY, tables["results"])
    writer.frame(catalogue.JUDGE_LEAKAGE, tables["leakage"])
    writer.frame(catalogue.JUDGE_AGREEMENT, tables["agreement"])
    primary = all_labels.filter(pl.col("role") == "response_judge")
    counts = {
        "run": cfg.run,
        "params": cfg.block_dict("judge"),
        "n_responses": responses.height,
        "labelled_by_llm": int((primary["source"] == "llm").sum()),
        "label_unparsable": int(primary["unparsable"].sum()),
        "label_reasked": int(primary["reasked"].sum()),
        "comparison_labels": 0 if compared is None else compared.height,
        "n_references": refs.height,
        "references_missing": int(refs["reference"].is_null().sum()),
        "scored_by_llm": int((scores["source"] == "llm").sum()),
        "score_unparsable": int(scores["unparsable"].sum()),
        "score_reasked": int(scores["reasked"].sum()),
        "check_calls": check.height,
        "check_agreement": {
            r["judge"]: f"{r['agree']} of {r['items']}"
            for r in judge_check.check_agreement(check, params.check_min_agreement).iter_rows(named=True)
        },
        "seconds": writer.timing(),
    }
    writer.manifest(counts)
    writer.finish()
    return JudgeResult(
        labels=all_labels,
        references=refs,
        scores=scores,
        judged=judged,
        results=tables["results"],
        leakage=tables["leakage"],
        agreement=tables["agreement"],
        manifest=counts,
    )
