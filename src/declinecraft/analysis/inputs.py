"""What the analysis stage reads: the judged responses of a run and the upstream stages' audits.

The judged table is ``06_judge/judged.parquet`` of the run that owns the judge stage, with the
single-shot rows of ``analysis.extra_runs`` appended; the upstream tables (:data:`UPSTREAM`) are
copied into ``07_analysis/`` so the paper stage needs nothing but the analysis folder.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core.config import RunConfig

#: Upstream outputs the analysis and paper use: (stage, file) -> name of the copy in 07_analysis.
UPSTREAM = {
    ("corpus", "stats.csv"): "corpus_stats",
    ("verify", "audit_fates.csv"): "audit_fates",
    ("verify", "audit_style.csv"): "audit_style",
    ("verify", "audit_retrieval.csv"): "audit_retrieval",
    ("verify", "audit_generators.csv"): "generator_audit",
    ("judge", "agreement.csv"): "response_judge_agreement",
}
#: The table :func:`upstream_tables` derives from the retrieval audit.
DERIVED = ("scenario_overlap",)


def stage_inputs(cfg: RunConfig) -> dict[str, Path]:
    """Where the stage reads from: the judged table of this run (or its owner) and of extra runs."""
    found = {"judged": cfg.stage_dir("judge") / "judged.parquet"}
    for run in cfg.analysis.extra_runs:
        found[f"judged:{run}"] = cfg.run_dir(run) / "06_judge" / "judged.parquet"
    return found


def load_judged(cfg: RunConfig) -> tuple[pl.DataFrame | None, str]:
    """The run's judged table (extra runs appended), or ``(None, reason)`` when it is missing."""
    inputs = stage_inputs(cfg)
    if not inputs["judged"].is_file():
        marker = inputs["judged"].parent / "NOT_BUILT.md"
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


def upstream_tables(cfg: RunConfig) -> dict[str, pl.DataFrame]:
    """Corpus statistics, verify audits (fates, style, retrieval, generators) and response-judge
    agreement, where the run has them, plus the scenario overlap read off the retrieval audit."""
    found = {}
    for (stage, name), key in UPSTREAM.items():
        path = cfg.stage_dir(stage) / name
        if path.is_file():
            found[key] = pl.read_csv(path, infer_schema_length=10000)
    audit = found.get("audit_retrieval")
    if audit is not None and {"audit", "pipeline", "rate"} <= set(audit.columns):
        found["scenario_overlap"] = audit.filter(pl.col("audit") == "scenario_overlap").select("pipeline", share=pl.col("rate"))
    return found
