"""Quoted numbers: the claims check, the judges, leakage and the human annotation."""

from __future__ import annotations

from typing import cast

import polars as pl

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number


def _spread(values: pl.Series) -> float:
    return cast(float, values.max()) - cast(float, values.min())


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
        "largest difference in judges' mean accuracy (points)",
        lambda t: _spread(number_sources.table(t, "judge_leniency")["leniency"]),
        "pts",
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
