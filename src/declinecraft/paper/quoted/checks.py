"""Quoted numbers: the claims check, the judges, leakage and the human annotation."""

from __future__ import annotations

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number

NUMBERS: list[Number] = [
    # --- the claims check (analysis.claims)
    Number("ClaimsN", "headline claims checked", number_sources.count_rows("claims", "claims"), "int"),
    Number(
        "ClaimsSupported",
        "claims this run supports",
        number_sources.count_rows("claims", "claims", verdict="supported"),
        "int",
    ),
    Number(
        "ClaimsContradicted",
        "claims this run contradicts",
        number_sources.count_rows("claims", "claims", verdict="contradicted"),
        "int",
    ),
    Number(
        "ClaimsNotTestable",
        "claims this run cannot test",
        number_sources.count_rows("claims", "claims", verdict="not testable"),
        "int",
    ),
    # --- judges, leakage, humans
    Number(
        "FleissKappa",
        "Fleiss' kappa of the accuracy judges",
        number_sources.judge_agreement("kappa"),
        "kappa",
        n=number_sources.judge_agreement("rows"),
        unit="answers",
    ),
    Number(
        "JudgeLeniencySpread",
        "the mean score difference of Table 5 farthest from 0 (points, first judge minus second)",
        number_sources.widest_judge_pair("mean_diff"),
        "pts",
        n=number_sources.widest_judge_pair("rows"),
        unit="answers",
    ),
    Number(
        "JudgeLeniencyPair",
        "the judges of that difference, as Table 5 names them (first vs second)",
        number_sources.widest_judge_pair("judges"),
        "text",
    ),
    Number(
        "LeakTopModel",
        "the model most accurate on unanswerable questions (no RAG)",
        number_sources.leakage_top("model"),
        "text",
    ),
    Number(
        "LeakTopAcc",
        "its accuracy",
        number_sources.leakage_top("accuracy"),
        "pct",
        n=number_sources.leakage_top_questions,
        unit="answers with a score",
    ),
    Number(
        "HumanHHOne",
        "Table 10, human-human kappa, Part 1",
        number_sources.human_kappa(1, "human_human"),
        "kappa",
        "t10_part1_human_human",
    ),
    Number(
        "HumanJHOne",
        "Table 10, judge-human kappa, Part 1",
        number_sources.human_kappa(1, "judge_human"),
        "kappa",
        "t10_part1_judge_human",
    ),
    Number(
        "HumanJMOne",
        "Table 10, judge-majority kappa, Part 1",
        number_sources.human_kappa(1, "judge_majority"),
        "kappa",
        "t10_part1_judge_majority",
    ),
    Number(
        "HumanHHTwo",
        "Table 10, human-human weighted kappa, Part 2",
        number_sources.human_kappa(2, "human_human"),
        "kappa",
        "t10_part2_human_human",
    ),
    Number(
        "HumanJHTwo",
        "Table 10, judge-human weighted kappa, Part 2",
        number_sources.human_kappa(2, "judge_human"),
        "kappa",
        "t10_part2_judge_human",
    ),
]
