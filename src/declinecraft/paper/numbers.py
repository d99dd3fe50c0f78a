"""``paper/numbers.tex``: one LaTeX macro per number the text quotes, computed from the analysis.

Each :class:`Number` names its macro, says what it is, how to read it from the analysis tables
and how to print it, and (where the paper reports it) the key in ``params/paper_reported.yaml``.
A number the run cannot supply prints "n/a" and its reason goes into ``numbers.csv``; nothing
here raises on missing data. Macro names are letters only (TeX control words).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

Tables = Mapping[str, pl.DataFrame]


@dataclass(frozen=True)
class Number:
    """One quoted number: macro (without backslash), meaning, getter, format, reported key."""

    macro: str
    what: str
    get: Callable[[Tables], Any]
    fmt: str = "pct"
    """pct (proportion shown as percent), pts (signed points), int, rho, p, kappa, text, num."""
    reported: str | None = None


class Missing(Exception):
    """A number the run's results cannot supply; the message is the reason."""


def _table(t: Tables, name: str) -> pl.DataFrame:
    table = t.get(name)
    if table is None or table.height == 0:
        raise Missing(f"no {name} results in this run")
    return table


def _where(frame: pl.DataFrame, where: dict[str, Any]) -> pl.DataFrame:
    """Keep the rows whose columns equal the given values."""
    for key, value in where.items():
        frame = frame.filter(pl.col(key) == value)
    return frame


def _one(frame: pl.DataFrame, col: str, what: str, **where: Any) -> Any:
    frame = _where(frame, where)
    if frame.height == 0:
        raise Missing(f"no row for {what}")
    value = frame[col][0]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        note = frame["note"][0] if "note" in frame.columns and frame["note"][0] else "undefined for this run"
        raise Missing(f"{what}: {note}")
    return value


def _mean(condition: str, metric: str = "car") -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "condition_means"), "mean", f"mean {metric} ({condition})", condition=condition, metric=metric)


def _sig(comparison: str, direction: str, family: str = "main_grid") -> Callable[[Tables], Any]:
    col = "n_increase" if direction == "up" else "n_decrease"
    return lambda t: _one(_table(t, "significance_counts"), col, f"{family} {comparison}", family=family, comparison=comparison)


def _assoc(name: str, col: str = "rho") -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "associations"), col, name, name=name)


def _diff(quantity: str, condition: str = "", col: str = "mean") -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        frame = _table(t, "model_differences").with_columns(pl.col("condition").fill_null(""))
        return _one(frame, col, f"{quantity} {condition}".strip(), quantity=quantity, condition=condition)

    return get


def _transitions(condition: str, expr: Callable[[pl.DataFrame], Any]) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        part = _table(t, "thinking_transitions").filter(pl.col("condition") == condition)
        if part.height == 0:
            raise Missing(f"no matched thinking pairs under {condition}")
        return expr(part)

    return get


def _count_rows(table: str, what: str, **where: Any) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        frame = _where(_table(t, table), where)
        return frame.height

    return get


def _n_unique(table: str, col: str, **where: Any) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        frame = _where(_table(t, table), where)
        return frame[col].n_unique()

    return get


def _frontier(condition: str, col: str) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        row = _table(t, "frontier").filter((pl.col("condition") == condition) & pl.col("best_at_min_attempt"))
        if row.height == 0:
            raise Missing(f"no {condition} configuration reaches the attempt-rate requirement")
        if col == "label":
            grid = _table(t, "main_grid").filter(pl.col("condition") == condition)
            hit = grid.join(row.select("model", "thinking"), on=["model", "thinking"])
            return hit["config_label"][0] if hit.height else row["model"][0]
        return row[col][0]

    return get


def _ablation_mean(table: str, col: str, metric: str = "car", **where: Any) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        frame = _where(_table(t, table), where)
        values = frame[metric].drop_nulls().drop_nans()
        if values.len() == 0:
            raise Missing(f"no {table} rows with {where}")
        return values.mean()

    return get


def _grid_extreme(metric: str, fn: str) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        values = _table(t, "main_grid").filter(pl.col("condition") == "single")[metric].drop_nulls().drop_nans()
        if values.len() == 0:
            raise Missing("no single-shot results")
        return getattr(values, fn)()

    return get


def _judge(col: str, judge_a: str = "all") -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "judge_agreement"), col, f"judge agreement {judge_a}", judge_a=judge_a)


def _human(part: int, measure: str) -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "human_agreement"), "kappa", f"Table 10 {measure}", part=part, measure=measure)


def _leak_top(col: str) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        frame = _table(t, "leakage_model").drop_nulls("accuracy").sort("accuracy", descending=True)
        if frame.height == 0:
            raise Missing("no scored leakage answers")
        if col == "model":
            facts = t.get("facts")
            hit = facts.filter(pl.col("model") == frame["model"][0]) if facts is not None else pl.DataFrame()
            return hit["display_name"][0] if hit.height else frame["model"][0]
        return frame[col][0]

    return get


def _fam_deny(condition: str) -> Callable[[Tables], Any]:
    return lambda t: int(_table(t, "family_label_shares").filter(pl.col("condition") == condition)["deny_gt_abstain"].sum())


def _corpus(corpus: str, col: str) -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "corpus_stats"), col, f"corpus {corpus} {col}", corpus=corpus)


def _audit(audit: str) -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "audit_retrieval"), "rate", f"retrieval audit {audit}", audit=audit)


def _kept(answerable: bool) -> Callable[[Tables], Any]:
    """Questions of one half in the benchmark (candidates the verify stage kept)."""
    return lambda t: int(
        _table(t, "audit_fates").filter((pl.col("fate") == "kept") & (pl.col("answerable") == answerable))["n"].sum()
    )


def _style(variant: str) -> Callable[[Tables], Any]:
    return lambda t: _one(_table(t, "audit_style"), "auc", f"style AUC {variant}", variant=variant)


def _second_judge(col: str) -> Callable[[Tables], Any]:
    def get(t: Tables) -> Any:
        frame = _table(t, "response_judge_agreement").filter((pl.col("scope") == "all") & (pl.col("comparison") != "rule_label"))
        if frame.height == 0:
            raise Missing("no second response judge in this run")
        return frame[col].mean()

    return get


NUMBERS: list[Number] = [
    # --- corpus and benchmark (§3, App. D, F)
    Number("CprePages", "pages in C_pre", _corpus("pre", "pages"), "int", "c_pre_pages"),
    Number("CpreChunks", "chunks in C_pre", _corpus("pre", "chunks"), "int", "c_pre_chunks"),
    Number("CpostPages", "pages in C_post", _corpus("post", "pages"), "int", "c_post_pages"),
    Number("CpostChunks", "chunks in C_post", _corpus("post", "chunks"), "int", "c_post_chunks"),
    Number("BenchAnswerable", "answerable questions in the benchmark", _kept(True), "int", "n_answerable"),
    Number("BenchUnanswerable", "unanswerable questions in the benchmark", _kept(False), "int", "n_unanswerable"),
    Number("HitAtK", "answerable questions whose target chunk is retrieved in the top k", _audit("hit_at_k"), "pct", "hit_at_5_answerable"),
    Number("ScenarioOverlap", "unanswerable questions retrieving a scenario chunk", _audit("scenario_overlap"), "pct", "scenario_chunk_overlap_unanswerable"),
    Number("StyleAUCStyle", "style-only AUC", _style("style_only"), "kappa", "style_auc_style_only"),
    Number("StyleAUCFull", "full-text AUC", _style("full"), "kappa", "style_auc_full_text"),
    Number("SecondJudgeAgreement", "agreement of second response judges with the response judge", _second_judge("agreement"), "pct"),
    Number("SecondJudgeKappa", "their mean Cohen's kappa", _second_judge("kappa"), "kappa"),
    # --- setup
    Number("NModels", "models evaluated", _n_unique("main_grid", "model"), "int", "n_models"),
    Number("NConfigs", "configurations (model x thinking)", _count_rows("main_grid", "configs", condition="single"), "int", "n_configurations"),
    Number("NFamilies", "model families", _n_unique("main_grid", "family"), "int", "n_families"),
    Number("NSwitchable", "models with switchable thinking", lambda t: _table(t, "main_grid").filter(pl.col("thinking") == "on").filter(pl.col("switchable"))["model"].n_unique(), "int", "n_models_switchable_thinking"),
    Number("NAnswerable", "answerable questions evaluated", lambda t: int(_table(t, "main_grid")["n_answerable"].max()), "int"),
    Number("NUnanswerable", "unanswerable questions evaluated", lambda t: int(_table(t, "main_grid")["n_unanswerable"].max()), "int"),
    Number("BudgetExhaustedShare", "responses that exhausted the budget (percent of all)",
           lambda t: _table(t, "summary")["n_budget_exhausted"].sum() / (_table(t, "summary")["n_answerable"].sum() + _table(t, "summary")["n_unanswerable"].sum()),
           "pct", "budget_exhausted_share"),
    # --- headline means (§4.2, A.7, App. I)
    Number("CARnoragMean", "mean CAR without retrieval", _mean("no_rag"), "pct", "car_mean_no_rag"),
    Number("CARsingleMean", "mean CAR with single-shot RAG", _mean("single"), "pct", "car_mean_single_shot"),
    Number("CARiterMean", "mean CAR with iterative RAG", _mean("iterative"), "pct", "car_mean_iterative"),
    Number("AccNoragMean", "mean Answer Accuracy without retrieval", _mean("no_rag", "accuracy"), "pct", "accuracy_mean_no_rag"),
    Number("AccSingleMean", "mean Answer Accuracy, single-shot RAG", _mean("single", "accuracy"), "pct", "accuracy_mean_single_shot"),
    Number("AccIterMean", "mean Answer Accuracy, iterative RAG", _mean("iterative", "accuracy"), "pct", "accuracy_mean_iterative"),
    Number("AttNoragMean", "mean attempt rate without retrieval", _mean("no_rag", "attempt"), "pct", "attempt_mean_no_rag"),
    Number("AttSingleMean", "mean attempt rate, single-shot RAG", _mean("single", "attempt"), "pct", "attempt_mean_single_shot"),
    Number("AttIterMean", "mean attempt rate, iterative RAG", _mean("iterative", "attempt"), "pct", "attempt_mean_iterative"),
    Number("CARIterMinusSingle", "mean CAR change, iterative minus single", _diff("iterative_minus_single_car"), "pts", "car_change_iterative_vs_single_mean"),
    Number("SigUpSingle", "significant CAR increases, single vs none", _sig("single_vs_no_rag", "up"), "int", "single_vs_none_significant_increases"),
    Number("SigDownSingle", "significant CAR decreases, single vs none", _sig("single_vs_no_rag", "down"), "int", "single_vs_none_significant_decreases"),
    Number("SigDownIter", "significant CAR decreases, iterative vs single", _sig("iterative_vs_single", "down"), "int", "iterative_vs_single_significant_decreases"),
    Number("SigUpIter", "significant CAR increases, iterative vs single", _sig("iterative_vs_single", "up"), "int", "iterative_vs_single_significant_increases"),
    Number("CARlenNoragMean", "mean lenient CAR without retrieval", _mean("no_rag", "car_lenient"), "pct", "car_lenient_mean_no_rag"),
    Number("CARlenSingleMean", "mean lenient CAR, single-shot", _mean("single", "car_lenient"), "pct", "car_lenient_mean_single_shot"),
    Number("CARlenIterMean", "mean lenient CAR, iterative", _mean("iterative", "car_lenient"), "pct", "car_lenient_mean_iterative"),
    Number("LenSigUpSingle", "lenient: significant increases single vs none", _sig("single_vs_no_rag", "up", "main_grid_lenient"), "int", "lenient_single_vs_none_significant_increases"),
    Number("LenSigDownIter", "lenient: significant decreases iterative vs single", _sig("iterative_vs_single", "down", "main_grid_lenient"), "int", "lenient_iterative_vs_single_significant_decreases"),
    Number("DenyNoragMean", "premise-denial share without retrieval", _mean("no_rag", "share_deny"), "pct", "premise_denial_share_no_rag"),
    Number("DenySingleMean", "premise-denial share, single-shot", _mean("single", "share_deny"), "pct", "premise_denial_share_single_shot"),
    Number("DenyIterMean", "premise-denial share, iterative", _mean("iterative", "share_deny"), "pct", "premise_denial_share_iterative"),
    Number("FamDenyNorag", "families denying more than abstaining, no RAG", _fam_deny("no_rag"), "int", "families_deny_more_than_abstain_no_rag"),
    Number("FamDenySingle", "families denying more than abstaining, single", _fam_deny("single"), "int", "families_deny_more_than_abstain_single_shot"),
    # --- associations (§4.3, A.6, App. I)
    Number("NOpenWeight", "open-weight models in the size associations", _assoc("car_total_params", "n"), "int", "n_models_open_weight"),
    Number("RhoCARTotal", "Spearman rho, CAR vs total parameters", _assoc("car_total_params"), "rho", "rho_car_total_params"),
    Number("PCARTotal", "p, CAR vs total parameters", _assoc("car_total_params", "p"), "p", "p_car_total_params"),
    Number("RhoCARActive", "Spearman rho, CAR vs active parameters", _assoc("car_active_params"), "rho", "rho_car_active_params"),
    Number("PCARActive", "p, CAR vs active parameters", _assoc("car_active_params", "p"), "p", "p_car_active_params"),
    Number("NReleaseModels", "models with a release month", _assoc("car_release_month", "n"), "int"),
    Number("RhoCARRelease", "Spearman rho, CAR vs release month", _assoc("car_release_month"), "rho", "rho_car_release_month"),
    Number("PCARRelease", "p, CAR vs release month", _assoc("car_release_month", "p"), "p", "p_car_release_month"),
    Number("RhoCARReleaseBest", "rho, best CAR per family vs release", _assoc("car_release_month_best_per_family"), "rho", "rho_car_release_month_best_per_family"),
    Number("PCARReleaseBest", "p, best CAR per family vs release", _assoc("car_release_month_best_per_family", "p"), "p", "p_car_release_month_best_per_family"),
    Number("RhoAccTotal", "rho, accuracy vs total parameters", _assoc("accuracy_total_params"), "rho", "rho_accuracy_total_params"),
    Number("PAccTotal", "p, accuracy vs total parameters", _assoc("accuracy_total_params", "p"), "p", "p_accuracy_total_params"),
    Number("RhoCARAcc", "rho, CAR vs accuracy (configurations)", _assoc("car_accuracy"), "rho", "rho_car_accuracy_single_shot"),
    Number("PCARAcc", "p, CAR vs accuracy", _assoc("car_accuracy", "p"), "p", "p_car_accuracy_single_shot"),
    Number("RhoCARAccAtt", "rho, CAR vs accuracy when attempted", _assoc("car_accuracy_when_attempted"), "rho", "rho_car_accuracy_when_attempted"),
    Number("PCARAccAtt", "p, CAR vs accuracy when attempted", _assoc("car_accuracy_when_attempted", "p"), "p", "p_car_accuracy_when_attempted"),
    Number("RhoReleaseAcc", "rho, release month vs accuracy (configurations)", _assoc("release_month_accuracy"), "rho", "rho_release_month_accuracy_configs"),
    Number("RhoReleaseCAR", "rho, release month vs CAR (configurations)", _assoc("release_month_car"), "rho", "rho_release_month_car_configs"),
    Number("RhoPartial", "partial rank association CAR-accuracy | release", _assoc("car_accuracy_partial_release"), "rho", "rho_car_accuracy_partial_release"),
    Number("PPartial", "p of the partial association", _assoc("car_accuracy_partial_release", "p"), "p", "p_car_accuracy_partial_release"),
    Number("RhoLenRelease", "rho, lenient CAR vs release month", _assoc("car_lenient_release_month"), "rho", "rho_lenient_car_release_month"),
    Number("PLenRelease", "p, lenient CAR vs release month", _assoc("car_lenient_release_month", "p"), "p", "p_lenient_car_release_month"),
    # --- thinking (§4.4, A.5, App. I)
    Number("ThinkSigDownNorag", "thinking: significant CAR decreases, no RAG", lambda t: _think_sig(t, "no_rag", "decrease"), "int", "thinking_no_rag_significant_decreases"),
    Number("ThinkSigUpNorag", "thinking: significant CAR increases, no RAG", lambda t: _think_sig(t, "no_rag", "increase"), "int", "thinking_no_rag_significant_increases"),
    Number("ThinkMoreADNorag", "models with more A->D than D->A, no RAG", _transitions("no_rag", lambda p: int((p["a_to_d"] > p["d_to_a"]).sum())), "int", "thinking_no_rag_more_a_to_d_models"),
    Number("ThinkCARNorag", "thinking: mean CAR change, no RAG", _diff("thinking_car", "no_rag"), "pts", "thinking_no_rag_car_mean_change"),
    Number("ThinkCARPNorag", "thinking: Wilcoxon p, no RAG", _diff("thinking_car", "no_rag", "wilcoxon_p"), "p", "thinking_no_rag_car_wilcoxon_p"),
    Number("ThinkCARSingle", "thinking: mean CAR change, single", _diff("thinking_car", "single"), "pts", "thinking_single_car_mean_change"),
    Number("ThinkCARPSingle", "thinking: Wilcoxon p, single", _diff("thinking_car", "single", "wilcoxon_p"), "p", "thinking_single_car_wilcoxon_p"),
    Number("ThinkADNorag", "A->D pairs, no RAG", _transitions("no_rag", lambda p: int(p["a_to_d"].sum())), "int", "thinking_no_rag_a_to_d"),
    Number("ThinkDANorag", "D->A pairs, no RAG", _transitions("no_rag", lambda p: int(p["d_to_a"].sum())), "int", "thinking_no_rag_d_to_a"),
    Number("ThinkMatchedNorag", "matched questions, no RAG", _transitions("no_rag", lambda p: int(p["n"].sum())), "int", "thinking_no_rag_matched_questions"),
    Number("ThinkADSigNorag", "models with significant excess A->D, no RAG", _transitions("no_rag", lambda p: int((p["sig_ad"] & (p["a_to_d"] > p["d_to_a"])).sum())), "int", "thinking_no_rag_a_to_d_significant_models"),
    Number("ThinkNetNorag", "mean net shift A->D minus D->A, no RAG", _diff("thinking_net_shift_ad", "no_rag"), "pts", "thinking_no_rag_net_shift_mean"),
    Number("ThinkNetPNorag", "Wilcoxon p of the net shift, no RAG", _diff("thinking_net_shift_ad", "no_rag", "wilcoxon_p"), "p", "thinking_no_rag_net_shift_wilcoxon_p"),
    Number("ThinkLostToDenial", "lost abstentions that became denials, no RAG", _transitions("no_rag", lambda p: p["a_to_d"].sum() / (p["a_to_d"].sum() + p["a_to_x"].sum())), "pct", "thinking_no_rag_lost_abstentions_to_denial"),
    Number("ThinkAXSigNorag", "models with significant A->X excess, no RAG", _transitions("no_rag", lambda p: int((p["sig_ax"] & (p["a_to_x"] > p["x_to_a"])).sum())), "int", "thinking_no_rag_a_to_x_significant_models"),
    Number("ThinkADSingle", "A->D pairs, single", _transitions("single", lambda p: int(p["a_to_d"].sum())), "int", "thinking_single_a_to_d"),
    Number("ThinkDASingle", "D->A pairs, single", _transitions("single", lambda p: int(p["d_to_a"].sum())), "int", "thinking_single_d_to_a"),
    Number("ThinkAccNorag", "thinking: mean accuracy change, no RAG", _diff("thinking_accuracy", "no_rag"), "pts", "thinking_accuracy_change_no_rag"),
    Number("ThinkAccSingle", "thinking: mean accuracy change, single", _diff("thinking_accuracy", "single"), "pts", "thinking_accuracy_change_single"),
    Number("ThinkLenNorag", "thinking: mean lenient CAR change, no RAG", _diff("thinking_car_lenient", "no_rag"), "pts", "lenient_thinking_no_rag_mean_change"),
    # --- attempt vs CAR (A.7)
    Number("DirBoth", "configurations with higher CAR and attempt, single vs none", lambda t: _one(_table(t, "direction_counts"), "both_higher", "directions"), "int", "configs_higher_car_and_attempt_single_vs_none"),
    Number("DirCARUpAttDown", "higher CAR, lower attempt", lambda t: _one(_table(t, "direction_counts"), "car_higher_attempt_lower", "directions"), "int", "configs_higher_car_lower_attempt_single_vs_none"),
    Number("DirCARDownAttUp", "lower CAR, higher attempt", lambda t: _one(_table(t, "direction_counts"), "car_lower_attempt_higher", "directions"), "int", "configs_lower_car_higher_attempt_single_vs_none"),
    Number("FrontierCARNorag", "highest CAR at the attempt requirement, no RAG", _frontier("no_rag", "car"), "pct", "frontier_car_at_attempt95_no_rag"),
    Number("FrontierAttNorag", "its attempt rate", _frontier("no_rag", "attempt"), "pct", "frontier_attempt_at_attempt95_no_rag"),
    Number("FrontierWhoNorag", "its configuration", _frontier("no_rag", "label"), "text"),
    Number("FrontierCARSingle", "highest CAR at the attempt requirement, single", _frontier("single", "car"), "pct", "frontier_car_at_attempt95_single"),
    Number("FrontierAttSingle", "its attempt rate", _frontier("single", "attempt"), "pct", "frontier_attempt_at_attempt95_single"),
    Number("FrontierWhoSingle", "its configuration", _frontier("single", "label"), "text"),
    Number("AttMinSingle", "lowest attempt rate, single", _grid_extreme("attempt", "min"), "pct", "attempt_range_single_min"),
    Number("AttMaxSingle", "highest attempt rate, single", _grid_extreme("attempt", "max"), "pct", "attempt_range_single_max"),
    Number("CARMinSingle", "lowest CAR, single", _grid_extreme("car", "min"), "pct", "car_range_single_min"),
    Number("CARMaxSingle", "highest CAR, single", _grid_extreme("car", "max"), "pct", "car_range_single_max"),
    # --- ablations (A.2–A.4)
    Number("KSweepModels", "configurations in the k ablation", lambda t: _table(t, "ablation_k").select("model", "thinking").unique().height, "int", "k_ablation_models"),
    Number("KCARfive", "mean CAR at k=5 (k ablation)", _ablation_mean("ablation_k", "k", k=5), "pct", "k_sweep_car_k5"),
    Number("KCARten", "mean CAR at k=10 (k ablation)", _ablation_mean("ablation_k", "k", k=10), "pct", "k_sweep_car_k10"),
    Number("KAccfive", "mean accuracy at k=5", _ablation_mean("ablation_k", "k", "accuracy", k=5), "pct", "k_sweep_accuracy_k5"),
    Number("KAccten", "mean accuracy at k=10", _ablation_mean("ablation_k", "k", "accuracy", k=10), "pct", "k_sweep_accuracy_k10"),
    Number("PipeModels", "configurations in the pipeline ablation", lambda t: _table(t, "ablation_pipelines").select("model", "thinking").unique().height, "int", "pipeline_ablation_models"),
    Number("PipeCARbm", "mean CAR, BM25", _ablation_mean("ablation_pipelines", "pipeline", pipeline="bm25"), "pct", "pipeline_car_bm25"),
    Number("PipeCARdense", "mean CAR, dense", _ablation_mean("ablation_pipelines", "pipeline", pipeline="dense"), "pct", "pipeline_car_dense"),
    Number("PipeCARhybrid", "mean CAR, hybrid", _ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid"), "pct", "pipeline_car_hybrid"),
    Number("PipeCARrerank", "mean CAR, hybrid + rerank", _ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rerank"), "pct", "pipeline_car_hybrid_rerank"),
    Number("PipeCARboth", "mean CAR, hybrid + rewrite + rerank", _ablation_mean("ablation_pipelines", "pipeline", pipeline="hybrid+rewrite+rerank"), "pct"),
    Number("PipeSig", "significant pipeline comparisons", lambda t: int(_table(t, "paired_tests").filter(pl.col("family") == "pipeline_ablation")["significant"].fill_null(False).sum()), "int"),
    Number("PipeTests", "pipeline comparisons", _count_rows("paired_tests", "pipeline tests", family="pipeline_ablation"), "int"),
    Number("ScenCARwith", "mean CAR with the scenario (ablation models)", _ablation_mean("ablation_scenario", "scenario", scenario=True), "pct"),
    Number("ScenCARwithout", "mean CAR without the scenario", _ablation_mean("ablation_scenario", "scenario", scenario=False), "pct"),
    # --- judges, leakage, humans
    Number("FleissKappa", "Fleiss' kappa of the accuracy judges", _judge("kappa"), "kappa"),
    Number("JudgeLeniencySpread", "largest difference in judges' mean accuracy (points)", lambda t: (_table(t, "judge_leniency")["leniency"].max() - _table(t, "judge_leniency")["leniency"].min()), "pts"),
    Number("LeakTopModel", "the model most accurate on unanswerable questions (no RAG)", _leak_top("model"), "text"),
    Number("LeakTopAcc", "its accuracy", _leak_top("accuracy"), "pct"),
    Number("HumanHHOne", "Table 10, human-human kappa, Part 1", _human(1, "human_human"), "kappa", "t10_part1_human_human"),
    Number("HumanJHOne", "Table 10, judge-human kappa, Part 1", _human(1, "judge_human"), "kappa", "t10_part1_judge_human"),
    Number("HumanJMOne", "Table 10, judge-majority kappa, Part 1", _human(1, "judge_majority"), "kappa", "t10_part1_judge_majority"),
    Number("HumanHHTwo", "Table 10, human-human weighted kappa, Part 2", _human(2, "human_human"), "kappa", "t10_part2_human_human"),
    Number("HumanJHTwo", "Table 10, judge-human weighted kappa, Part 2", _human(2, "judge_human"), "kappa", "t10_part2_judge_human"),
]  # fmt: skip


def _think_sig(t: Tables, condition: str, direction: str) -> int:
    tests = _table(t, "paired_tests").filter(
        (pl.col("family") == "main_grid") & (pl.col("comparison") == "thinking_on_vs_off") & (pl.col("condition") == condition)
    )
    if tests.height == 0:
        raise Missing(f"no thinking on/off pairs under {condition}")
    return int((tests["significant"].fill_null(False) & (tests["direction"] == direction)).sum())


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
        return f"{int(round(v)):,}".replace(",", "{,}")
    if kind == "rho":
        return f"{v:+.2f}".replace("-", "\\textminus ")
    if kind == "p":
        return "<0.001" if v < 0.001 else (f"{v:.3f}" if v < 0.01 else f"{v:.2f}")
    if kind == "kappa":
        return f"{v:.2f}"
    return f"{v:g}"


def _tex(text: str) -> str:
    """Escape plain text for a macro body (text values such as model names)."""
    return re.sub(r"([&%_#$])", r"\\\1", text)


def compute(tables: Tables, *, no_input: str = "") -> pl.DataFrame:
    """Every number: macro, meaning, raw value, printed text and the reason when it is n/a
    (``no_input``, when given, says why the run has no results and is added to each reason)."""
    rows = []
    for number in NUMBERS:
        value, reason = None, ""
        try:
            value = number.get(tables)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                value, reason = None, "undefined for this run"
        except Missing as exc:
            reason = f"{exc} ({no_input})" if no_input else str(exc)
        except (KeyError, IndexError, pl.exceptions.PolarsError, ZeroDivisionError, TypeError) as exc:
            reason = f"cannot compute: {type(exc).__name__}: {exc}"
        text = fmt(value, number.fmt) if value is not None else "n/a"
        if number.fmt == "text" and value is not None:
            text = _tex(text)
        raw = None if value is None or number.fmt == "text" else float(value)
        rows.append(dict(macro=number.macro, what=number.what, value=raw, text=text, reason=reason if value is None else "",
                         reported=number.reported or "", fmt=number.fmt))  # fmt: skip
    return pl.DataFrame(rows, schema={"macro": pl.String, "what": pl.String, "value": pl.Float64, "text": pl.String,
                                      "reason": pl.String, "reported": pl.String, "fmt": pl.String})  # fmt: skip


def numbers_tex(numbers: pl.DataFrame, source: str = "notebooks/08_paper.ipynb") -> str:
    """The macro file: ``\\newcommand{\\Macro}{text}`` per number, n/a ones with their reason."""
    lines = [f"% Generated by {source} (declinecraft.paper.numbers) -- do not edit.",
             "% Every number quoted in paper/main.tex; n/a lines say why the run lacks the number."]  # fmt: skip
    for row in numbers.iter_rows(named=True):
        comment = f"  % {row['what']}" + (f" -- n/a: {row['reason']}" if row["reason"] else "")
        lines.append(f"\\newcommand{{\\{row['macro']}}}{{{row['text']}}}{comment.replace(chr(10), ' ')}")
    return "\n".join(lines) + "\n"


def reported_vs_reproduced(numbers: pl.DataFrame, reported: Mapping[str, Mapping[str, Any]]) -> str:
    """A longtable-free booktabs tabular: every number with a reported counterpart, side by side."""
    lines = ["% Generated by notebooks/08_paper.ipynb (declinecraft.paper.numbers) -- do not edit",
             "\\begin{tabular}{p{0.52\\linewidth}rr}", "\\toprule", "Quantity & Paper & This run \\\\", "\\midrule"]  # fmt: skip
    for row in numbers.filter(pl.col("reported") != "").iter_rows(named=True):
        fact = reported.get(row["reported"])
        if not fact:
            continue
        value, unit = fact.get("value"), fact.get("unit", "")
        paper = f"{value}" if not isinstance(value, float) else f"{value:g}"
        paper = paper.replace("-", "\\textminus ") if isinstance(value, (int, float)) else _tex(str(paper))
        what = _tex(row["what"]) + (" (\\%)" if unit == "percent" else " (pts)" if unit == "points" else "")
        lines.append(f"{what} & {paper} & \\{row['macro']} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(lines)


def config_macros(cfg: Any, reported: Mapping[str, Mapping[str, Any]]) -> pl.DataFrame:
    """Macros for the run's settings (design, not results) and the paper facts the notes compare."""
    from declinecraft.core import registry

    specs = registry.load_models(cfg.resolve(cfg.models_file))
    name = lambda m: specs[m].display_name if m in specs and specs[m].display_name else m  # noqa: E731
    fact = lambda key: str(reported.get(key, {}).get("value", "n/a"))  # noqa: E731
    values = {
        "RunName": cfg.run, "Cutoff": cfg.corpus.cutoff, "CorpusSource": cfg.corpus.source,
        "ChunkSize": f"{cfg.corpus.chunk_size:,}".replace(",", "{,}"), "ChunkOverlap": str(cfg.corpus.chunk_overlap),
        "Embedder": cfg.index.embedder, "Reranker": cfg.index.reranker, "BMkOne": f"{cfg.index.bm25_k1:g}",
        "BMb": f"{cfg.index.bm25_b:g}", "RRFk": str(cfg.index.rrf_k), "Generator": name(cfg.generate.generator),
        "Verifier": name(cfg.verify.verifier),
        "VerifierNote": " (also the generator: self-verification, which the paper never uses)"
        if cfg.verify.verifier == cfg.generate.generator else "",
        "VerifierK": str(cfg.verify.retrieve_k), "ResponseJudge": name(cfg.judge.response_judge),
        "AccuracyJudges": ", ".join(name(m) for m in cfg.judge.accuracy_judges), "Oracle": name(cfg.judge.oracle),
        "ModelsUnderTest": ", ".join(name(m) for m in cfg.answer.models) or "none",
        "KChunks": str(cfg.answer.k), "MaxRounds": str(cfg.answer.max_rounds),
        "MaxTokens": f"{cfg.answer.max_tokens:,}".replace(",", "{,}"), "Pipeline": cfg.answer.pipeline,
        "TargetAnswerable": str(cfg.verify.target_answerable), "TargetUnanswerable": str(cfg.verify.target_unanswerable),
        "Resamples": f"{cfg.analysis.bootstrap_resamples:,}".replace(",", "{,}"),
        "ConfLevel": f"{100 * cfg.analysis.confidence:g}", "Alpha": f"{cfg.analysis.alpha:g}",
        "MinAttempt": f"{100 * cfg.analysis.min_attempt:g}",
        "PaperBMkOne": fact("bm25_k1"), "PaperNModels": fact("n_models"), "PaperNConfigs": fact("n_configurations"),
        "PaperNAnswerable": fact("n_answerable"), "PaperNUnanswerable": fact("n_unanswerable"),
        "PaperCprePages": fact("c_pre_pages"), "PaperCpostPages": fact("c_post_pages"),
    }  # fmt: skip
    rows = [dict(macro=k, what="run setting" if not k.startswith("Paper") else "reported in the paper",
                 value=None, text=_tex(str(v)), reason="", reported="", fmt="text") for k, v in values.items()]  # fmt: skip
    return pl.DataFrame(rows, schema={"macro": pl.String, "what": pl.String, "value": pl.Float64, "text": pl.String,
                                      "reason": pl.String, "reported": pl.String, "fmt": pl.String})  # fmt: skip
