"""Quoted numbers: attempt rate against CAR (A.7) and the ablations (A.2–A.4)."""

from __future__ import annotations

import polars as pl

from declinecraft.paper import number_sources as read
from declinecraft.paper.number_spec import Number

NUMBERS: list[Number] = [
    # --- attempt vs CAR (A.7)
    Number(
        "DirBoth",
        "configurations with higher CAR and attempt, single vs none",
        lambda t: read.one(read.table(t, "direction_counts"), "both_higher", "directions"),
        "int",
        "configs_higher_car_and_attempt_single_vs_none",
    ),
    Number(
        "DirCARUpAttDown",
        "higher CAR, lower attempt",
        lambda t: read.one(read.table(t, "direction_counts"), "car_higher_attempt_lower", "directions"),
        "int",
        "configs_higher_car_lower_attempt_single_vs_none",
    ),
    Number(
        "DirCARDownAttUp",
        "lower CAR, higher attempt",
        lambda t: read.one(read.table(t, "direction_counts"), "car_lower_attempt_higher", "directions"),
        "int",
        "configs_lower_car_higher_attempt_single_vs_none",
    ),
    Number(
        "FrontierCARNorag",
        "highest CAR at the attempt requirement, no RAG",
        read.frontier("no_rag", "car"),
        "pct",
        "frontier_car_at_attempt95_no_rag",
        n=read.questions("no_rag"),
    ),
    Number(
        "FrontierAttNorag",
        "its attempt rate",
        read.frontier("no_rag", "attempt"),
        "pct",
        "frontier_attempt_at_attempt95_no_rag",
        n=read.questions("no_rag", "attempt"),
    ),
    Number("FrontierWhoNorag", "its configuration", read.frontier("no_rag", "label"), "text"),
    Number(
        "FrontierCARSingle",
        "highest CAR at the attempt requirement, single",
        read.frontier("single", "car"),
        "pct",
        "frontier_car_at_attempt95_single",
        n=read.questions("single"),
    ),
    Number(
        "FrontierAttSingle",
        "its attempt rate",
        read.frontier("single", "attempt"),
        "pct",
        "frontier_attempt_at_attempt95_single",
        n=read.questions("single", "attempt"),
    ),
    Number("FrontierWhoSingle", "its configuration", read.frontier("single", "label"), "text"),
    Number(
        "AttMinSingle",
        "lowest attempt rate, single",
        read.grid_extreme("attempt", "min"),
        "pct",
        "attempt_range_single_min",
        n=read.questions("single", "attempt"),
    ),
    Number(
        "AttMaxSingle",
        "highest attempt rate, single",
        read.grid_extreme("attempt", "max"),
        "pct",
        "attempt_range_single_max",
        n=read.questions("single", "attempt"),
    ),
    Number(
        "CARMinSingle",
        "lowest CAR, single",
        read.grid_extreme("car", "min"),
        "pct",
        "car_range_single_min",
        n=read.questions("single", "car"),
    ),
    Number(
        "CARMaxSingle",
        "highest CAR, single",
        read.grid_extreme("car", "max"),
        "pct",
        "car_range_single_max",
        n=read.questions("single", "car"),
    ),
    # --- ablations (A.2–A.4)
    Number(
        "KSweepModels",
        "configurations in the k ablation",
        lambda t: read.table(t, "ablation_k").select("model", "thinking").unique().height,
        "int",
        "k_ablation_models",
    ),
    Number(
        "KCARfive",
        "mean CAR at k=5 (models run at every k)",
        read.ablation_mean("ablation_k_full", "k", k=5),
        "pct",
        "k_sweep_car_k5",
        n=read.ablation_questions("ablation_k_full", k=5),
    ),
    Number(
        "KCARten",
        "mean CAR at k=10 (models run at every k)",
        read.ablation_mean("ablation_k_full", "k", k=10),
        "pct",
        "k_sweep_car_k10",
        n=read.ablation_questions("ablation_k_full", k=10),
    ),
    Number(
        "KAccfive",
        "mean accuracy at k=5",
        read.ablation_mean("ablation_k_full", "k", "accuracy", k=5),
        "pct",
        "k_sweep_accuracy_k5",
        n=read.ablation_questions("ablation_k_full", "accuracy", k=5),
    ),
    Number(
        "KAccten",
        "mean accuracy at k=10",
        read.ablation_mean("ablation_k_full", "k", "accuracy", k=10),
        "pct",
        "k_sweep_accuracy_k10",
        n=read.ablation_questions("ablation_k_full", "accuracy", k=10),
    ),
    Number(
        "PipeModels",
        "configurations in the pipeline ablation",
        lambda t: read.table(t, "ablation_pipelines").select("model", "thinking").unique().height,
        "int",
        "pipeline_ablation_models",
    ),
    Number(
        "PipeCARbm",
        "mean CAR, BM25",
        read.ablation_mean("ablation_pipelines", "pipeline", pipeline="bm25"),
        "pct",
        "pipeline_car_bm25",
        n=read.ablation_questions("ablation_pipelines", pipeline="bm25"),
    ),
    Number(
        "PipeCARdense",
        "mean CAR, dense",
        read.ablation_mean("ablation_pipelines", "pipeline", pipeline="dense"),
        "pct",
        "pipeline_car_dense",
        n=read.ablation_questions("ablation_pipelines", pipeline="dense"),
    ),
    Number(
        "PipeCARhybrid",
        "mean CAR, hybrid",
        read.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid"),
        "pct",
        "pipeline_car_hybrid",
        n=read.ablation_questions("ablation_pipelines", pipeline="hybrid"),
    ),
    Number(
        "PipeCARrerank",
        "mean CAR, hybrid + rerank",
        read.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rerank"),
        "pct",
        "pipeline_car_hybrid_rerank",
        n=read.ablation_questions("ablation_pipelines", pipeline="hybrid+rerank"),
    ),
    Number(
        "PipeCARboth",
        "mean CAR, hybrid + rewrite + rerank",
        read.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rewrite+rerank"),
        "pct",
        n=read.ablation_questions("ablation_pipelines", pipeline="hybrid+rewrite+rerank"),
    ),
    Number(
        "PipeSig",
        "significant pipeline comparisons",
        lambda t: int(
            read.table(t, "paired_tests")
            .filter(pl.col("family") == "pipeline_ablation")["significant"]
            .fill_null(False)
            .sum()
        ),
        "int",
    ),
    Number(
        "PipeTests",
        "pipeline comparisons",
        read.count_rows("paired_tests", "pipeline tests", family="pipeline_ablation"),
        "int",
    ),
    Number(
        "ScenCARwith",
        "mean CAR with the scenario (ablation models)",
        read.ablation_mean("ablation_scenario", "scenario", scenario=True),
        "pct",
        n=read.ablation_questions("ablation_scenario", scenario=True),
    ),
    Number(
        "ScenCARwithout",
        "mean CAR without the scenario",
        read.ablation_mean("ablation_scenario", "scenario", scenario=False),
        "pct",
        n=read.ablation_questions("ablation_scenario", scenario=False),
    ),
]
