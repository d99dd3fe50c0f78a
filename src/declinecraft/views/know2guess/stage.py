"""Stage 08 (``stage.run``): Know2Guess's decision protocol on the run's questions.

Reads the benchmark, the answer stage's questions and retrieved chunks (``05_answer/``), the
judge stage's references and labels (``06_judge/``) and the corpus chunks; asks every run
(:mod:`.protocol`), parses each reply both ways, has the run's accuracy judges score the
answers, and writes the catalogue's Know2Guess artifacts (:mod:`declinecraft.core.catalogue`) into
``outputs/<run>/08_know2guess/``: the decisions (one row per run, parser and question), the
summary of every rate with its interval, the cost-sensitive reliability, the outcome profile, the
calibration bins, the parser and prompt sensitivities, the separability probe and its words, the
cross-protocol comparison and crosstab, the parser issues, and the manifest.

With ``know2guess.enabled: false`` it writes the disabled note (and removes its own stale tables).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from declinecraft.core import catalogue, stats
from declinecraft.core.artifacts import read_benchmark, read_stage_file
from declinecraft.core.config import RunConfig
from declinecraft.core.params import Know2GuessParams
from declinecraft.core.stage_writer import StageWriter
from declinecraft.evaluation.answer import select_questions
from declinecraft.evaluation.context import Lookup
from declinecraft.evaluation.judge_stage import chunk_lookup
from declinecraft.llm.pool import ModelPool, Models, each_model
from declinecraft.views.know2guess import (
    crossprotocol,
    grading,
    protocol,
    reliability,
    sensitivity,
)
from declinecraft.views.know2guess.decisions import STATES
from declinecraft.views.know2guess.separability import separability

#: What the view reads of the judge stage's judged table: the response judge's label per setting.
JUDGED_COLUMNS = (
    "model",
    "thinking",
    "condition",
    "pipeline",
    "k",
    "scenario",
    "prompt_variant",
    "question_id",
    "label",
)
#: Result field -> its artifact in ``08_know2guess/``.
FILES = {
    "decisions": catalogue.K2G_DECISIONS,
    "summary": catalogue.K2G_SUMMARY,
    "cost_sensitive": catalogue.K2G_COST_SENSITIVE,
    "outcomes": catalogue.K2G_OUTCOMES,
    "calibration": catalogue.K2G_CALIBRATION,
    "parser_sensitivity": catalogue.K2G_PARSER_SENSITIVITY,
    "prompt_sensitivity": catalogue.K2G_PROMPT_SENSITIVITY,
    "separability": catalogue.K2G_SEPARABILITY,
    "separability_features": catalogue.K2G_SEPARABILITY_FEATURES,
    "cross_protocol": catalogue.K2G_CROSS_PROTOCOL,
    "crosstab": catalogue.K2G_CROSSTAB,
    "issues": catalogue.K2G_ISSUES,
}


@dataclass(frozen=True)
class Know2GuessResult:
    """What stage 08 wrote (``outputs/<run>/08_know2guess/``); every frame empty when disabled."""

    decisions: pl.DataFrame
    """One row per run, parser and question: ``know2guess_decisions.csv``."""
    summary: pl.DataFrame
    """Every rate with its interval, per run and parser: ``know2guess_summary.csv``."""
    cost_sensitive: pl.DataFrame
    """R_λ and ranks: ``know2guess_cost_sensitive.csv``."""
    outcomes: pl.DataFrame
    """The outcome profile: ``know2guess_outcomes.csv``."""
    calibration: pl.DataFrame
    """Confidence bins of answered items: ``know2guess_calibration.csv``."""
    parser_sensitivity: pl.DataFrame
    """Normalized minus strict: ``know2guess_parser_sensitivity.csv``."""
    prompt_sensitivity: pl.DataFrame
    """Controls minus the standard prompt: ``know2guess_prompt_sensitivity.csv``."""
    separability: pl.DataFrame
    """K2G §3.5's probe per text (accuracy, macro-F1, recall, FPR, AUROC, AUPRC): ``know2guess_separability.csv``."""
    separability_features: pl.DataFrame
    """The probe's top words: ``know2guess_separability_features.csv``."""
    cross_protocol: pl.DataFrame
    """Declared vs judged abstention: ``know2guess_cross_protocol.csv``."""
    crosstab: pl.DataFrame
    """State × label counts: ``know2guess_crosstab.csv``."""
    issues: pl.DataFrame
    """Parser issues counted: ``know2guess_issues.csv``."""
    manifest: dict[str, Any]
    """Settings, counts and seconds: ``manifest.json``."""

    @classmethod
    def empty(cls, manifest: dict[str, Any]) -> Know2GuessResult:
        """A result with every frame empty (the view is disabled)."""
        frames = {f.name: pl.DataFrame() for f in dataclasses.fields(cls) if f.name != "manifest"}
        return cls(**frames, manifest=manifest)


def output_files(params: Know2GuessParams) -> list[str]:
    """The files a run of the stage leaves in its folder (the catalogue's, as the view is on or off)."""
    when = catalogue.K2G_ON if params.enabled else catalogue.K2G_OFF
    return [a.name for a in catalogue.writes("know2guess") if a.when in ("", when)]


def issue_counts(decisions: pl.DataFrame) -> pl.DataFrame:
    """Every parser issue (and failed call) counted per run and parser; states and issues are never dropped."""
    flags = decisions.select(*protocol.KEY, issue=pl.col("issues").str.split(";")).explode("issue")
    flags = flags.filter(pl.col("issue").is_not_null() & (pl.col("issue") != ""))
    errors = decisions.filter(pl.col("error").is_not_null()).select(*protocol.KEY, issue=pl.lit("call_failed"))
    return pl.concat([flags, errors]).group_by(*protocol.KEY, "issue").len("n").sort([*protocol.KEY, "issue"])


def ask_all(
    questions: pl.DataFrame,
    runs: list[protocol.Run],
    params: Know2GuessParams,
    models: Models,
    contexts: Mapping[str, str],
) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Ask every run and parse every reply; return rows and timings, in run order.

    A model's runs are asked while its server is up, the models at once where their endpoints are
    separate (:func:`~declinecraft.llm.pool.each_model`), else one after another. The last model's
    server is left running, so an accuracy judge that is also a model under test (the default
    run's 0.5B) does not start twice.
    """

    def one_model(model: str) -> dict[int, tuple[list[dict[str, Any]], dict[str, Any]]]:
        done = {}
        for i, run in enumerate(runs):
            if run.model != model:
                continue
            start = time.monotonic()
            ask = models.asker(
                run.model, thinking=run.thinking, max_tokens=params.max_tokens, temperature=params.temperature
            )
            rows = protocol.decision_rows(questions, run, ask(protocol.calls(questions, run, contexts)))
            done[i] = (rows, {**run.__dict__, "seconds": round(time.monotonic() - start, 2)})
        return done

    parts: dict[int, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
    for done in each_model(models, [run.model for run in runs], one_model, keep_last=True):
        parts.update(done)
    rows = [row for i in range(len(runs)) for row in parts[i][0]]
    return protocol.decisions_frame(rows), [parts[i][1] for i in range(len(runs))]


def run(
    cfg: RunConfig, *, models: Models | None = None, lookup: Lookup | None = None, progress: bool = False
) -> Know2GuessResult:
    """Run stage 08 and write its outputs (``08_know2guess/``); return them.

    ``models`` and ``lookup`` default to the run's model servers and corpus chunks (tests inject
    fakes). Every call is cached, so a rerun sends none.
    """
    writer = StageWriter.of(cfg, "know2guess")
    params: Know2GuessParams = cfg.know2guess
    if not params.enabled:
        writer.remove(*FILES.values())
        writer.text(catalogue.K2G_DISABLED, "Know2Guess view disabled (know2guess.enabled: false).\n")
        manifest = {"run": cfg.run, "enabled": False}
        writer.manifest(manifest)
        writer.finish()
        return Know2GuessResult.empty(manifest)
    protocol.check(params)
    bench = read_benchmark(cfg)
    asked = set(read_stage_file(cfg, catalogue.ANSWER_RESPONSES, ["question_id"])["question_id"])
    questions = select_questions(bench.filter(pl.col("id").is_in(sorted(asked))), params.limit_questions, cfg.seed)
    references = read_stage_file(cfg, catalogue.JUDGE_REFERENCES)
    judged = read_stage_file(cfg, catalogue.JUDGE_JUDGED, JUDGED_COLUMNS)
    own = ModelPool(cfg, progress=progress) if models is None else None
    pool = own if own is not None else models
    assert pool is not None
    try:
        contexts: dict[str, str] = {}
        if "single" in params.conditions:
            retrieved = read_stage_file(cfg, catalogue.ANSWER_RETRIEVED)
            contexts = protocol.contexts(
                questions,
                retrieved,
                lookup or chunk_lookup(cfg),
                pipeline=cfg.answer.pipeline,
                k=cfg.answer.k,
                chunk_chars=cfg.answer.context_chars,
            )
        runs = protocol.plan(params, cfg.answer, pool.thinking_switch)
        writer.mark()
        decisions, timings = ask_all(questions, runs, params, pool, contexts)
        writer.lap("decisions")
        items = grading.judge_items(decisions, references)
        last = runs[-1].model if runs else None
        order = sorted(dict.fromkeys(cfg.judge.accuracy_judges), key=lambda j: j != last)  # the open server first
        askers = {
            j: pool.asker(j, thinking=None, max_tokens=cfg.judge.max_tokens, temperature=cfg.judge.temperature)
            for j in order
        }
        scores, accuracy = grading.score_items(items, askers, constrain=cfg.judge.constrain_reask)
        writer.lap("grading")
    finally:
        if own is not None:
            own.close()
    decisions = grading.credit(decisions, accuracy)
    decisions = crossprotocol.with_judge_labels(decisions, judged, pipeline=cfg.answer.pipeline, k=cfg.answer.k)
    boot: stats.Bootstrap = {
        "n_resamples": params.bootstrap_resamples,
        "confidence": params.confidence,
        "seed": cfg.seed,
    }
    probe, features = separability(bench, seed=cfg.seed, top=params.audit_top_features)
    tables = {
        "decisions": decisions,
        "summary": reliability.summary(decisions, bins=params.ece_bins, **boot),
        "cost_sensitive": reliability.cost_sensitive(decisions, params.lambdas),
        "outcomes": reliability.outcomes(decisions),
        "calibration": reliability.calibration(decisions, params.ece_bins),
        "parser_sensitivity": sensitivity.parser_sensitivity(decisions, **boot),
        "prompt_sensitivity": sensitivity.prompt_sensitivity(decisions, **boot),
        "separability": probe,
        "separability_features": features,
        "cross_protocol": crossprotocol.cross_protocol(decisions, **boot),
        "crosstab": crossprotocol.crosstab(decisions),
        "issues": issue_counts(decisions),
    }
    for name, frame in tables.items():
        writer.frame(FILES[name], frame)
    strict = decisions.filter(pl.col("parser") == "strict")
    manifest = {
        "run": cfg.run,
        "enabled": True,
        "seed": cfg.seed,
        "params": cfg.block_dict("know2guess"),
        "questions": questions.height,
        "answerable": int(questions["answerable"].sum()),
        "runs": len(runs),
        "decision_calls": strict.height,
        "failed_calls": int(strict["error"].is_not_null().sum()),
        "states": {
            mode: {s: int(((decisions["parser"] == mode) & (decisions["state"] == s)).sum()) for s in STATES}
            for mode in ("strict", "normalized")
        },
        "judge_items": items.height,
        "judges": order,
        "scored_by_llm": int((scores["source"] == "llm").sum()) if scores.height else 0,
        "unscored": int(
            (decisions["state"].eq("ANSWER") & decisions["answerable"] & decisions["credit"].is_null()).sum()
        ),
        "seconds": writer.timing(),
        "timings": timings,
    }
    writer.manifest(manifest)
    writer.finish(catalogue.K2G_DISABLED)
    return Know2GuessResult(**tables, manifest=manifest)
