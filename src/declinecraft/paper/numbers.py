"""``paper/numbers.tex``: one LaTeX macro per number the text quotes, computed from the analysis.

Each :class:`Number` names its macro, says what it is, how to read it from the analysis tables
(a getter of :mod:`declinecraft.paper.number_sources`) and how to print it, and (where the paper
reports it) the key in ``params/paper_reported.yaml``. A number the run cannot supply prints
"n/a" and its reason goes into ``numbers.csv``; nothing here raises on missing data. Macro names
are letters only (TeX control words). The run's settings get macros too
(:mod:`declinecraft.paper.run_settings`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from declinecraft.core import small_n
from declinecraft.paper import number_sources as read
from declinecraft.paper.latex import escape, thousands
from declinecraft.paper.number_sources import Tables


@dataclass(frozen=True)
class Number:
    """One quoted number: macro (without backslash), meaning, getter, format, reported key."""

    macro: str
    what: str
    get: Callable[[Tables], Any]
    fmt: str = "pct"
    """pct (proportion shown as percent), pts (signed points), int, rho, p, kappa, text, num."""
    reported: str | None = None
    n: Callable[[Tables], Any] | None = None
    """How many questions (or ``unit``) the number rests on; None for counts and settings. Below
    the small-n rule's threshold (:mod:`declinecraft.core.small_n`) the number prints with its n
    and "not interpretable at this n" (:data:`SMALL_N_MACRO`), and the words treat it as n/a."""
    unit: str = "questions"
    """What ``n`` counts, in the plural."""


#: The LaTeX command (``paper/main.tex``) that prints a number below the small-n threshold:
#: ``\dcsmall{value}{n with its unit}``; p values and rho (printed in math mode) keep their text.
SMALL_N_MACRO = "dcsmall"
#: Formats printed in running text, which take the small-n caveat in place.
CAVEAT_FORMATS = frozenset({"pct", "pts", "kappa", "num"})


NUMBERS: list[Number] = [
    # --- corpus and benchmark (§3, App. D, F)
    Number("CprePages", "pages in C_pre", read.corpus("pre", "pages"), "int", "c_pre_pages"),
    Number("CpreChunks", "chunks in C_pre", read.corpus("pre", "chunks"), "int", "c_pre_chunks"),
    Number("CpostPages", "pages in C_post", read.corpus("post", "pages"), "int", "c_post_pages"),
    Number("CpostChunks", "chunks in C_post", read.corpus("post", "chunks"), "int", "c_post_chunks"),
    Number("BenchAnswerable", "answerable questions in the benchmark", read.kept(True), "int", "n_answerable"),
    Number("BenchUnanswerable", "unanswerable questions in the benchmark", read.kept(False), "int", "n_unanswerable"),
    Number("HitAtK", "answerable questions whose target chunk is retrieved in the top k", read.retrieval_audit("hit_at_k"), "pct", "hit_at_5_answerable", n=read.retrieval_audit("hit_at_k", "n")),
    Number("ScenarioOverlap", "unanswerable questions retrieving a scenario chunk", read.retrieval_audit("scenario_overlap"), "pct", "scenario_chunk_overlap_unanswerable", n=read.retrieval_audit("scenario_overlap", "n")),
    Number("StyleAUCStyle", "style-only AUC", read.style_auc("style_only"), "kappa", "style_auc_style_only", n=read.style_questions("style_only"), unit="questions in the smaller half"),
    Number("StyleAUCFull", "full-text AUC", read.style_auc("full"), "kappa", "style_auc_full_text", n=read.style_questions("full"), unit="questions in the smaller half"),
    Number("SecondJudgeAgreement", "agreement of second response judges with the response judge", read.second_judge("agreement"), "pct", n=read.second_judge("n"), unit="responses"),
    Number("SecondJudgeKappa", "their mean Cohen's kappa", read.second_judge("kappa"), "kappa", n=read.second_judge("n"), unit="responses"),
    # --- setup
    Number("NModels", "models evaluated", read.n_unique("main_grid", "model"), "int", "n_models"),
    Number("NConfigs", "configurations (model x thinking)", read.count_rows("main_grid", "configs", condition="single"), "int", "n_configurations"),
    Number("NFamilies", "model families", read.n_unique("main_grid", "family"), "int", "n_families"),
    Number("NSwitchable", "models with switchable thinking", lambda t: read.table(t, "main_grid").filter(pl.col("thinking") == "on").filter(pl.col("switchable"))["model"].n_unique(), "int", "n_models_switchable_thinking"),
    Number("NAnswerable", "answerable questions evaluated", lambda t: int(read.table(t, "main_grid")["n_answerable"].max()), "int"),
    Number("NUnanswerable", "unanswerable questions evaluated", lambda t: int(read.table(t, "main_grid")["n_unanswerable"].max()), "int"),
    Number("BudgetExhaustedShare", "responses that exhausted the budget (percent of all)",
           lambda t: read.table(t, "summary")["n_budget_exhausted"].sum() / (read.table(t, "summary")["n_answerable"].sum() + read.table(t, "summary")["n_unanswerable"].sum()),
           "pct", "budget_exhausted_share"),
    # --- headline means (§4.2, A.7, App. I)
    Number("CARnoragMean", "mean CAR without retrieval", read.mean("no_rag"), "pct", "car_mean_no_rag", n=read.questions("no_rag")),
    Number("CARsingleMean", "mean CAR with single-shot RAG", read.mean("single"), "pct", "car_mean_single_shot", n=read.questions("single")),
    Number("CARiterMean", "mean CAR with iterative RAG", read.mean("iterative"), "pct", "car_mean_iterative", n=read.questions("iterative")),
    Number("AccNoragMean", "mean Answer Accuracy without retrieval", read.mean("no_rag", "accuracy"), "pct", "accuracy_mean_no_rag", n=read.questions("no_rag", "accuracy")),
    Number("AccSingleMean", "mean Answer Accuracy, single-shot RAG", read.mean("single", "accuracy"), "pct", "accuracy_mean_single_shot", n=read.questions("single", "accuracy")),
    Number("AccIterMean", "mean Answer Accuracy, iterative RAG", read.mean("iterative", "accuracy"), "pct", "accuracy_mean_iterative", n=read.questions("iterative", "accuracy")),
    Number("AttNoragMean", "mean attempt rate without retrieval", read.mean("no_rag", "attempt"), "pct", "attempt_mean_no_rag", n=read.questions("no_rag", "attempt")),
    Number("AttSingleMean", "mean attempt rate, single-shot RAG", read.mean("single", "attempt"), "pct", "attempt_mean_single_shot", n=read.questions("single", "attempt")),
    Number("AttIterMean", "mean attempt rate, iterative RAG", read.mean("iterative", "attempt"), "pct", "attempt_mean_iterative", n=read.questions("iterative", "attempt")),
    Number("CARIterMinusSingle", "mean CAR change, iterative minus single", read.difference("iterative_minus_single_car"), "pts", "car_change_iterative_vs_single_mean", n=read.difference("iterative_minus_single_car", col="n"), unit="configurations"),
    Number("PCARIterMinusSingle", "Wilcoxon p of that change over configurations", read.difference("iterative_minus_single_car", col="wilcoxon_p"), "p", n=read.difference("iterative_minus_single_car", col="n"), unit="configurations"),
    Number("CARSingleMinusNorag", "mean CAR change, single minus no RAG", read.difference("single_minus_no_rag_car"), "pts", n=read.difference("single_minus_no_rag_car", col="n"), unit="configurations"),
    Number("PCARSingleMinusNorag", "Wilcoxon p of that change over configurations", read.difference("single_minus_no_rag_car", col="wilcoxon_p"), "p", n=read.difference("single_minus_no_rag_car", col="n"), unit="configurations"),
    Number("AccIterMinusSingle", "mean accuracy change, iterative minus single", read.difference("iterative_minus_single_accuracy"), "pts", n=read.difference("iterative_minus_single_accuracy", col="n"), unit="configurations"),
    Number("PAccIterMinusSingle", "Wilcoxon p of that change over configurations", read.difference("iterative_minus_single_accuracy", col="wilcoxon_p"), "p", n=read.difference("iterative_minus_single_accuracy", col="n"), unit="configurations"),
    Number("SigUpSingle", "significant CAR increases, single vs none", read.significant("single_vs_no_rag", "up"), "int", "single_vs_none_significant_increases"),
    Number("SigDownSingle", "significant CAR decreases, single vs none", read.significant("single_vs_no_rag", "down"), "int", "single_vs_none_significant_decreases"),
    Number("SigDownIter", "significant CAR decreases, iterative vs single", read.significant("iterative_vs_single", "down"), "int", "iterative_vs_single_significant_decreases"),
    Number("SigUpIter", "significant CAR increases, iterative vs single", read.significant("iterative_vs_single", "up"), "int", "iterative_vs_single_significant_increases"),
    Number("CARlenNoragMean", "mean lenient CAR without retrieval", read.mean("no_rag", "car_lenient"), "pct", "car_lenient_mean_no_rag", n=read.questions("no_rag", "car_lenient")),
    Number("CARlenSingleMean", "mean lenient CAR, single-shot", read.mean("single", "car_lenient"), "pct", "car_lenient_mean_single_shot", n=read.questions("single", "car_lenient")),
    Number("CARlenIterMean", "mean lenient CAR, iterative", read.mean("iterative", "car_lenient"), "pct", "car_lenient_mean_iterative", n=read.questions("iterative", "car_lenient")),
    Number("LenSigUpSingle", "lenient: significant increases single vs none", read.significant("single_vs_no_rag", "up", "main_grid_lenient"), "int", "lenient_single_vs_none_significant_increases"),
    Number("LenSigDownIter", "lenient: significant decreases iterative vs single", read.significant("iterative_vs_single", "down", "main_grid_lenient"), "int", "lenient_iterative_vs_single_significant_decreases"),
    Number("DenyNoragMean", "premise-denial share without retrieval", read.mean("no_rag", "share_deny"), "pct", "premise_denial_share_no_rag", n=read.questions("no_rag", "share_deny")),
    Number("DenySingleMean", "premise-denial share, single-shot", read.mean("single", "share_deny"), "pct", "premise_denial_share_single_shot", n=read.questions("single", "share_deny")),
    Number("DenyIterMean", "premise-denial share, iterative", read.mean("iterative", "share_deny"), "pct", "premise_denial_share_iterative", n=read.questions("iterative", "share_deny")),
    Number("FamDenyNorag", "families denying more than abstaining, no RAG", read.families_denying("no_rag"), "int", "families_deny_more_than_abstain_no_rag"),
    Number("FamDenySingle", "families denying more than abstaining, single", read.families_denying("single"), "int", "families_deny_more_than_abstain_single_shot"),
    # --- associations (§4.3, A.6, App. I)
    Number("NOpenWeight", "open-weight models in the size associations", read.association("car_total_params", "n"), "int", "n_models_open_weight"),
    Number("RhoCARTotal", "Spearman rho, CAR vs total parameters", read.association("car_total_params"), "rho", "rho_car_total_params"),
    Number("PCARTotal", "p, CAR vs total parameters", read.association("car_total_params", "p"), "p", "p_car_total_params"),
    Number("RhoCARActive", "Spearman rho, CAR vs active parameters", read.association("car_active_params"), "rho", "rho_car_active_params"),
    Number("PCARActive", "p, CAR vs active parameters", read.association("car_active_params", "p"), "p", "p_car_active_params"),
    Number("NReleaseModels", "models with a release month", read.association("car_release_month", "n"), "int"),
    Number("RhoCARRelease", "Spearman rho, CAR vs release month", read.association("car_release_month"), "rho", "rho_car_release_month"),
    Number("PCARRelease", "p, CAR vs release month", read.association("car_release_month", "p"), "p", "p_car_release_month"),
    Number("NActive", "models in the CAR-active parameters association", read.association("car_active_params", "n"), "int"),
    Number("NAccTotal", "models in the accuracy-total parameters association", read.association("accuracy_total_params", "n"), "int"),
    Number("NReleaseFamilies", "families in the best-per-family release association", read.association("car_release_month_best_per_family", "n"), "int"),
    Number("NCARAcc", "configurations in the CAR-accuracy association", read.association("car_accuracy", "n"), "int"),
    Number("NPartial", "configurations in the partial CAR-accuracy association", read.association("car_accuracy_partial_release", "n"), "int"),
    Number("RhoCARReleaseBest", "rho, best CAR per family vs release", read.association("car_release_month_best_per_family"), "rho", "rho_car_release_month_best_per_family"),
    Number("PCARReleaseBest", "p, best CAR per family vs release", read.association("car_release_month_best_per_family", "p"), "p", "p_car_release_month_best_per_family"),
    Number("RhoAccTotal", "rho, accuracy vs total parameters", read.association("accuracy_total_params"), "rho", "rho_accuracy_total_params"),
    Number("PAccTotal", "p, accuracy vs total parameters", read.association("accuracy_total_params", "p"), "p", "p_accuracy_total_params"),
    Number("RhoCARAcc", "rho, CAR vs accuracy (configurations)", read.association("car_accuracy"), "rho", "rho_car_accuracy_single_shot"),
    Number("PCARAcc", "p, CAR vs accuracy", read.association("car_accuracy", "p"), "p", "p_car_accuracy_single_shot"),
    Number("RhoCARAccAtt", "rho, CAR vs accuracy when attempted", read.association("car_accuracy_when_attempted"), "rho", "rho_car_accuracy_when_attempted"),
    Number("PCARAccAtt", "p, CAR vs accuracy when attempted", read.association("car_accuracy_when_attempted", "p"), "p", "p_car_accuracy_when_attempted"),
    Number("RhoReleaseAcc", "rho, release month vs accuracy (configurations)", read.association("release_month_accuracy"), "rho", "rho_release_month_accuracy_configs"),
    Number("RhoReleaseCAR", "rho, release month vs CAR (configurations)", read.association("release_month_car"), "rho", "rho_release_month_car_configs"),
    Number("RhoPartial", "partial rank association CAR-accuracy | release", read.association("car_accuracy_partial_release"), "rho", "rho_car_accuracy_partial_release"),
    Number("PPartial", "p of the partial association", read.association("car_accuracy_partial_release", "p"), "p", "p_car_accuracy_partial_release"),
    Number("RhoLenRelease", "rho, lenient CAR vs release month", read.association("car_lenient_release_month"), "rho", "rho_lenient_car_release_month"),
    Number("PLenRelease", "p, lenient CAR vs release month", read.association("car_lenient_release_month", "p"), "p", "p_lenient_car_release_month"),
    # --- thinking (§4.4, A.5, App. I)
    Number("ThinkSigDownNorag", "thinking: significant CAR decreases, no RAG", lambda t: read.thinking_significant(t, "no_rag", "decrease"), "int", "thinking_no_rag_significant_decreases"),
    Number("ThinkSigUpNorag", "thinking: significant CAR increases, no RAG", lambda t: read.thinking_significant(t, "no_rag", "increase"), "int", "thinking_no_rag_significant_increases"),
    Number("ThinkMoreADNorag", "models with more A->D than D->A, no RAG", read.transitions("no_rag", lambda p: int((p["a_to_d"] > p["d_to_a"]).sum())), "int", "thinking_no_rag_more_a_to_d_models"),
    Number("ThinkCARNorag", "thinking: mean CAR change, no RAG", read.difference("thinking_car", "no_rag"), "pts", "thinking_no_rag_car_mean_change", n=read.difference("thinking_car", "no_rag", "n"), unit="models"),
    Number("ThinkCARPNorag", "thinking: Wilcoxon p, no RAG", read.difference("thinking_car", "no_rag", "wilcoxon_p"), "p", "thinking_no_rag_car_wilcoxon_p", n=read.difference("thinking_car", "no_rag", "n"), unit="models"),
    Number("ThinkCARSingle", "thinking: mean CAR change, single", read.difference("thinking_car", "single"), "pts", "thinking_single_car_mean_change", n=read.difference("thinking_car", "single", "n"), unit="models"),
    Number("ThinkCARPSingle", "thinking: Wilcoxon p, single", read.difference("thinking_car", "single", "wilcoxon_p"), "p", "thinking_single_car_wilcoxon_p", n=read.difference("thinking_car", "single", "n"), unit="models"),
    Number("ThinkADNorag", "A->D pairs, no RAG", read.transitions("no_rag", lambda p: int(p["a_to_d"].sum())), "int", "thinking_no_rag_a_to_d"),
    Number("ThinkDANorag", "D->A pairs, no RAG", read.transitions("no_rag", lambda p: int(p["d_to_a"].sum())), "int", "thinking_no_rag_d_to_a"),
    Number("ThinkMatchedNorag", "matched questions, no RAG", read.transitions("no_rag", lambda p: int(p["n"].sum())), "int", "thinking_no_rag_matched_questions"),
    Number("ThinkADSigNorag", "models with significant excess A->D, no RAG", read.transitions("no_rag", lambda p: int((p["sig_ad"] & (p["a_to_d"] > p["d_to_a"])).sum())), "int", "thinking_no_rag_a_to_d_significant_models"),
    Number("ThinkNetNorag", "mean net shift A->D minus D->A, no RAG", read.difference("thinking_net_shift_ad", "no_rag"), "pts", "thinking_no_rag_net_shift_mean", n=read.difference("thinking_net_shift_ad", "no_rag", "n"), unit="models"),
    Number("ThinkNetPNorag", "Wilcoxon p of the net shift, no RAG", read.difference("thinking_net_shift_ad", "no_rag", "wilcoxon_p"), "p", "thinking_no_rag_net_shift_wilcoxon_p", n=read.difference("thinking_net_shift_ad", "no_rag", "n"), unit="models"),
    Number("ThinkLostToDenial", "lost abstentions that became denials, no RAG", read.transitions("no_rag", lambda p: p["a_to_d"].sum() / (p["a_to_d"].sum() + p["a_to_x"].sum())), "pct", "thinking_no_rag_lost_abstentions_to_denial"),
    Number("ThinkAXSigNorag", "models with significant A->X excess, no RAG", read.transitions("no_rag", lambda p: int((p["sig_ax"] & (p["a_to_x"] > p["x_to_a"])).sum())), "int", "thinking_no_rag_a_to_x_significant_models"),
    Number("ThinkADSingle", "A->D pairs, single", read.transitions("single", lambda p: int(p["a_to_d"].sum())), "int", "thinking_single_a_to_d"),
    Number("ThinkDASingle", "D->A pairs, single", read.transitions("single", lambda p: int(p["d_to_a"].sum())), "int", "thinking_single_d_to_a"),
    Number("ThinkAccNorag", "thinking: mean accuracy change, no RAG", read.difference("thinking_accuracy", "no_rag"), "pts", "thinking_accuracy_change_no_rag", n=read.difference("thinking_accuracy", "no_rag", "n"), unit="models"),
    Number("ThinkAccSingle", "thinking: mean accuracy change, single", read.difference("thinking_accuracy", "single"), "pts", "thinking_accuracy_change_single", n=read.difference("thinking_accuracy", "single", "n"), unit="models"),
    Number("ThinkLenNorag", "thinking: mean lenient CAR change, no RAG", read.difference("thinking_car_lenient", "no_rag"), "pts", "lenient_thinking_no_rag_mean_change", n=read.difference("thinking_car_lenient", "no_rag", "n"), unit="models"),
    # --- attempt vs CAR (A.7)
    Number("DirBoth", "configurations with higher CAR and attempt, single vs none", lambda t: read.one(read.table(t, "direction_counts"), "both_higher", "directions"), "int", "configs_higher_car_and_attempt_single_vs_none"),
    Number("DirCARUpAttDown", "higher CAR, lower attempt", lambda t: read.one(read.table(t, "direction_counts"), "car_higher_attempt_lower", "directions"), "int", "configs_higher_car_lower_attempt_single_vs_none"),
    Number("DirCARDownAttUp", "lower CAR, higher attempt", lambda t: read.one(read.table(t, "direction_counts"), "car_lower_attempt_higher", "directions"), "int", "configs_lower_car_higher_attempt_single_vs_none"),
    Number("FrontierCARNorag", "highest CAR at the attempt requirement, no RAG", read.frontier("no_rag", "car"), "pct", "frontier_car_at_attempt95_no_rag", n=read.questions("no_rag")),
    Number("FrontierAttNorag", "its attempt rate", read.frontier("no_rag", "attempt"), "pct", "frontier_attempt_at_attempt95_no_rag", n=read.questions("no_rag", "attempt")),
    Number("FrontierWhoNorag", "its configuration", read.frontier("no_rag", "label"), "text"),
    Number("FrontierCARSingle", "highest CAR at the attempt requirement, single", read.frontier("single", "car"), "pct", "frontier_car_at_attempt95_single", n=read.questions("single")),
    Number("FrontierAttSingle", "its attempt rate", read.frontier("single", "attempt"), "pct", "frontier_attempt_at_attempt95_single", n=read.questions("single", "attempt")),
    Number("FrontierWhoSingle", "its configuration", read.frontier("single", "label"), "text"),
    Number("AttMinSingle", "lowest attempt rate, single", read.grid_extreme("attempt", "min"), "pct", "attempt_range_single_min", n=read.questions("single", "attempt")),
    Number("AttMaxSingle", "highest attempt rate, single", read.grid_extreme("attempt", "max"), "pct", "attempt_range_single_max", n=read.questions("single", "attempt")),
    Number("CARMinSingle", "lowest CAR, single", read.grid_extreme("car", "min"), "pct", "car_range_single_min", n=read.questions("single", "car")),
    Number("CARMaxSingle", "highest CAR, single", read.grid_extreme("car", "max"), "pct", "car_range_single_max", n=read.questions("single", "car")),
    # --- ablations (A.2–A.4)
    Number("KSweepModels", "configurations in the k ablation", lambda t: read.table(t, "ablation_k").select("model", "thinking").unique().height, "int", "k_ablation_models"),
    Number("KCARfive", "mean CAR at k=5 (models run at every k)", read.ablation_mean("ablation_k_full", "k", k=5), "pct", "k_sweep_car_k5", n=read.ablation_questions("ablation_k_full", k=5)),
    Number("KCARten", "mean CAR at k=10 (models run at every k)", read.ablation_mean("ablation_k_full", "k", k=10), "pct", "k_sweep_car_k10", n=read.ablation_questions("ablation_k_full", k=10)),
    Number("KAccfive", "mean accuracy at k=5", read.ablation_mean("ablation_k_full", "k", "accuracy", k=5), "pct", "k_sweep_accuracy_k5", n=read.ablation_questions("ablation_k_full", "accuracy", k=5)),
    Number("KAccten", "mean accuracy at k=10", read.ablation_mean("ablation_k_full", "k", "accuracy", k=10), "pct", "k_sweep_accuracy_k10", n=read.ablation_questions("ablation_k_full", "accuracy", k=10)),
    Number("PipeModels", "configurations in the pipeline ablation", lambda t: read.table(t, "ablation_pipelines").select("model", "thinking").unique().height, "int", "pipeline_ablation_models"),
    Number("PipeCARbm", "mean CAR, BM25", read.ablation_mean("ablation_pipelines", "pipeline", pipeline="bm25"), "pct", "pipeline_car_bm25", n=read.ablation_questions("ablation_pipelines", pipeline="bm25")),
    Number("PipeCARdense", "mean CAR, dense", read.ablation_mean("ablation_pipelines", "pipeline", pipeline="dense"), "pct", "pipeline_car_dense", n=read.ablation_questions("ablation_pipelines", pipeline="dense")),
    Number("PipeCARhybrid", "mean CAR, hybrid", read.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid"), "pct", "pipeline_car_hybrid", n=read.ablation_questions("ablation_pipelines", pipeline="hybrid")),
    Number("PipeCARrerank", "mean CAR, hybrid + rerank", read.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rerank"), "pct", "pipeline_car_hybrid_rerank", n=read.ablation_questions("ablation_pipelines", pipeline="hybrid+rerank")),
    Number("PipeCARboth", "mean CAR, hybrid + rewrite + rerank", read.ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rewrite+rerank"), "pct", n=read.ablation_questions("ablation_pipelines", pipeline="hybrid+rewrite+rerank")),
    Number("PipeSig", "significant pipeline comparisons", lambda t: int(read.table(t, "paired_tests").filter(pl.col("family") == "pipeline_ablation")["significant"].fill_null(False).sum()), "int"),
    Number("PipeTests", "pipeline comparisons", read.count_rows("paired_tests", "pipeline tests", family="pipeline_ablation"), "int"),
    Number("ScenCARwith", "mean CAR with the scenario (ablation models)", read.ablation_mean("ablation_scenario", "scenario", scenario=True), "pct", n=read.ablation_questions("ablation_scenario", scenario=True)),
    Number("ScenCARwithout", "mean CAR without the scenario", read.ablation_mean("ablation_scenario", "scenario", scenario=False), "pct", n=read.ablation_questions("ablation_scenario", scenario=False)),
    # --- the claims check (analysis.claims)
    Number("ClaimsN", "headline claims checked", read.count_rows("claims", "claims"), "int"),
    Number("ClaimsSupported", "claims this run supports", read.count_rows("claims", "claims", verdict="supported"), "int"),
    Number("ClaimsContradicted", "claims this run contradicts", read.count_rows("claims", "claims", verdict="contradicted"), "int"),
    Number("ClaimsNotTestable", "claims this run cannot test", read.count_rows("claims", "claims", verdict="not testable"), "int"),
    # --- judges, leakage, humans
    Number("FleissKappa", "Fleiss' kappa of the accuracy judges", read.judge_agreement("kappa"), "kappa", n=read.judge_agreement("rows"), unit="answers"),
    Number("JudgeLeniencySpread", "largest difference in judges' mean accuracy (points)", lambda t: (read.table(t, "judge_leniency")["leniency"].max() - read.table(t, "judge_leniency")["leniency"].min()), "pts"),
    Number("LeakTopModel", "the model most accurate on unanswerable questions (no RAG)", read.leakage_top("model"), "text"),
    Number("LeakTopAcc", "its accuracy", read.leakage_top("accuracy"), "pct", n=read.leakage_top_questions, unit="answers with a score"),
    Number("HumanHHOne", "Table 10, human-human kappa, Part 1", read.human_kappa(1, "human_human"), "kappa", "t10_part1_human_human"),
    Number("HumanJHOne", "Table 10, judge-human kappa, Part 1", read.human_kappa(1, "judge_human"), "kappa", "t10_part1_judge_human"),
    Number("HumanJMOne", "Table 10, judge-majority kappa, Part 1", read.human_kappa(1, "judge_majority"), "kappa", "t10_part1_judge_majority"),
    Number("HumanHHTwo", "Table 10, human-human weighted kappa, Part 2", read.human_kappa(2, "human_human"), "kappa", "t10_part2_human_human"),
    Number("HumanJHTwo", "Table 10, judge-human weighted kappa, Part 2", read.human_kappa(2, "judge_human"), "kappa", "t10_part2_judge_human"),
]  # fmt: skip


def fmt(value: Any, kind: str) -> str:
    """Print a value for the text: percent with one decimal, signed points, rho, p, kappa, ..."""
    if kind == "text":
        return str(value)
    v = float(value)
    if kind == "pct":
        return f"{100 * v:.1f}"
    if kind == "pts":
        return f"{100 * v:+.1f}".replace("-", "\\textminus ")
    if kind == "int":
        return thousands(int(round(v)))
    if kind == "rho":
        return f"{v:+.2f}".replace("-", "\\textminus ")
    if kind == "p":
        return "<0.001" if v < 0.001 else (f"{v:.3f}" if v < 0.01 else f"{v:.2f}")
    if kind == "kappa":
        return f"{v:.2f}"
    return f"{v:g}"


def _size(number: Number, tables: Tables) -> int | None:
    """The n behind ``number`` (None when it has none or the run cannot say)."""
    if number.n is None:
        return None
    try:
        size = number.n(tables)
    except (read.Missing, KeyError, IndexError, pl.exceptions.PolarsError, ZeroDivisionError, TypeError):
        return None
    return None if size is None else int(size)


def compute(tables: Tables, *, no_input: str = "", min_n: int = small_n.threshold(0, 0.05)) -> pl.DataFrame:
    """Every number: macro, meaning, raw value, printed text, the reason when it is n/a
    (``no_input``, when given, says why the run has no results and is added to each reason), and
    the n it rests on. A number with an n below ``min_n`` (the small-n rule's threshold,
    :func:`declinecraft.core.small_n.threshold`) prints as ``\\dcsmall{value}{n}``: with its n and
    "not interpretable at this n", never as a finding."""
    rows = []
    for number in NUMBERS:
        value, reason = None, ""
        try:
            value = number.get(tables)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                value, reason = None, "undefined for this run"
        except read.Missing as exc:
            reason = f"{exc} ({no_input})" if no_input else str(exc)
        except (KeyError, IndexError, pl.exceptions.PolarsError, ZeroDivisionError, TypeError) as exc:
            reason = f"cannot compute: {type(exc).__name__}: {exc}"
        text = fmt(value, number.fmt) if value is not None else "n/a"
        if number.fmt == "text" and value is not None:
            text = escape(text)
        size = _size(number, tables) if value is not None else None
        if number.n is not None and value is not None and not small_n.is_finding(size, min_n):
            if number.fmt in CAVEAT_FORMATS:
                counted = small_n.counted(size, number.unit) if size is not None else "n unknown"
                text = f"\\{SMALL_N_MACRO}{{{text}}}{{{counted}}}"
            reason = small_n.caveat(size, number.unit)
        raw = None if value is None or number.fmt == "text" else float(value)
        rows.append(dict(macro=number.macro, what=number.what, value=raw, text=text,
                         reason=reason if value is None else "", reported=number.reported or "", fmt=number.fmt,
                         n=None if size is None else float(size), small=reason if value is not None else ""))
    return pl.DataFrame(rows, schema=read.SCHEMA)


def numbers_tex(numbers: pl.DataFrame, source: str = "notebooks/08_paper.ipynb") -> str:
    """The macro file: ``\\newcommand{\\Macro}{text}`` per number, n/a ones with their reason."""
    lines = [f"% Generated by {source} (declinecraft.paper.numbers) -- do not edit.",
             "% Every number quoted in paper/main.tex; n/a lines say why the run lacks the number."]  # fmt: skip
    for row in numbers.iter_rows(named=True):
        comment = f"  % {row['what']}" + (f" -- n/a: {row['reason']}" if row["reason"] else "")
        lines.append(f"\\newcommand{{\\{row['macro']}}}{{{row['text']}}}{comment.replace(chr(10), ' ')}")
    return "\n".join(lines) + "\n"


def reported_vs_reproduced(numbers: pl.DataFrame, reported: Mapping[str, Mapping[str, Any]]) -> str:
    """Table R as a booktabs longtable: every number with a reported counterpart, side by side.

    It spans pages, repeating its header (a hundred rows never fit one page); ``main.tex`` sets it
    in one column, gives it its letter and defines ``\\ReportedCaption``.
    """
    header = ["\\toprule", "Quantity & Paper & This run \\\\", "\\midrule"]
    lines = ["% Generated by notebooks/08_paper.ipynb (declinecraft.paper.numbers) -- do not edit",
             "\\begin{longtable}{p{0.5\\linewidth}r>{\\raggedright\\arraybackslash}p{0.32\\linewidth}}",
             "\\caption{\\ReportedCaption}\\label{tab:reported}\\\\", *header, "\\endfirsthead",
             "\\multicolumn{3}{l}{\\emph{Table~\\thetable, continued}} \\\\", *header, "\\endhead",
             "\\midrule \\multicolumn{3}{r}{\\emph{continued on the next page}} \\\\", "\\endfoot",
             "\\bottomrule", "\\endlastfoot"]  # fmt: skip
    for row in numbers.filter(pl.col("reported") != "").iter_rows(named=True):
        fact = reported.get(row["reported"])
        if not fact:
            continue
        value, unit = fact.get("value"), fact.get("unit", "")
        paper = f"{value}" if not isinstance(value, float) else f"{value:g}"
        paper = paper.replace("-", "\\textminus ") if isinstance(value, (int, float)) else escape(paper)
        what = escape(row["what"]) + (" (\\%)" if unit == "percent" else " (pts)" if unit == "points" else "")
        lines.append(f"{what} & {paper} & \\{row['macro']} \\\\")
    lines += ["\\end{longtable}", ""]
    return "\n".join(lines)
