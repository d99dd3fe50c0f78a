"""Stage 06 (``judge_stage.run``): label, reference, score, audit; write ``06_judge/``.

Reads ``05_answer/responses.parquet``, ``04_verify/benchmark.parquet`` and the corpus stage's
pages and chunks; writes into ``outputs/<run>/06_judge/``:

==================  ==========================================================================
labels.parquet      one row per (response, judge): raw output, label or null, unparsable,
                    reasked, rule_label (response judge and second-opinion judges)
references.parquet  one oracle reference per question (answerable: as of the cut-off;
                    unanswerable: the current game, for the leakage audit)
scores.parquet      one row per (response, accuracy judge): score or null, unparsable, source
judged.parquet      responses + label + per-judge ``score_<judge>`` + ``accuracy`` (panel mean)
results.csv         ``metrics.summarize`` per model, thinking, condition, pipeline, k, scenario,
summary.parquet     prompt variant, plus the counts left out of the rates (same table twice)
leakage.csv         no-RAG accuracy on unanswerable questions per model and thinking setting
agreement.csv       response judge vs rule_label (and second judges): agreement, Cohen's kappa
comparison_labels   the response judge's labels of ``05_answer/comparison_responses.parquet``
.parquet            (runs that compare generators; Table 9's CAR, :mod:`.comparison`)
manifest.json       counts and seconds
==================  ==========================================================================

Judges run one model at a time, in the order response judge, second judges, oracle, accuracy
judges (the open model first), so a judge that plays several roles is started once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import paths
from declinecraft.core.artifacts import read_benchmark, read_chunks, read_pages, read_responses
from declinecraft.core.config import JudgeParams, RunConfig
from declinecraft.evaluation import comparison, judge
from declinecraft.evaluation.context import Chunk, Lookup, chunks_by_id
from declinecraft.llm.pool import ModelPool, Models


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


def _write(frame: pl.DataFrame, path: Path) -> None:
    with paths.atomic_path(path) as tmp:
        frame.write_csv(tmp) if path.suffix == ".csv" else frame.write_parquet(tmp)


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
    start = time.monotonic()
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
    seconds: dict[str, float] = {}

    def timed(name: str, t0: float) -> None:
        seconds[name] = round(time.monotonic() - t0, 1)

    def ask(model: str, max_tokens: int = params.max_tokens) -> Any:
        return models.asker(model, thinking=None, max_tokens=max_tokens, temperature=params.temperature)

    try:
        t0 = time.monotonic()
        constrain = params.constrain_reask
        labels = judge.label_responses(
            responses,
            ask(params.response_judge),
            judge=params.response_judge,
            truncate_chars=params.truncate_chars,
            constrain=constrain,
        )
        compared_path = cfg.stage_dir("answer") / comparison.RESPONSES
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
        for other in params.second_judges:
            parts.append(
                judge.label_responses(
                    sample,
                    ask(other),
                    judge=other,
                    truncate_chars=params.truncate_chars,
                    role="second_judge",
                    constrain=constrain,
                )
            )
        all_labels = pl.concat(parts)
        timed("labels", t0)

        t0 = time.monotonic()
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
        timed("references", t0)

        t0 = time.monotonic()
        items = judge.scoring_items(responses, all_labels, refs)
        order = sorted(dict.fromkeys(params.accuracy_judges), key=lambda j: j != params.oracle)  # open model first
        scores = pl.concat(
            [judge.score_responses(items, ask(j), judge=j, constrain=constrain) for j in order], how="vertical"
        )
        timed("scores", t0)
    finally:
        if own is not None:
            own.close()

    judged = judge.judged_frame(responses, all_labels, scores, list(params.accuracy_judges))
    question_text = bench.select(pl.col("id").alias("question_id"), "question")
    judged = judged.join(question_text, on="question_id", how="left", maintain_order="left").join(
        refs.select("question_id", "reference"), on="question_id", how="left", maintain_order="left"
    )
    tables = {
        "results": judge.results(judged, seed=cfg.seed),
        "leakage": judge.leakage(judged, seed=cfg.seed),
        "agreement": judge.agreement(all_labels, responses),
    }
    folder = cfg.stage_dir("judge")
    for name, frame in (("labels", all_labels), ("references", refs), ("scores", scores), ("judged", judged)):
        _write(frame, folder / f"{name}.parquet")
    if compared is not None:
        _write(compared, folder / comparison.LABELS)
    else:
        (folder / comparison.LABELS).unlink(missing_ok=True)
    _write(tables["results"], folder / "results.csv")
    _write(tables["results"], folder / "summary.parquet")
    _write(tables["leakage"], folder / "leakage.csv")
    _write(tables["agreement"], folder / "agreement.csv")
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
        "seconds": {**seconds, "total": round(time.monotonic() - start, 1)},
    }
    paths.write_text_atomic(folder / "manifest.json", json.dumps(counts, indent=2, default=str) + "\n")
    (folder / "NOT_BUILT.md").unlink(missing_ok=True)
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
