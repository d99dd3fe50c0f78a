"""Quoted numbers: attempt rate against CAR (A.7) and the ablations (A.2–A.4)."""

from __future__ import annotations

import polars as pl

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number

NUMBERS: list[Number] = [
    # --- attempt vs CAR (A.7)
    Number(
        "DirBoth",
        "configurations with higher CAR and attempt, single vs none",
        lambda t: number_sources.one(number_sources.table(t, "direction_counts"), "both_higher", "directions"),
        "int",
        "configs_higher_car_and_attempt_single_vs_none",
    ),
    Number(
        "DirCARUpAttDown",
        "higher CAR, lower attempt",
        lambda t: number_sources.one(
            number_sources.table(t, "direction_counts"), "car_higher_attempt_lower", "directions"
        ),
        "int",
        "configs_higher_car_lower_attempt_single_vs_none",
    ),
    Number(
        "DirCARDownAttUp",
        "lower CAR, higher attempt",
        lambda t: number_sources.one(
            number_sources.table(t, "direction_counts"), "car_lower_attempt_higher", "directions"
        ),
        "int",
        "configs_lower_car_higher_attempt_single_vs_none",
    ),
    Number(
        "FrontierCARNorag",
        "highest CAR at the attempt requirement, no RAG",
        number_sources.frontier("no_rag", "car"),
        "pct",
        "frontier_car_at_attempt95_no_rag",
        n=number_sources.questions("no_rag"),
    ),
    Number(
        "FrontierAttNorag",
        "its attempt rate",
        number_sources.frontier("no_rag", "attempt"),
        "pct",
        "frontier_attempt_at_attempt95_no_rag",
        n=number_sources.questions("no_rag", "attempt"),
    ),
    Number("FrontierWhoNorag", "its configuration", number_sources.frontier("no_rag", "label"), "text"),
    Number(
        "FrontierCARSingle",
        "highest CAR at the attempt requirement, single",
        number_sources.frontier("single", "car"),
        "pct",
        "frontier_car_at_attempt95_single",
        n=number_sources.questions("single"),
    ),
    Number(
        "FrontierAttSingle",
        "its attempt rate",
        number_sources.frontier("single", "attempt"),
        "pct",
        "frontier_attempt_at_attempt95_single",
        n=number_sources.questions("single", "attempt"),
    ),
    Number("FrontierWhoSingle", "its configuration", number_sources.frontier("single", "label"), "text"),
    Number(
        "AttMinSingle",
        "lowest attempt rate, single",
        number_sources.grid_extreme("attempt", "min"),
        "pct",
        "attempt_range_single_min",
        n=number_sources.questions("single", "attempt"),
    ),
    Number(
        "AttMaxSingle",
        "highest attempt rate, single",
        number_sources.grid_extreme("attempt", "max"),
        "pct",
        "attempt_range_single_max",
        n=number_sources.questions("single", "attempt"),
    ),
    Number(
        "CARMinSingle",
        "lowest CAR, single",
        number_sources.grid_extreme("car", "min"),
        "pct",
        "car_range_single_min",
        n=number_sources.questions("single", "car"),
    ),
    Number(
        "CARMaxSingle",
        "highest CAR, single",
        number_sources.grid_extreme("car", "max"),
        "pct",
        "car_range_single_max",
        n=number_sources.questions("single", "car"),
    ),
    # --- ablations (A.2–A.4)
    Number(
        "KSweepModels",
        "configurations in the k ablation",
        lambda t: number_sources.table(t, "ablation_k").select("model", "thinking").unique().height,
        "int",
        "k_ablation_models",
    ),
    Number(
        "KCARfive",
        "mean CAR at k=5 (models run at every k)",
        number_sources.ablation_mean("ablation_k_full", "k", k=5),
        "pct",
        "k_sweep_car_k5",
        n=number_sources.ablation_questions("ablation_k_full", k=5),
    ),
    Number(
        "KCARten",
        "mean CAR at k=10 (models run at every k)",
        number_sources.ablation_mean("ablation_k_full", "k", k=10),
        "pct",
        "k_sweep_car_k10",
        n=number_sources.ablation_questions("ablation_k_full", k=10),
    ),
    Number(
        "KAccfive",
        "mean accuracy at k=5",
        number_sources.ablation_mean("ablation_k_full", "k", "accuracy", k=5),
        "pct",
        "k_sweep_accuracy_k5",
        n=number_sources.ablation_questions("ablation_k_full", "accuracy", k=5),
    ),
    Number(
        "KAccten",
        "mean accuracy at k=10",
        number_sources.ablation_mean("ablation_k_full", "k", "accuracy", k=10),
        "pct",
        "k_sweep_accuracy_k10",
        n=number_sources.ablation_questions("ablation_k_full", "accuracy", k=10),
    ),
    Number(
        "PipeModels",
        "configurations in the pipeline ablation",
        lambda t: number_sources.table(t, "ablation_pipelines").select("model", "thinking").unique().height,
        "int",
        "pipeline_ablation_models",
    ),
    Number(
        "PipeCARbm",
        "mean CAR, BM25",
        number_sources.ablation_mean("ablation_pipelines", "pipeline", pipeline="bm25"),
        "pct",
        "pipeline_car_bm25",
        n=number_sources.ablation_questions("ablation_pipelines", pipeline="bm25"),
    ),
    Number(
        "PipeCARdense",
        "mean CAR, dense",
        number_sources.ablation_mean("ablation_pipelines", "pipeline", pipeline="dense"),
        "pct",
        "pipeline_car_dense",
        n=number_sources.ablation_questions("ablation_pipelines", pipeline="dense"),
    ),
    Number(
        "PipeCARhybrid",
        "mean CAR, hybrid",
        number_sources.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid"),
        "pct",
        "pipeline_car_hybrid",
        n=number_sources.ablation_questions("ablation_pipelines", pipeline="hybrid"),
    ),
    Number(
        "PipeCARrerank",
        "mean CAR, hybrid + rerank",
        number_sources.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rerank"),
        "pct",
        "pipeline_car_hybrid_rerank",
        n=number_sources.ablation_questions("ablation_pipelines", pipeline="hybrid+rerank"),
    ),
    Number(
        "PipeCARboth",
        "mean CAR, hybrid + rewrite + rerank",
        number_sources.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rewrite+rerank"),
        "pct",
        n=number_sources.ablation_questions("ablation_pipelines", pipeline="hybrid+rewrite+rerank"),
    ),
    Number(
        "PipeSig",
        "significant pipeline comparisons",
        lambda t: int(
            number_sources.table(t, "paired_tests")
            .filter(pl.col("family") == "pipeline_ablation")["significant"]
            .fill_null(False)
            .sum()
        ),
        "int",
    ),
    Number(
        "PipeTests",
        "pipeline comparisons",
        number_sources.count_rows("paired_tests", "pipeline tests", family="pipeline_ablation"),
        "int",
    ),
    Number(
        "ScenCARwith",
        "mean CAR with the scenario (ablation models)",
        number_sources.ablation_mean("ablation_scenario", "scenario", scenario=True),
        "pct",
        n=number_sources.ablation_questions("ablation_scenario", scenario=True),
    ),
    Number(
        "ScenCARwithout",
        "mean CAR without the scenario",
        number_sources.ablation_mean("ablation_scenario", "scenario", scenario=False),
        "pct",
        n=number_sources.ablation_questions("ablation_scenario", scenario=False),
    ),
]
