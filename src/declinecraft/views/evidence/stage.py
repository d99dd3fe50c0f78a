"""Stage 10 (``stage.run``): ESB's evidence levels on our questions; writes ``10_evidence/``.

Reads the benchmark, C_pre's chunks, ``05_answer/retrieved.parquet`` (the retriever's chunks per
question, where it has them; the index otherwise) and ``06_judge/references.parquet``; writes
into ``outputs/<run>/10_evidence/``:

===================  =========================================================================
key_values.parquet   per answerable question: the value its conflicting copy alters, by rule or
                     by the generator model, or why there is none
instances.parquet    per (question, level, order): chunk ids, the exact context, the checks
responses.parquet    per (instance, model, thinking, prompt): the answer call's reply
labels.parquet       the response judge's labels (``judge.label_responses``)
scores.parquet       the accuracy judges' scores of L1-L4 answers (``judge.score_responses``)
judged.parquet       responses + label + accuracy + ESB classes + L5 flags and types
curve.csv            the evidence-sufficiency curve: one row per model, prompt and level L1-L5, T
summary.csv          accuracy, over-answer, wrong-answer, B-ECE (with and without T), intervals
position_bias.csv    L5 by order: abstention, gold adoption, known-wrong; exact McNemar p
prompt_effects.csv   P2, P3 vs P1 per level: change in abstention, McNemar p, BH q
l5_types.csv         the L5 response distribution by type and order
agreement.csv        response judge vs rule classifier (ESB classes): agreement, Cohen's kappa
quality.csv          ESB §4.4's checks with counts checked and failed
validation_sample.csv ESB §7.7's human-validation sheet: 40 responses per level, empty answer columns
problems.csv         every question and level not built as defined, and what was done
manifest.json        settings, counts, seconds
===================  =========================================================================

With ``evidence.enabled: false`` it writes ``STATUS.md`` only (and removes stale outputs).
Models run one at a time: the conflict model, the models under test, the response judge, the
accuracy judges; every call is cached, so a rerun sends none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import paths
from declinecraft.core.artifacts import BENCHMARK_COLUMNS, read_benchmark, read_chunks, read_stage_file
from declinecraft.core.config import EvidenceParams, RunConfig
from declinecraft.evaluation import answer, judge
from declinecraft.evaluation.answer import Search
from declinecraft.evaluation.answer_stage import retriever_adapters
from declinecraft.evaluation.context import Chunk, chunks_by_id
from declinecraft.llm.pool import ModelPool, Models
from declinecraft.views.evidence import asking, classes, conflicts, levels, tables, validation

TABLES = (
    "curve",
    "summary",
    "position_bias",
    "prompt_effects",
    "l5_types",
    "agreement",
    "quality",
    "problems",
    "validation_sample",
)
FRAMES = ("key_values", "instances", "responses", "labels", "scores", "judged")
STATUS = "STATUS.md"


@dataclass(frozen=True)
class EvidenceResult:
    """What stage 10 wrote (``outputs/<run>/10_evidence/``); every frame empty when disabled."""

    key_values: pl.DataFrame = field(default_factory=pl.DataFrame)
    """The altered value per answerable question: ``key_values.parquet``."""
    instances: pl.DataFrame = field(default_factory=pl.DataFrame)
    """One row per (question, level, order): ``instances.parquet``."""
    judged: pl.DataFrame = field(default_factory=pl.DataFrame)
    """Responses with labels, accuracy, ESB classes, L5 flags: ``judged.parquet``."""
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    """The CSV tables by name (:data:`TABLES`)."""
    manifest: dict[str, Any] = field(default_factory=dict)
    """Settings, counts and seconds: ``manifest.json``."""


@dataclass(frozen=True)
class Settings:
    """The view's effective settings: its block with the answer, judge and generate defaults filled in."""

    models: tuple[str, ...]
    prompts: tuple[str, ...]
    k: int
    pipeline: str
    context_chars: int
    max_tokens: int
    conflict_model: str | None
    accuracy_judges: tuple[str, ...]

    @classmethod
    def of(cls, cfg: RunConfig) -> Settings:
        """Resolve ``cfg.evidence`` (0, -1 and "" take the upstream stages' values)."""
        p: EvidenceParams = cfg.evidence
        conflict = p.conflict_model or cfg.generate.generator
        return cls(
            models=tuple(p.models or cfg.answer.models),
            prompts=tuple(asking.check_prompts(p.prompts)),
            k=p.k or cfg.answer.k,
            pipeline=p.pipeline or cfg.answer.pipeline,
            context_chars=cfg.answer.context_chars if p.context_chars < 0 else p.context_chars,
            max_tokens=p.max_tokens or cfg.answer.max_tokens,
            conflict_model=None if conflict == "none" else conflict,
            accuracy_judges=tuple(dict.fromkeys(p.accuracy_judges or cfg.judge.accuracy_judges)),
        )


def c_pre(cfg: RunConfig) -> dict[str, Chunk]:
    """C_pre's chunks by id, as the answer prompt shows them."""
    return chunks_by_id(read_chunks(cfg).filter(pl.col("corpus") == "pre").iter_rows(named=True))


def references(cfg: RunConfig) -> pl.DataFrame:
    """``06_judge/references.parquet`` (question_id, reference).

    Raises:
        FileNotFoundError: the judge stage has not run (names the file).
    """
    return read_stage_file(cfg, "judge", "references.parquet", ["question_id", "reference"])


def retrieved_lists(
    cfg: RunConfig, questions: pl.DataFrame, *, pipeline: str, k: int, search: Search | None
) -> tuple[dict[str, list[str]], int]:
    """The retriever's ranked chunk ids per question (scenario + question as the query): stage
    05's where it retrieved at least k with this pipeline, else a new search. Returns the lists
    and how many questions needed a search."""
    out: dict[str, list[str]] = {}
    path = cfg.stage_dir("answer") / "retrieved.parquet"
    if path.is_file():
        stored = pl.read_parquet(path).filter(pl.col("pipeline") == pipeline, pl.col("scenario"), pl.col("k") >= k)
        for r in stored.sort("k").iter_rows(named=True):
            out.setdefault(r["question_id"], list(r["retrieved_ids"])[:k])
    todo = [r for r in questions.iter_rows(named=True) if r["id"] not in out]
    if todo:
        search = search or retriever_adapters(cfg)[0]
        hits = search([answer.query_of(r, True) for r in todo], pipeline, k)
        out |= {r["id"]: [h.chunk_id for h in row] for r, row in zip(todo, hits, strict=True)}
    return {q: out[q] for q in questions["id"]}, len(todo)


def related_titles(retrieved: Mapping[str, Sequence[str]], chunks: Mapping[str, Chunk]) -> dict[str, list[str]]:
    """Titles of each question's retrieved pages: the pool of named-item replacements."""
    return {q: sorted({chunks[c].title for c in ids if c in chunks}) for q, ids in retrieved.items()}


def _write(frame: pl.DataFrame, path: Path) -> None:
    with paths.atomic_path(path) as tmp:
        frame.write_csv(tmp) if path.suffix == ".csv" else frame.write_parquet(tmp)


def disabled(cfg: RunConfig) -> EvidenceResult:
    """Write ``STATUS.md`` saying the view is off, remove stale outputs, return an empty result."""
    folder = cfg.stage_dir("evidence")
    for name in (*(f"{t}.csv" for t in TABLES), *(f"{f}.parquet" for f in FRAMES), "manifest.json"):
        (folder / name).unlink(missing_ok=True)
    paths.write_text_atomic(
        folder / STATUS, "The evidence view is disabled in this run (evidence.enabled: false); it wrote no tables.\n"
    )
    (folder / "NOT_BUILT.md").unlink(missing_ok=True)
    return EvidenceResult(manifest={"run": cfg.run, "enabled": False})


def run(
    cfg: RunConfig, *, models: Models | None = None, search: Search | None = None, progress: bool = False
) -> EvidenceResult:
    """Run stage 10 and write its outputs (``10_evidence/``); return them.

    ``models`` and ``search`` default to the run's model servers and index (tests inject fakes).
    """
    if not cfg.evidence.enabled:
        return disabled(cfg)
    start = time.monotonic()
    params: EvidenceParams = cfg.evidence
    s = Settings.of(cfg)
    bench = read_benchmark(cfg, (*BENCHMARK_COLUMNS, "fact"))
    questions = answer.select_questions(bench, params.limit_questions, cfg.seed)
    chunks = c_pre(cfg)
    titles = sorted({c.title for c in chunks.values() if c.title})
    refs = references(cfg)
    seconds: dict[str, float] = {}
    t0 = time.monotonic()
    retrieved, searched = retrieved_lists(cfg, questions, pipeline=s.pipeline, k=s.k, search=search)
    seconds["retrieval"] = round(time.monotonic() - t0, 1)
    own: ModelPool | None = None
    if models is None:
        models = own = ModelPool(cfg, progress=progress)
    pool: Models = models
    try:
        t0 = time.monotonic()
        ask = (
            pool.asker(
                s.conflict_model, thinking=None, max_tokens=params.conflict_max_tokens, temperature=params.temperature
            )
            if s.conflict_model
            else None
        )
        values = conflicts.find_values(
            questions, chunks, titles=titles, related=related_titles(retrieved, chunks), ask=ask, seed=cfg.seed
        )
        pool.release()
        built = levels.build(
            questions,
            chunks,
            retrieved=retrieved,
            key_values=values,
            titles=titles,
            k=s.k,
            chunk_chars=s.context_chars,
            seed=cfg.seed,
        )
        seconds["levels"] = round(time.monotonic() - t0, 1)
        t0 = time.monotonic()
        responses, timings = asking.answer_instances(
            built.instances,
            models=pool,
            model_ids=s.models,
            thinking=params.thinking,
            prompts=s.prompts,
            max_tokens=s.max_tokens,
            temperature=params.temperature,
        )
        seconds["answers"] = round(time.monotonic() - t0, 1)
        t0 = time.monotonic()
        labels, scores = _judge(cfg, s, pool, responses, refs)
        seconds["judges"] = round(time.monotonic() - t0, 1)
    finally:
        if own is not None:
            own.close()
    judged = classes.annotate(judge.judged_frame(responses, labels, scores, list(s.accuracy_judges)), values)
    boot = tables.Boot(params.bootstrap_resamples, params.confidence, cfg.seed)
    out = {
        "curve": tables.curve(judged, boot),
        "summary": tables.summary(judged, boot),
        "position_bias": tables.position_bias(judged),
        "prompt_effects": tables.prompt_effects(judged, alpha=params.alpha),
        "l5_types": tables.l5_types(judged),
        "agreement": classes.agreement(judged),
        "quality": built.quality,
        "problems": built.problems,
        "validation_sample": validation.validation_sample(judged, built.instances, seed=cfg.seed),
    }
    folder = cfg.stage_dir("evidence")
    frames = {
        "key_values": values,
        "instances": built.instances,
        "responses": responses,
        "labels": labels,
        "scores": scores,
        "judged": judged,
    }
    for name, frame in frames.items():
        _write(frame, folder / f"{name}.parquet")
    for name, frame in out.items():
        _write(frame, folder / f"{name}.csv")
    manifest = {
        "run": cfg.run,
        "enabled": True,
        "params": cfg.block_dict("evidence"),
        "settings": s.__dict__,
        "questions": questions.height,
        "answerable": int(questions["answerable"].sum()),
        "answerable_built": built.instances.filter(pl.col("answerable"))["question_id"].n_unique(),
        "unanswerable_built": built.instances.filter(~pl.col("answerable"))["question_id"].n_unique(),
        "instances": dict(built.instances.group_by("level").len().sort("level").iter_rows()),
        "searched_questions": searched,
        "key_values": dict(values.group_by("source").len().iter_rows()),
        "problems": dict(built.problems.group_by("problem").len().sort("problem").iter_rows()),
        "quality_failures": int(built.quality["n_failed"].sum()),
        "n_responses": responses.height,
        "calls_sent": {
            "conflict": int(values["raw_output"].is_not_null().sum()),
            "answers": responses.height,
            "labels": int((labels["source"] == "llm").sum()) + int(labels["reasked"].sum()),
            "scores": int((scores["source"] == "llm").sum()) + int(scores["reasked"].sum()),
        },
        "timings": timings,
        "seconds": {**seconds, "total": round(time.monotonic() - start, 1)},
    }
    paths.write_text_atomic(folder / "manifest.json", json.dumps(manifest, indent=2, default=str) + "\n")
    for stale in ("NOT_BUILT.md", STATUS):
        (folder / stale).unlink(missing_ok=True)
    return EvidenceResult(key_values=values, instances=built.instances, judged=judged, tables=out, manifest=manifest)


def _judge(
    cfg: RunConfig, s: Settings, pool: Models, responses: pl.DataFrame, refs: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Label every response with the response judge, then score L1-L4 answers with the accuracy
    judges against stage 06's references (the response judge's model first: one server start).
    L3-L4 answers are scored for ESB's error diagnostics (answers from memory)."""
    p = cfg.judge

    def ask(model: str) -> Any:
        return pool.asker(model, thinking=None, max_tokens=p.max_tokens, temperature=p.temperature)

    ordered = responses.sort("question_id", "response_id")
    labels = judge.label_responses(
        ordered, ask(p.response_judge), judge=p.response_judge, truncate_chars=p.truncate_chars
    )
    items = (
        ordered.filter(pl.col("level").is_in(["L1", "L2", "L3", "L4"]))
        .join(labels.select("response_id", "label"), on="response_id", how="left", maintain_order="left")
        .join(refs, on="question_id", how="left", maintain_order="left")
    )
    order = sorted(s.accuracy_judges, key=lambda j: j != p.response_judge)
    parts = [judge.score_responses(items, ask(j), judge=j) for j in order]
    scores = pl.concat(parts) if parts else pl.DataFrame(schema=judge.SCORE_SCHEMA)
    pool.release()
    return labels, scores
