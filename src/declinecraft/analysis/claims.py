"""The claims check: each headline claim of the paper held against this run's results.

Every :class:`Claim` says in one line what the paper claims (abstract, §1, §4, App. A), which
reported numbers of ``params/paper_reported.yaml`` it rests on, the test it is checked with and
how to read the evidence from the analysis tables (:mod:`declinecraft.analysis.claim_evidence`).
:func:`verdict` turns the evidence into ``supported``, ``contradicted`` or ``not testable``; a run
that cannot test a claim (no model with natively switchable thinking, one k only) or whose n is
too small for the test to reach significance gets ``not testable`` with the reason, never
``supported``. So is a claim that the run health rules out (:mod:`declinecraft.analysis.claim_health`:
failed or cut answers, unparsable labels, an iterative RAG that never iterated, accuracy on too
few questions). :func:`check` gives the ``claims`` table (``outputs/<run>/07_analysis/claims.csv``)
that the paper prints after its abstract.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from declinecraft.analysis import claim_health
from declinecraft.analysis.claim_evidence import (
    Context,
    Evidence,
    Tables,
    association,
    both_higher,
    context_from_config,
    every_configuration,
    k_ten,
    mean_change,
    significant_count,
    transitions,
)
from declinecraft.core.small_n import comparative_reason, comparative_words, counted, is_finding, threshold

__all__ = [
    "CLAIMS",
    "COLUMNS",
    "Claim",
    "Context",
    "Evidence",
    "check",
    "context_from_config",
    "counted",
    "paper_value",
    "reported_facts",
    "sentence_reason",
    "verdict",
]

SUPPORTED, CONTRADICTED, NOT_TESTABLE = "supported", "contradicted", "not testable"
#: Columns of the claims table, in order.
COLUMNS = ("claim_id", "claim", "paper_value", "run_value", "test", "verdict", "reason")


def verdict(evidence: Evidence, ctx: Context | None = None) -> tuple[str, str]:
    """The verdict and its reason: ``not testable`` when the run lacks what the claim needs or n is
    below the small-n rule's threshold (:func:`declinecraft.core.small_n.is_finding`; the test's
    own minimum unless ``analysis.min_n`` asks for more), so a tiny run is never ``supported``;
    else ``supported`` or ``contradicted`` by whether the claim holds."""
    if evidence.untestable:
        return NOT_TESTABLE, evidence.untestable
    need = (ctx or Context()).needs(evidence)
    if not is_finding(evidence.n, need):
        return NOT_TESTABLE, f"n too small: {counted(evidence.n, evidence.unit)}; the test needs {need}"
    if evidence.holds is None:
        return NOT_TESTABLE, "the test is undefined for this run"
    return (SUPPORTED, "") if evidence.holds else (CONTRADICTED, "")


def sentence_reason(sentence: str, *, n: int | float | None, p: float | None, min_n: int, alpha: float) -> str:
    """Why the claims check refuses ``sentence``, a generated sentence stating a difference from
    ``n`` items with test p value ``p`` (None: untested), or '' when it may be printed: a
    comparative word ("higher", "most", ...; :data:`~declinecraft.core.small_n.COMPARATIVES`) needs
    n at or above the small-n rule and p < alpha (:func:`~declinecraft.core.small_n.comparative_reason`).
    The same rule holds for the views' sentences."""
    words = comparative_words(sentence)
    why = comparative_reason(n, min_n, p, alpha) if words else ""
    return f"refused: {words[0]!r} states a difference, but {why}" if why else ""


def reported_facts(root: Path) -> dict[str, Any]:
    """The paper's reported numbers (``params/paper_reported.yaml`` under ``root``), keyed by name."""
    path = root / "params" / "paper_reported.yaml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("reported", {}) if path.is_file() else {}


# --- the claims -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One headline claim: id, the claim in one line, its paper value, its test and evidence."""

    claim_id: str
    claim: str
    paper: str
    """Template of the paper's value, with ``{key}`` fields from ``paper_reported.yaml``."""
    test: str
    evidence: Callable[[Tables, Context], Evidence]


MCNEMAR = "exact McNemar per configuration, BH q<alpha; holds if at least half are significant this way, none the other"
WILCOXON = "sign of the mean paired difference over configurations (Wilcoxon p shown)"
SPEARMAN = "Spearman rank correlation, t-approximation p"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "rag_raises_car",
        "Single-shot RAG raises mean CAR over no retrieval (abstract, §4.2)",
        "{car_mean_no_rag}% to {car_mean_single_shot}%",
        WILCOXON,
        mean_change("single_minus_no_rag_car", +1, means=("no_rag", "single")),
    ),
    Claim(
        "rag_raises_car_sig",
        "Single-shot RAG raises CAR significantly for almost every configuration, lowers it for none (§1, §4.2)",
        "{single_vs_none_significant_increases} of {n_configurations} up, {single_vs_none_significant_decreases} down",
        MCNEMAR,
        significant_count("single_vs_no_rag", "increase"),
    ),
    Claim(
        "iter_lowers_car",
        "Iterative RAG lowers mean CAR relative to single-shot RAG (abstract, §4.2)",
        "{car_mean_single_shot}% to {car_mean_iterative}%",
        WILCOXON,
        mean_change("iterative_minus_single_car", -1, means=("single", "iterative")),
    ),
    Claim(
        "iter_lowers_car_sig",
        "Iterative RAG lowers CAR significantly for most configurations, raises it for none (§4.2, §5)",
        (
            "{iterative_vs_single_significant_decreases} of {n_configurations} down, "
            "{iterative_vs_single_significant_increases} up"
        ),
        MCNEMAR,
        significant_count("iterative_vs_single", "decrease"),
    ),
    Claim(
        "k10_lowers_car",
        "Ten instead of five retrieved chunks lowers mean CAR (§1, App. A.2)",
        "{k_ablation_car_k5}% to {k_ablation_car_k10}% ({k_ablation_models} models)",
        "sign of the mean paired CAR difference, k=10 minus k=5, over configurations run at both",
        k_ten,
    ),
    Claim(
        "rewrite_rerank_lowers_car",
        (
            "Query rewriting with reranking lowers CAR against hybrid retrieval for every tested model (§1, §4.2, "
            "App. A.3)"
        ),
        (
            "{pipeline_rewrite_rerank_lower_car_models} of {pipeline_ablation_models} models "
            "({pipeline_car_hybrid}% to {pipeline_car_hybrid_rewrite_rerank}%)"
        ),
        "sign of each configuration's paired CAR difference; holds if all are negative",
        every_configuration(
            "pipeline_ablation", "hybrid+rewrite+rerank_vs_hybrid", -1, "one pipeline only (answer.pipelines is empty)"
        ),
    ),
    Claim(
        "no_scenario_raises_car",
        "Removing the scenario raises CAR for every tested model (§4.2, App. A.4)",
        (
            "{scenario_removal_raises_car_models} of {scenario_ablation_models} models "
            "({scenario_ablation_car_with}% to {scenario_ablation_car_without}%)"
        ),
        "sign of each configuration's paired CAR difference; holds if all are positive",
        every_configuration(
            "scenario_ablation", "False_vs_True", +1, "no run without the scenario (answer.no_scenario: false)"
        ),
    ),
    Claim(
        "car_total_params",
        "CAR has no significant association with total parameters (§1, §4.3)",
        "rho={rho_car_total_params:+.2f}, p={p_car_total_params} ({n_models_open_weight} models)",
        SPEARMAN + "; holds if p>=alpha",
        association("car_total_params", "none"),
    ),
    Claim(
        "car_active_params",
        "CAR has no significant association with active parameters (§4.3)",
        "rho={rho_car_active_params:+.2f}, p={p_car_active_params}",
        SPEARMAN + "; holds if p>=alpha",
        association("car_active_params", "none"),
    ),
    Claim(
        "car_release",
        "CAR has no significant association with release month (§1, §4.3)",
        "rho={rho_car_release_month:+.2f}, p={p_car_release_month} ({n_models} models)",
        SPEARMAN + "; holds if p>=alpha",
        association("car_release_month", "none"),
    ),
    Claim(
        "car_release_family",
        "Nor has each family's best CAR with release month (§4.3)",
        (
            "rho={rho_car_release_month_best_per_family:+.2f}, p={p_car_release_month_best_per_family} "
            "({n_families} families)"
        ),
        SPEARMAN + "; holds if p>=alpha",
        association("car_release_month_best_per_family", "none"),
    ),
    Claim(
        "accuracy_total_params",
        "Answer Accuracy rises with total parameters (abstract, §4.3)",
        "rho={rho_accuracy_total_params:+.2f}, p={p_accuracy_total_params}",
        SPEARMAN + "; holds if rho>0 and p<alpha",
        association("accuracy_total_params", "positive"),
    ),
    Claim(
        "car_accuracy",
        "CAR and Answer Accuracy have no significant unadjusted association, single-shot RAG (§4.4)",
        "rho={rho_car_accuracy_single_shot:+.2f}, p={p_car_accuracy_single_shot}",
        SPEARMAN + "; holds if p>=alpha",
        association("car_accuracy", "none"),
    ),
    Claim(
        "both_higher",
        "With single-shot RAG most configurations have both higher CAR and higher attempt rate (§4.4, App. A.7)",
        "{configs_higher_car_and_attempt_single_vs_none} of {n_configurations}",
        "count of configurations; holds if a majority",
        both_higher,
    ),
    Claim(
        "thinking_lowers_car_sig",
        (
            "Without retrieval, thinking significantly lowers CAR for most switchable models, raises it for none "
            "(§1, §4.4)"
        ),
        (
            "{thinking_no_rag_significant_decreases} of {n_models_switchable_thinking} down, "
            "{thinking_no_rag_significant_increases} up"
        ),
        (
            "exact McNemar per model, thinking on vs off, BH q<alpha; holds if at least half fall significantly "
            "and none rise"
        ),
        significant_count("thinking_on_vs_off", "decrease", condition="no_rag", thinking=True),
    ),
    Claim(
        "thinking_lowers_car",
        "Without retrieval, thinking lowers mean CAR significantly (abstract, App. A.5)",
        "{thinking_no_rag_car_mean_change:+} points, Wilcoxon p={thinking_no_rag_car_wilcoxon_p}",
        "mean paired difference over models, Wilcoxon signed-rank; holds if negative and p<alpha",
        mean_change("thinking_car", -1, condition="no_rag", significant=True, thinking=True, unit="models"),
    ),
    Claim(
        "thinking_to_denial",
        (
            "Without retrieval, thinking turns abstentions into denials significantly more often than the reverse "
            "for most switchable models (§4.4, App. A.5)"
        ),
        "{thinking_no_rag_a_to_d_significant_models} of {n_models_switchable_thinking} models",
        "exact McNemar of A->D against D->A per model, BH q<alpha; holds if at least half and none the reverse",
        transitions("excess"),
    ),
    Claim(
        "lost_to_denial",
        "Abstentions lost to thinking mostly become premise denials (§1, App. A.5)",
        "{thinking_no_rag_lost_abstentions_to_denial}%",
        "share A->D of A->D plus A->X, no RAG; holds above 50%",
        transitions("lost"),
    ),
    Claim(
        "thinking_single_no_gain",
        "With single-shot RAG, thinking has no significant mean effect on CAR (§1, App. A.5)",
        "{thinking_single_car_mean_change:+} points, Wilcoxon p={thinking_single_car_wilcoxon_p}",
        "mean paired difference over models, Wilcoxon signed-rank; holds if p>=alpha",
        mean_change("thinking_car", 0, condition="single", thinking=True, unit="models"),
    ),
)


def paper_value(template: str, reported: Mapping[str, Any]) -> str:
    """The paper's value from ``template`` and the reported facts; "not reported" when one is missing."""
    values = {k: (v.get("value") if isinstance(v, Mapping) else v) for k, v in reported.items()}
    try:
        return template.format_map({k: v for k, v in values.items() if v is not None})
    except KeyError as exc:
        return f"not reported ({exc.args[0]} missing from params/paper_reported.yaml)"
    except (ValueError, TypeError) as exc:
        raise ValueError(f"params/paper_reported.yaml: a value of {template!r} has the wrong type: {exc}") from exc


def check(tables: Tables, ctx: Context, reported: Mapping[str, Any]) -> pl.DataFrame:
    """Every claim of :data:`CLAIMS` with the paper's value, this run's value, the test and the
    verdict (the columns of :data:`COLUMNS`)."""
    rows = []
    for claim in CLAIMS:
        if ctx.no_input:
            evidence = Evidence("n/a", untestable=ctx.no_input)
        else:
            evidence = claim.evidence(tables, ctx)
        ruled_out = claim_health.reason(claim.claim_id, tables.get("run_health"), threshold(ctx.min_n, ctx.alpha))
        if ruled_out and not evidence.untestable:
            evidence = replace(evidence, untestable=ruled_out)
        verdict_, reason = verdict(evidence, ctx)
        rows.append(
            (
                claim.claim_id,
                claim.claim,
                paper_value(claim.paper, reported),
                evidence.run_value,
                claim.test,
                verdict_,
                reason,
            )
        )
    return pl.DataFrame(rows, schema=list(COLUMNS), orient="row")
