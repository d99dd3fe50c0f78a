"""Quoted numbers: the corpus, the benchmark and the setup (§3, App. D and F)."""

from __future__ import annotations

from typing import cast

import polars as pl

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number


def _budget_exhausted_share(t: number_sources.Tables) -> float:
    summary = number_sources.table(t, "summary")
    asked = cast(int, summary["n_answerable"].sum()) + cast(int, summary["n_unanswerable"].sum())
    return cast(int, summary["n_budget_exhausted"].sum()) / asked


NUMBERS: list[Number] = [
    # --- corpus and benchmark (§3, App. D, F)
    Number("CprePages", "pages in C_pre", number_sources.corpus("pre", "pages"), "int", "c_pre_pages"),
    Number("CpreChunks", "chunks in C_pre", number_sources.corpus("pre", "chunks"), "int", "c_pre_chunks"),
    Number("CpostPages", "pages in C_post", number_sources.corpus("post", "pages"), "int", "c_post_pages"),
    Number("CpostChunks", "chunks in C_post", number_sources.corpus("post", "chunks"), "int", "c_post_chunks"),
    Number(
        "BenchAnswerable", "answerable questions in the benchmark", number_sources.kept(True), "int", "n_answerable"
    ),
    Number(
        "BenchUnanswerable",
        "unanswerable questions in the benchmark",
        number_sources.kept(False),
        "int",
        "n_unanswerable",
    ),
    Number("DraftsAnswerable", "answerable candidates drafted", number_sources.drafts(True), "int"),
    Number("DraftsUnanswerable", "unanswerable candidates drafted", number_sources.drafts(False), "int"),
    Number(
        "HitAtK",
        "answerable questions whose target chunk is retrieved in the top k",
        number_sources.retrieval_audit("hit_at_k"),
        "pct",
        "hit_at_5_answerable",
        n=number_sources.retrieval_audit("hit_at_k", "n"),
    ),
    Number(
        "ScenarioOverlap",
        "unanswerable questions retrieving a scenario chunk",
        number_sources.retrieval_audit("scenario_overlap"),
        "pct",
        "scenario_chunk_overlap_unanswerable",
        n=number_sources.retrieval_audit("scenario_overlap", "n"),
    ),
    Number(
        "StyleAUCStyle",
        "style-only AUC",
        number_sources.style_auc("style_only"),
        "kappa",
        "style_auc_style_only",
        n=number_sources.style_questions("style_only"),
        unit="questions in the smaller half",
    ),
    Number(
        "StyleAUCFull",
        "full-text AUC",
        number_sources.style_auc("full"),
        "kappa",
        "style_auc_full_text",
        n=number_sources.style_questions("full"),
        unit="questions in the smaller half",
    ),
    Number(
        "SecondJudgeAgreement",
        "agreement of second response judges with the response judge",
        number_sources.second_judge("agreement"),
        "pct",
        n=number_sources.second_judge("n"),
        unit="responses",
    ),
    Number(
        "SecondJudgeKappa",
        "their mean Cohen's kappa",
        number_sources.second_judge("kappa"),
        "kappa",
        n=number_sources.second_judge("n"),
        unit="responses",
    ),
    # --- setup
    Number("NModels", "models evaluated", number_sources.n_unique("main_grid", "model"), "int", "n_models"),
    Number(
        "NConfigs",
        "configurations (model x thinking)",
        number_sources.count_rows("main_grid", "configs", condition="single"),
        "int",
        "n_configurations",
    ),
    Number("NFamilies", "model families", number_sources.n_unique("main_grid", "family"), "int", "n_families"),
    Number(
        "NSwitchable",
        "models with switchable thinking",
        lambda t: (
            number_sources.table(t, "main_grid")
            .filter(pl.col("thinking") == "on")
            .filter(pl.col("switchable"))["model"]
            .n_unique()
        ),
        "int",
        "n_models_switchable_thinking",
    ),
    Number(
        "NAnswerable",
        "answerable questions evaluated",
        lambda t: int(cast(int, number_sources.table(t, "main_grid")["n_answerable"].max())),
        "int",
    ),
    Number(
        "NUnanswerable",
        "unanswerable questions evaluated",
        lambda t: int(cast(int, number_sources.table(t, "main_grid")["n_unanswerable"].max())),
        "int",
    ),
    Number(
        "BudgetExhaustedShare",
        "responses that exhausted the budget (percent of all)",
        _budget_exhausted_share,
        "pct",
        "budget_exhausted_share",
    ),
]
