"""What the analysis stage reads: the judged responses of a run and the upstream stages' audits.

The judged table is the judge stage's (:data:`~declinecraft.core.stages.judge.JUDGE_JUDGED`) of the
run that owns that stage, with the single-shot rows of ``analysis.extra_runs`` appended; the
upstream tables (:data:`UPSTREAM`) are copied into the analysis folder so the paper stage needs
nothing but that folder.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.catalogue import Artifact
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import comparison

#: Upstream outputs the analysis and paper use -> name of the copy among the analysis tables.
UPSTREAM: dict[Artifact, str] = {
    catalogue.CORPUS_STATS: "corpus_stats",
    catalogue.VERIFY_AUDIT_FATES: "audit_fates",
    catalogue.VERIFY_AUDIT_STYLE: "audit_style",
    catalogue.VERIFY_AUDIT_RETRIEVAL: "audit_retrieval",
    catalogue.VERIFY_AUDIT_GENERATORS: "generator_audit",
    catalogue.JUDGE_AGREEMENT: "response_judge_agreement",
}
#: The tables :func:`upstream_tables` derives from the answer stage's retrieval diagnostics.
DERIVED = ("scenario_overlap", "retrieval_k")


def stage_inputs(cfg: RunConfig) -> dict[str, Path]:
    """Where the stage reads from: the judged table of this run (or its owner) and of extra runs."""
    found = {"judged": catalogue.JUDGE_JUDGED.path(cfg)}
    for run in cfg.analysis.extra_runs:
        found[f"judged:{run}"] = catalogue.JUDGE_JUDGED.path(cfg, run=run)
    return found


def load_judged(cfg: RunConfig) -> tuple[pl.DataFrame | None, str]:
    """The run's judged table (extra runs appended), or ``(None, reason)`` when it is missing."""
    inputs = stage_inputs(cfg)
    if not inputs["judged"].is_file():
        marker = inputs["judged"].parent / catalogue.NOT_BUILT
        why = "the judge stage is not built yet" if marker.is_file() else "the judge stage has not run"
        return None, f"{why}: {inputs['judged'].relative_to(cfg.root)} is missing"
    main = pl.read_parquet(inputs["judged"])
    frames = [main]
    keys = [c for c in ("model", "thinking", "condition", "pipeline", "k") if c in main.columns]
    for key, path in inputs.items():
        if key != "judged" and path.is_file():
            # Only an extra run's single-shot rows join, and never rows the run itself has
            # (its no-RAG answers would otherwise be counted twice).
            extra = pl.read_parquet(path).filter(pl.col("condition") == "single")
            on = [c for c in keys if c in extra.columns]
            frames.append(extra.join(main.select(on).unique(), on=on, how="anti", nulls_equal=True))
    return pl.concat(frames, how="diagonal_relaxed"), ""


def roles_of(cfg: RunConfig) -> dict[str, str]:
    """Superscript marks of models with a role in building or scoring the benchmark (Table 2)."""
    marks: dict[str, str] = {}
    for model, mark in ((cfg.generate.generator, "G"), (cfg.verify.verifier, "V"), (cfg.judge.response_judge, "R")):
        marks[model] = marks.get(model, "") + mark
    for model in cfg.judge.accuracy_judges:
        if "V" not in marks.get(model, ""):
            marks[model] = marks.get(model, "") + "J"
    return marks


def retrieval_tables(retrieval: pl.DataFrame, *, pipeline: str, k: int) -> dict[str, pl.DataFrame]:
    """Retrieval alone, from the answer stage's retrieval diagnostics (questions with their scenario):

    - ``retrieval_k`` (Figure 21, top): per k of the main pipeline, the share of answerable
      questions whose target chunk is retrieved and of unanswerable questions retrieving a chunk
      their scenario was written from, with the depth scored and the counts;
    - ``scenario_overlap`` (Figure 24): that scenario-chunk share per pipeline at the main k.
    """
    need = {"metric", "pipeline", "k", "depth", "scenario", "n", "hits", "rate"}
    if retrieval.height == 0 or not need <= set(retrieval.columns):
        return {}
    rows = retrieval.filter(pl.col("scenario"))
    metric = lambda name, prefix: rows.filter(pl.col("metric") == name).select(  # noqa: E731
        "pipeline",
        "k",
        "depth",
        pl.col("rate").alias(f"{prefix}_hit"),
        pl.col("hits").alias(f"{prefix}_hits"),
        pl.col("n").alias(f"{prefix}_n"),
    )
    both = metric("hit_at_k", "target").join(
        metric("scenario_overlap", "scenario"), on=["pipeline", "k", "depth"], how="full", coalesce=True
    )
    by_k = both.filter(pl.col("pipeline") == pipeline).drop("pipeline").sort("k")
    overlap = (
        rows.filter((pl.col("metric") == "scenario_overlap") & (pl.col("k") == k))
        .select("pipeline", "k", "n", "hits", share=pl.col("rate"))
        .sort("pipeline")
    )
    return {"retrieval_k": by_k, "scenario_overlap": overlap}


def upstream_tables(cfg: RunConfig) -> dict[str, pl.DataFrame]:
    """Corpus statistics, verify audits (fates, style, retrieval, generators) and response-judge
    agreement, where the run has them, plus the retrieval-only tables of Figures 21 and 24 read
    off the answer stage's ``retrieval.parquet`` (:func:`retrieval_tables`) and the generation
    failures per generator and step (:func:`with_format_losses`, Table 9)."""
    found = {}
    for artifact, key in UPSTREAM.items():
        path = artifact.path(cfg)
        if path.is_file():
            found[key] = pl.read_csv(path, infer_schema_length=10000)
    retrieval = catalogue.ANSWER_RETRIEVAL.path(cfg)
    if retrieval.is_file():
        found.update(retrieval_tables(pl.read_parquet(retrieval), pipeline=cfg.answer.pipeline, k=cfg.answer.k))
    drafts = catalogue.GENERATE_DRAFTS.path(cfg)
    if "generator_audit" in found and drafts.is_file():
        found["generator_audit"] = with_format_losses(
            found["generator_audit"], pl.read_parquet(drafts, columns=["generator", "status", "step"])
        )
    if "generator_audit" in found:
        audit = found["generator_audit"].with_columns(main_generator=pl.col("generator") == cfg.generate.generator)
        # Table 9's CAR: one model on each generator's own questions (evaluation.comparison).
        if (car := comparison.read(cfg)) is not None:
            audit = audit.join(car, on="generator", how="left", maintain_order="left")
        found["generator_audit"] = audit
    return found


def with_format_losses(audit: pl.DataFrame, drafts: pl.DataFrame) -> pl.DataFrame:
    """Table 9's "lost to format" split by step: ``lost_to_format`` keeps the drafts with no
    parsable fact list or question (the paper's definition), ``lost_at_scenario`` the drafts whose
    scenario could not be read (a step the paper counts apart); one row per generator."""
    lost = drafts.filter(pl.col("status") == "lost_to_format")
    counts = (
        audit.select("generator")
        .join(
            lost.group_by("generator").agg(
                lost_to_format=pl.col("step").is_in(["facts", "question"]).sum().cast(pl.Int64),
                lost_at_scenario=(pl.col("step") == "scenario").sum().cast(pl.Int64),
            ),
            on="generator",
            how="left",
            maintain_order="left",
        )
        .with_columns(pl.col("lost_to_format", "lost_at_scenario").fill_null(0))
    )
    return audit.drop("lost_to_format", "lost_at_scenario", strict=False).join(
        counts, on="generator", how="left", maintain_order="left"
    )
