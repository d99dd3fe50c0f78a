"""Every statistic of the paper over one judged table, as tidy result tables (§4, App. A, H).

:func:`analyze` takes the judged responses (one row per response, the schema of
``outputs/<run>/06_judge/judged.parquet``) and the model facts, and returns a dict of tidy polars
frames, one per result (``main_grid``, ``paired_tests``, ``thinking_transitions``, ...). Metrics
come from :mod:`declinecraft.evaluation.metrics`, tests from :mod:`declinecraft.core.stats`; the
sibling modules ``paired``, ``models`` and ``judges`` apply them to the paper's families of
comparisons, and :mod:`declinecraft.analysis.stage` runs all of it for a run and writes the CSVs.

Rates and accuracies are proportions in [0, 1] in every table. Anything a run cannot support (a
missing condition, a model without release month, kappa with a single label) is a NaN with a
``note``, collected in the ``notes`` table — never an exception.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from declinecraft.analysis import examples, judges, models, paired
from declinecraft.core import registry, stats
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import metrics

RUN_KEYS = ("model", "thinking", "condition", "pipeline", "k", "scenario", "prompt_variant")
CONFIG = ("model", "thinking")
CONDITIONS = ("no_rag", "single", "iterative")
REQUIRED = ("question_id", "answerable", "model", "condition", "label", "budget_exhausted", "accuracy")
NO_PIPELINE = "none"


@dataclass(frozen=True)
class Design:
    """Which judged rows form the main grid, and the statistics' settings."""

    pipeline: str = "hybrid"
    """Default retriever of the main grid (``answer.pipeline``)."""
    k: int = 5
    """Chunks retrieved in the main grid (``answer.k``)."""
    prompt_variant: str = "default"
    """Prompt variant of the main grid; other variants are ablations."""
    n_resamples: int = 1000
    """Bootstrap resamples over questions."""
    confidence: float = 0.95
    """Level of every interval."""
    alpha: float = 0.05
    """Significance threshold on BH q values."""
    min_attempt: float = 0.95
    """Attempt-rate requirement of the illustrative frontier point (App. A.7)."""
    seed: int = 0
    """Seed of every bootstrap and sample."""
    judge_prefix: str = "score_"
    """Prefix of the per-judge score columns."""


def design_from_config(cfg: RunConfig) -> Design:
    """The :class:`Design` of a run: main-grid retrieval from ``answer``, statistics from ``analysis``."""
    a = cfg.analysis
    return Design(
        pipeline=cfg.answer.pipeline,
        k=cfg.answer.k,
        n_resamples=a.bootstrap_resamples,
        confidence=a.confidence,
        alpha=a.alpha,
        min_attempt=a.min_attempt,
        seed=cfg.seed,
        judge_prefix=a.judge_score_prefix,
    )


def release_month(release: str | None) -> float:
    """Months since January 2000 of a ``YYYY-MM`` release date; NaN when unknown or malformed."""
    match = re.fullmatch(r"(\d{4})-(\d{2})(?:-\d{2})?", str(release or ""))
    return float((int(match[1]) - 2000) * 12 + int(match[2]) - 1) if match else float("nan")


def _spec_field(spec: registry.ModelSpec | None, name: str, default: Any = None) -> Any:
    return getattr(spec, name) if spec else default


def model_facts(
    specs: Mapping[str, registry.ModelSpec], model_ids: Sequence[str], roles: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """One row of registry facts per model (family, sizes, release month, thinking, role marks).

    A model missing from the registry gets its id as family and null facts; ``roles`` maps a
    model id to its superscript marks (G generator, V verifier/accuracy judge, R response judge).
    """
    rows = []
    for model in model_ids:
        spec = specs.get(model)
        get = functools.partial(_spec_field, spec)
        rows.append(
            dict(
                model=model,
                family=get("family") or model,
                display_name=get("display_name") or model,
                params_total_b=get("params_total_b"),
                params_active_b=get("params_active_b"),
                release=get("release"),
                knowledge_cutoff=get("knowledge_cutoff"),
                precision=get("precision"),
                thinking_mode=get("thinking", "none"),
                roles=(roles or {}).get(model, ""),
                in_registry=spec is not None,
            )
        )
    schema = {
        "model": pl.String,
        "family": pl.String,
        "display_name": pl.String,
        "params_total_b": pl.Float64,
        "params_active_b": pl.Float64,
        "release": pl.String,
        "knowledge_cutoff": pl.String,
        "precision": pl.String,
        "thinking_mode": pl.String,
        "roles": pl.String,
        "in_registry": pl.Boolean,
    }
    return with_derived_facts(pl.DataFrame(rows, schema=schema))


def with_derived_facts(facts: pl.DataFrame) -> pl.DataFrame:
    """Add the facts the analysis derives from the registry's: release month and open weights.

    Facts from elsewhere (a test, a benchmark) need them before they can join the main grid.
    """
    facts = facts.with_columns(
        release_month=pl.col("release").map_elements(release_month, return_dtype=pl.Float64),
        open_weight=pl.col("params_total_b").is_not_null(),
    )
    if "roles" not in facts.columns:
        facts = facts.with_columns(roles=pl.lit(""))
    return facts


def prepare(judged: pl.DataFrame, design: Design = Design()) -> pl.DataFrame:
    """Check a judged table and fill the optional design columns with the main grid's values.

    Raises:
        ValueError: a required column is missing (the message lists what is needed).
    """
    if missing := [c for c in REQUIRED if c not in judged.columns]:
        raise ValueError(f"judged table lacks columns {missing}; needs {list(REQUIRED)}")
    defaults = {
        "thinking": pl.lit("off"),
        "pipeline": pl.lit(None, pl.String),
        "k": pl.lit(None, pl.Int64),
        "scenario": pl.lit(True),
        "prompt_variant": pl.lit(design.prompt_variant),
    }
    frame = judged.with_columns(expr.alias(c) for c, expr in defaults.items() if c not in judged.columns)
    if frame.schema["thinking"] == pl.Boolean:  # a boolean switch reads as the paper's on/off
        frame = frame.with_columns(
            pl.when(pl.col("thinking")).then(pl.lit("on")).otherwise(pl.lit("off")).alias("thinking")
        )
    no_rag = pl.col("condition") == "no_rag"
    # A response without a label that did not exhaust its budget (a failed answer call, an
    # unparsable judge verdict) has no defined outcome: it is left out and counted by analyze().
    frame = frame.filter(pl.col("label").is_not_null() | pl.col("budget_exhausted").cast(pl.Boolean).fill_null(False))
    return frame.with_columns(
        pl.col("thinking").cast(pl.String).fill_null("off"),
        pl.when(no_rag)
        .then(pl.lit(NO_PIPELINE))
        .otherwise(pl.col("pipeline").cast(pl.String).fill_null(design.pipeline))
        .alias("pipeline"),
        pl.when(no_rag).then(pl.lit(0)).otherwise(pl.col("k").cast(pl.Int64).fill_null(design.k)).alias("k"),
        pl.col("scenario").cast(pl.Boolean).fill_null(True),
        pl.col("prompt_variant").cast(pl.String).fill_null(design.prompt_variant),
        pl.col("budget_exhausted").cast(pl.Boolean).fill_null(False),
        pl.col("answerable").cast(pl.Boolean),
        pl.col("label").cast(pl.String),
    )


def main_grid_rows(frame: pl.DataFrame, design: Design = Design()) -> pl.DataFrame:
    """The main grid: default prompt, with the scenario, no RAG or the default pipeline and k."""
    retrieval = (pl.col("pipeline") == design.pipeline) & (pl.col("k") == design.k)
    return frame.filter(
        pl.col("scenario")
        & (pl.col("prompt_variant") == design.prompt_variant)
        & ((pl.col("condition") == "no_rag") | retrieval)
    )


def _complete_grid(summary: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    """Every configuration under every condition; a missing condition is a NaN row with a note."""
    configs = summary.select(CONFIG).unique(maintain_order=True)
    grid = configs.join(pl.DataFrame({"condition": list(CONDITIONS)}), how="cross")
    out = grid.join(summary, on=[*CONFIG, "condition"], how="left", maintain_order="left")
    floats = [c for c, t in summary.schema.items() if t == pl.Float64]
    ints = [c for c, t in summary.schema.items() if t == pl.Int64 and c not in RUN_KEYS]
    out = out.with_columns(
        note=pl.when(pl.col("car_n").is_null()).then(pl.lit("no responses under this condition")).otherwise(pl.lit("")),
    ).with_columns(pl.col(floats).fill_null(np.nan), pl.col(ints).fill_null(0))
    out = out.join(facts, on="model", how="left", maintain_order="left")
    switchable = out.group_by("model").agg(pl.col("thinking").n_unique().alias("_n"))
    return (
        out.join(switchable, on="model", maintain_order="left")
        .with_columns(
            switchable=pl.col("_n") > 1,
            config_label=pl.col("display_name").fill_null(pl.col("model"))
            + pl.when(pl.col("thinking") == "on").then(pl.lit(" (thinking)")).otherwise(pl.lit("")),
        )
        .drop("_n")
    )


def analyze(
    judged: pl.DataFrame,
    facts: pl.DataFrame | None = None,
    design: Design = Design(),
    judge_families: Mapping[str, str | None] | None = None,
) -> dict[str, pl.DataFrame]:
    """Every result table of the paper for one judged table (see the module docstring).

    ``judge_families`` maps each accuracy judge's score column to its model family (from the
    registry; the judges need not be evaluated models); by default a judge's family is looked
    up among the evaluated models' facts.
    """
    frame = prepare(judged, design)
    dropped = judged.height - frame.height
    if facts is None:
        facts = model_facts({}, frame["model"].unique().sort().to_list())
    elif "release_month" not in facts.columns:
        facts = with_derived_facts(facts)
    boot: stats.Bootstrap = {"n_resamples": design.n_resamples, "confidence": design.confidence, "seed": design.seed}
    summary = metrics.summarize(frame, by=RUN_KEYS, **boot)
    main = main_grid_rows(frame, design)
    main_summary = summary.join(main.select(RUN_KEYS).unique(), on=list(RUN_KEYS), how="semi", nulls_equal=True)
    grid = _complete_grid(main_summary.drop("pipeline", "k", "scenario", "prompt_variant"), facts)

    single = frame.filter((pl.col("condition") == "single") & (pl.col("prompt_variant") == design.prompt_variant))
    pipes = single.filter(pl.col("scenario") & (pl.col("k") == design.k))
    ks = single.filter(pl.col("scenario") & (pl.col("pipeline") == design.pipeline))
    scen = single.filter((pl.col("pipeline") == design.pipeline) & (pl.col("k") == design.k))
    a = design.alpha
    paired_tests = pl.concat(
        [
            paired.main_grid_tests(main, alpha=a),
            paired.main_grid_tests(main, lenient=True, alpha=a),
            paired.ablation_tests(pipes, family="pipeline_ablation", column="pipeline", base=design.pipeline, alpha=a),
            paired.ablation_tests(ks, family="k_sweep", column="k", base=design.k, alpha=a),
            paired.ablation_tests(scen, family="scenario_ablation", column="scenario", base=True, alpha=a),
        ]
    ).filter(pl.col("family").is_not_null())
    transitions = paired.thinking_transitions_table(main, alpha=a)

    def ablation(rows: pl.DataFrame, column: str) -> pl.DataFrame:
        """Summaries of the configurations run under two or more values of ``column``."""
        varied = rows.group_by(CONFIG).agg(pl.col(column).n_unique().alias("_n")).filter(pl.col("_n") > 1)
        if varied.height == 0:
            return summary.head(0).join(facts, on="model", how="left")
        keep = rows.join(varied.select(CONFIG), on=list(CONFIG), how="semi").select(RUN_KEYS).unique()
        return summary.join(keep, on=list(RUN_KEYS), how="semi", nulls_equal=True).join(facts, on="model", how="left")

    judge_cols = judges.judge_columns(frame, design.judge_prefix)
    judge_families = {
        c: (judge_families or {}).get(c) or _judge_family(c, design.judge_prefix, facts) for c in judge_cols
    }
    main_keys = [*CONFIG, "condition"]
    main_fam = main.join(facts.select("model", "family"), on="model", how="left")
    tables = {
        "summary": summary,
        "main_grid": grid,
        "paired_tests": paired_tests,
        "significance_counts": paired.significance_counts(paired_tests),
        "thinking_transitions": transitions,
        "condition_means": models.condition_means(grid, confidence=design.confidence),
        "model_differences": models.model_differences(grid, transitions, confidence=design.confidence),
        "thinking_by_family": models.thinking_by_family(grid),
        "associations": models.associations(grid, alpha=a),
        "frontier": models.frontier_table(grid, min_attempt=design.min_attempt),
        "direction_counts": pl.DataFrame([models.direction_counts(grid)]),
        "family_label_shares": models.family_label_shares(grid),
        "leakage_model": models.leakage(main, facts, by=CONFIG, **boot),
        "leakage_family": models.leakage(main, facts, by=("family",), **boot),
        "ablation_pipelines": ablation(pipes, "pipeline"),
        "ablation_k": ablation(ks, "k"),
        "ablation_k_full": models.complete_sweep(ablation(ks, "k"), "k"),
        "ablation_scenario": ablation(scen, "scenario"),
        "judge_agreement": judges.judge_agreement(main, judge_cols),
        "judge_run_accuracy": judges.judge_run_accuracy(main, judge_cols, main_keys),
        "judge_leniency": judges.judge_leniency(main, judge_cols),
        "self_preference": judges.self_preference_table(main_fam, judge_families, **boot),
        "judge_rerank": judges.other_family_rerank(
            main_fam.filter(pl.col("condition") == "single"), judge_families, CONFIG
        ),
        "examples": examples.example_rows(main, facts, seed=design.seed),
    }
    notes = collect_notes(tables)
    if dropped:
        why = f"{dropped} responses without a label (answer errors or unparsable judge output) left out"
        notes = pl.concat([notes, pl.DataFrame({"table": ["judged"], "item": [""], "reason": [why]})])
    tables["notes"] = notes
    return tables


def _judge_family(column: str, prefix: str, facts: pl.DataFrame) -> str | None:
    model = column[len(prefix) :]
    hit = facts.filter(pl.col("model") == model)
    return hit["family"][0] if hit.height else None


def collect_notes(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Every non-empty ``note`` of every table, with the table and row it came from."""
    rows = []
    for name, table in tables.items():
        if "note" not in table.columns:
            continue
        ident = [
            c
            for c in (
                "family",
                "comparison",
                "name",
                "quantity",
                "metric",
                "model",
                "thinking",
                "condition",
                "judge_a",
                "judge_b",
                "judge",
            )
            if c in table.columns
        ]
        for row in table.filter(pl.col("note").fill_null("") != "").iter_rows(named=True):
            item = ", ".join(f"{c}={row[c]}" for c in ident if row[c] not in (None, ""))
            rows.append(dict(table=name, item=item, reason=row["note"]))
    return pl.DataFrame(rows, schema={"table": pl.String, "item": pl.String, "reason": pl.String})
