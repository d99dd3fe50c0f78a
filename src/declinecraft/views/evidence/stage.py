"""Stage 09 (``stage.run``): ESB's evidence levels on our questions; writes ``09_evidence/``.

Reads the benchmark, C_pre's chunks, the answer stage's retrieved chunks per question (where it
has them; the index otherwise) and the judge stage's references; writes the catalogue's evidence
artifacts (:mod:`declinecraft.core.catalogue`) into ``outputs/<run>/09_evidence/``: the key values,
the instances (per question, level and order: chunk ids, the exact context, the checks), the
responses, their labels and scores, the judged table (ESB classes, L5 flags and types), the
sufficiency curve, the summary, position bias, prompt effects, L5 types, agreement, quality,
validation sample and problem tables, the validation sample as a form for annotators
(:func:`validation.sample_html`), and the manifest. Where annotators' labels of the sample are in
``data/evidence_annotations/<run>/`` (:func:`validation.labels_dir`), it also writes ESB's Table 6
from them (:func:`validation.annotator_agreement`).

With ``evidence.enabled: false`` it writes the status note only (and removes stale outputs).
Models run one at a time: the conflict model, the models under test, the response judge, the
accuracy judges; every call is cached, so a rerun sends none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.artifacts import BENCHMARK_COLUMNS, read_benchmark, read_chunks, read_stage_file
from declinecraft.core.config import EvidenceParams, RunConfig
from declinecraft.core.stage_writer import StageWriter
from declinecraft.evaluation import answer, judge
from declinecraft.evaluation.answer import Search
from declinecraft.evaluation.answer_stage import retriever_adapters
from declinecraft.evaluation.context import Chunk, chunks_by_id
from declinecraft.llm.pool import ModelPool, Models, each_model
from declinecraft.views.evidence import asking, classes, conflicts, levels, tables, validation

#: The view's CSV tables by name (the catalogue's artifacts).
TABLES = {
    "curve": catalogue.EVIDENCE_CURVE,
    "summary": catalogue.EVIDENCE_SUMMARY,
    "position_bias": catalogue.EVIDENCE_POSITION_BIAS,
    "prompt_effects": catalogue.EVIDENCE_PROMPT_EFFECTS,
    "l5_types": catalogue.EVIDENCE_L5_TYPES,
    "agreement": catalogue.EVIDENCE_AGREEMENT,
    "quality": catalogue.EVIDENCE_QUALITY,
    "problems": catalogue.EVIDENCE_PROBLEMS,
    "validation_sample": catalogue.EVIDENCE_VALIDATION_SAMPLE,
}
#: The view's Parquet frames by name.
FRAMES = {
    "key_values": catalogue.EVIDENCE_KEY_VALUES,
    "instances": catalogue.EVIDENCE_INSTANCES,
    "responses": catalogue.EVIDENCE_RESPONSES,
    "labels": catalogue.EVIDENCE_LABELS,
    "scores": catalogue.EVIDENCE_SCORES,
    "judged": catalogue.EVIDENCE_JUDGED,
}
#: The note of a run with the view switched off.
STATUS = catalogue.EVIDENCE_STATUS
#: The validation sample's form for annotators (beside the sample's CSV).
PAGE = catalogue.EVIDENCE_VALIDATION_PAGE
#: ESB's Table 6 from annotators' labels: written when there are labels, removed when there are none.
LABELLED = catalogue.EVIDENCE_VALIDATION_AGREEMENT


@dataclass(frozen=True)
class EvidenceResult:
    """What stage 09 wrote (``outputs/<run>/09_evidence/``); every frame empty when disabled."""

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
    """The judge stage's references (question_id, reference).

    Raises:
        FileNotFoundError: the judge stage has not run (names the file).
    """
    return read_stage_file(cfg, catalogue.JUDGE_REFERENCES, ["question_id", "reference"])


def retrieved_lists(
    cfg: RunConfig, questions: pl.DataFrame, *, pipeline: str, k: int, search: Search | None
) -> tuple[dict[str, list[str]], int]:
    """The retriever's ranked chunk ids per question (scenario + question as the query): stage
    05's where it retrieved at least k with this pipeline, else a new search. Returns the lists
    and how many questions needed a search."""
    out: dict[str, list[str]] = {}
    path = catalogue.ANSWER_RETRIEVED.path(cfg)
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


def disabled(cfg: RunConfig) -> EvidenceResult:
    """Write the status note saying the view is off, remove stale outputs, return an empty result."""
    writer = StageWriter.of(cfg, "evidence")
    writer.remove(*TABLES.values(), *FRAMES.values(), PAGE, LABELLED, catalogue.EVIDENCE_MANIFEST)
    writer.text(STATUS, "The evidence view is disabled in this run (evidence.enabled: false); it wrote no tables.\n")
    writer.finish()
    return EvidenceResult(manifest={"run": cfg.run, "enabled": False})


def run(
    cfg: RunConfig, *, models: Models | None = None, search: Search | None = None, progress: bool = False
) -> EvidenceResult:
    """Run stage 09 and write its outputs (``09_evidence/``); return them.

    ``models`` and ``search`` default to the run's model servers and index (tests inject fakes).
    """
    if not cfg.evidence.enabled:
        return disabled(cfg)
    writer = StageWriter.of(cfg, "evidence")
    params: EvidenceParams = cfg.evidence
    s = Settings.of(cfg)
    bench = read_benchmark(cfg, (*BENCHMARK_COLUMNS, "fact"))
    questions = answer.select_questions(bench, params.limit_questions, cfg.seed)
    chunks = c_pre(cfg)
    titles = sorted({c.title for c in chunks.values() if c.title})
    refs = references(cfg)
    annotations = validation.read_labels(validation.labels_dir(cfg))  # a bad file stops before any call
    writer.mark()
    retrieved, searched = retrieved_lists(cfg, questions, pipeline=s.pipeline, k=s.k, search=search)
    writer.lap("retrieval")
    own: ModelPool | None = None
    if models is None:
        models = own = ModelPool(cfg, progress=progress)
    pool: Models = models
    try:
        writer.mark()
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
        writer.lap("levels")
        responses, timings = asking.answer_instances(
            built.instances,
            models=pool,
            model_ids=s.models,
            thinking=params.thinking,
            prompts=s.prompts,
            max_tokens=s.max_tokens,
            temperature=params.temperature,
        )
        writer.lap("answers")
        labels, scores = _judge(cfg, s, pool, responses, refs)
        writer.lap("judges")
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
    frames = {
        "key_values": values,
        "instances": built.instances,
        "responses": responses,
        "labels": labels,
        "scores": scores,
        "judged": judged,
    }
    for name, frame in frames.items():
        writer.frame(FRAMES[name], frame)
    for name, frame in out.items():
        writer.frame(TABLES[name], frame)
    writer.text(PAGE, validation.sample_html(out["validation_sample"], cfg.run))
    if annotations:
        out["validation_agreement"] = validation.annotator_agreement(out["validation_sample"], annotations)
        writer.frame(LABELLED, out["validation_agreement"])
    else:
        writer.remove(LABELLED)
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
        "seconds": writer.timing(),
    }
    writer.manifest(manifest)
    writer.finish(STATUS)
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
    parts = each_model(pool, order, lambda j: judge.score_responses(items, ask(j), judge=j))
    scores = pl.concat(parts) if parts else pl.DataFrame(schema=judge.SCORE_SCHEMA)
    pool.release()
    return labels, scores
