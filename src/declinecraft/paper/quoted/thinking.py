"""Quoted numbers: thinking (§4.4, A.5, App. I)."""

from __future__ import annotations

from typing import cast

import polars as pl

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number


def _abstentions_lost(pairs: pl.DataFrame) -> int:
    """Matched abstentions that became a denial or an answer with thinking on."""
    return cast(int, pairs["a_to_d"].sum()) + cast(int, pairs["a_to_x"].sum())


def _lost_to_denial(pairs: pl.DataFrame) -> float:
    return cast(int, pairs["a_to_d"].sum()) / _abstentions_lost(pairs)


NUMBERS: list[Number] = [
    # --- thinking (§4.4, A.5, App. I)
    Number(
        "ThinkSigDownNorag",
        "thinking: significant CAR decreases, no RAG",
        lambda t: number_sources.thinking_significant(t, "no_rag", "decrease"),
        "int",
        "thinking_no_rag_significant_decreases",
    ),
    Number(
        "ThinkSigUpNorag",
        "thinking: significant CAR increases, no RAG",
        lambda t: number_sources.thinking_significant(t, "no_rag", "increase"),
        "int",
        "thinking_no_rag_significant_increases",
    ),
    Number(
        "ThinkMoreADNorag",
        "models with more A->D than D->A, no RAG",
        number_sources.transitions("no_rag", lambda p: int((p["a_to_d"] > p["d_to_a"]).sum())),
        "int",
        "thinking_no_rag_more_a_to_d_models",
    ),
    Number(
        "ThinkCARNorag",
        "thinking: mean CAR change, no RAG",
        number_sources.difference("thinking_car", "no_rag"),
        "pts",
        "thinking_no_rag_car_mean_change",
        n=number_sources.difference("thinking_car", "no_rag", "n"),
        unit="models",
    ),
    Number(
        "ThinkCARPNorag",
        "thinking: Wilcoxon p, no RAG",
        number_sources.difference("thinking_car", "no_rag", "wilcoxon_p"),
        "p",
        "thinking_no_rag_car_wilcoxon_p",
        n=number_sources.difference("thinking_car", "no_rag", "n"),
        unit="models",
    ),
    Number(
        "ThinkCARSingle",
        "thinking: mean CAR change, single",
        number_sources.difference("thinking_car", "single"),
        "pts",
        "thinking_single_car_mean_change",
        n=number_sources.difference("thinking_car", "single", "n"),
        unit="models",
    ),
    Number(
        "ThinkCARPSingle",
        "thinking: Wilcoxon p, single",
        number_sources.difference("thinking_car", "single", "wilcoxon_p"),
        "p",
        "thinking_single_car_wilcoxon_p",
        n=number_sources.difference("thinking_car", "single", "n"),
        unit="models",
    ),
    Number(
        "ThinkADNorag",
        "A->D pairs, no RAG",
        number_sources.transitions("no_rag", lambda p: int(p["a_to_d"].sum())),
        "int",
        "thinking_no_rag_a_to_d",
    ),
    Number(
        "ThinkDANorag",
        "D->A pairs, no RAG",
        number_sources.transitions("no_rag", lambda p: int(p["d_to_a"].sum())),
        "int",
        "thinking_no_rag_d_to_a",
    ),
    Number(
        "ThinkMatchedNorag",
        "matched questions, no RAG",
        number_sources.transitions("no_rag", lambda p: int(p["n"].sum())),
        "int",
        "thinking_no_rag_matched_questions",
    ),
    Number(
        "ThinkADSigNorag",
        "models with significant excess A->D, no RAG",
        number_sources.transitions("no_rag", lambda p: int((p["sig_ad"] & (p["a_to_d"] > p["d_to_a"])).sum())),
        "int",
        "thinking_no_rag_a_to_d_significant_models",
    ),
    Number(
        "ThinkNetNorag",
        "mean net shift A->D minus D->A, no RAG",
        number_sources.difference("thinking_net_shift_ad", "no_rag"),
        "pts",
        "thinking_no_rag_net_shift_mean",
        n=number_sources.difference("thinking_net_shift_ad", "no_rag", "n"),
        unit="models",
    ),
    Number(
        "ThinkNetPNorag",
        "Wilcoxon p of the net shift, no RAG",
        number_sources.difference("thinking_net_shift_ad", "no_rag", "wilcoxon_p"),
        "p",
        "thinking_no_rag_net_shift_wilcoxon_p",
        n=number_sources.difference("thinking_net_shift_ad", "no_rag", "n"),
        unit="models",
    ),
    Number(
        "ThinkLostToDenial",
        "lost abstentions that became denials, no RAG",
        number_sources.transitions("no_rag", _lost_to_denial),
        "pct",
        "thinking_no_rag_lost_abstentions_to_denial",
        n=number_sources.transitions("no_rag", _abstentions_lost),
        unit="abstentions lost",
    ),
    Number(
        "ThinkAXSigNorag",
        "models with significant A->X excess, no RAG",
        number_sources.transitions("no_rag", lambda p: int((p["sig_ax"] & (p["a_to_x"] > p["x_to_a"])).sum())),
        "int",
        "thinking_no_rag_a_to_x_significant_models",
    ),
    Number(
        "ThinkADSingle",
        "A->D pairs, single",
        number_sources.transitions("single", lambda p: int(p["a_to_d"].sum())),
        "int",
        "thinking_single_a_to_d",
    ),
    Number(
        "ThinkDASingle",
        "D->A pairs, single",
        number_sources.transitions("single", lambda p: int(p["d_to_a"].sum())),
        "int",
        "thinking_single_d_to_a",
    ),
    Number(
        "ThinkAccNorag",
        "thinking: mean accuracy change, no RAG",
        number_sources.difference("thinking_accuracy", "no_rag"),
        "pts",
        "thinking_accuracy_change_no_rag",
        n=number_sources.difference("thinking_accuracy", "no_rag", "n"),
        unit="models",
    ),
    Number(
        "ThinkAccSingle",
        "thinking: mean accuracy change, single",
        number_sources.difference("thinking_accuracy", "single"),
        "pts",
        "thinking_accuracy_change_single",
        n=number_sources.difference("thinking_accuracy", "single", "n"),
        unit="models",
    ),
    Number(
        "ThinkLenNorag",
        "thinking: mean lenient CAR change, no RAG",
        number_sources.difference("thinking_car_lenient", "no_rag"),
        "pts",
        "lenient_thinking_no_rag_mean_change",
        n=number_sources.difference("thinking_car_lenient", "no_rag", "n"),
        unit="models",
    ),
]
