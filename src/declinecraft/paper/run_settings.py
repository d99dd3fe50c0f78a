"""Macros for a run's settings and the paper facts its notes compare them with.

The paper's reproduction notes quote the run's design (cut-off, chunking, retrieval constants,
the models in each role, the statistics' settings) next to what the paper reports, so that one
``main.tex`` describes every run truthfully. These are inputs, not results: they are always
defined, and each becomes a ``text`` row of ``numbers.csv`` and a macro of ``numbers.tex``.

A run with ``answer.thinking: [..., prompted]`` has no native thinking switch to report: its
``ThinkingCaption`` ends every figure and table caption and its ``ThinkingNote`` the reproduction
notes with "prompted reasoning, not a native thinking switch" (:func:`thinking_macros`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from declinecraft.core import registry
from declinecraft.core.config import RunConfig
from declinecraft.core.number_format import thousands
from declinecraft.evaluation.answer import is_prompted
from declinecraft.paper.deviations import deviation_items, miniature_box
from declinecraft.paper.latex import escape
from declinecraft.paper.number_sources import SCHEMA


class _Tex(str):
    """A setting already written as LaTeX, so it is not escaped again."""


def config_macros(cfg: RunConfig, reported: Mapping[str, Mapping[str, Any]]) -> pl.DataFrame:
    """Macros for the run's settings (design, not results) and the paper facts the notes compare."""
    specs = registry.load_models(cfg.resolve(cfg.models_file))
    name = lambda m: specs[m].display_name if m in specs and specs[m].display_name else m  # noqa: E731
    fact = lambda key: str(reported.get(key, {}).get("value", "n/a"))  # noqa: E731
    count = lambda n: _Tex(thousands(n))  # noqa: E731
    verifier, self_verified = name(cfg.verify.verifier), cfg.verify.verifier == cfg.generate.generator
    values = {
        **({"SimulatedStamp": "SIMULATED"} if cfg.simulated else {}),  # main.tex stamps every page
        "RunName": cfg.run,
        "Cutoff": cfg.corpus.cutoff,
        "CorpusSource": cfg.corpus.source,
        "ChunkSize": count(cfg.corpus.chunk_size),
        "ChunkOverlap": str(cfg.corpus.chunk_overlap),
        "Embedder": cfg.index.embedder,
        "Reranker": cfg.index.reranker,
        "BMkOne": f"{cfg.index.bm25_k1:g}",
        "BMb": f"{cfg.index.bm25_b:g}",
        "RRFk": str(cfg.index.rrf_k),
        "Generator": name(cfg.generate.generator),
        "Verifier": verifier,
        "VerifierNote": " (also the generator: self-verification, which the paper never uses)" if self_verified else "",
        "VerifierWho": f"A verifier ({verifier}, the generator itself)"
        if self_verified
        else f"A separate verifier ({verifier})",
        "VerifierK": str(cfg.verify.retrieve_k),
        "ResponseJudge": name(cfg.judge.response_judge),
        "LabelsWho": (
            "Every response is labelled abstain, deny or answer by its explicit phrases (a rule classifier in the "
            f"style of ESB's, with premise denial added; judge.labels_by_rule); the response judge "
            f"({name(cfg.judge.response_judge)}) labels each too, and run health gives its agreement with the rules"
        )
        if cfg.judge.labels_by_rule
        else f"A response judge ({name(cfg.judge.response_judge)}) labels every response as abstain, deny or answer",
        "AccuracyJudges": ", ".join(name(m) for m in cfg.judge.accuracy_judges),
        "Oracle": name(cfg.judge.oracle),
        "ModelsUnderTest": ", ".join(name(m) for m in cfg.answer.models) or "none",
        "JudgeReaskNote": " An unparsable label or score is re-asked once with the answer constrained to the valid"
        " ones (a grammar on llama.cpp, structured outputs on vLLM); the paper re-asks without a constraint."
        if cfg.judge.constrain_reask
        else "",
        "KChunks": str(cfg.answer.k),
        "MaxRounds": str(cfg.answer.max_rounds),
        "MaxTokens": count(cfg.answer.max_tokens),
        "Pipeline": cfg.answer.pipeline,
        "TargetAnswerable": str(cfg.verify.target_answerable),
        "TargetUnanswerable": str(cfg.verify.target_unanswerable),
        "Resamples": count(cfg.analysis.bootstrap_resamples),
        "ConfLevel": f"{100 * cfg.analysis.confidence:g}",
        "Alpha": f"{cfg.analysis.alpha:g}",
        "MinAttempt": f"{100 * cfg.analysis.min_attempt:g}",
        "PaperBMkOne": fact("bm25_k1"),
        "PaperNModels": fact("n_models"),
        "PaperNConfigs": fact("n_configurations"),
        "PaperNAnswerable": fact("n_answerable"),
        "PaperNUnanswerable": fact("n_unanswerable"),
        "PaperCprePages": fact("c_pre_pages"),
        "PaperCpostPages": fact("c_post_pages"),
        "PaperMaxTokens": count(int(fact("output_budget_tokens"))) if fact("output_budget_tokens").isdigit() else "n/a",
        "PaperBudgetExhausted": fact("budget_exhausted_share"),
        "MiniatureBox": _Tex(miniature_box(cfg, reported)),
        "DeviationItems": _Tex(deviation_items(cfg, specs)),
        **thinking_macros(cfg, specs),
    }
    rows = [
        dict(
            macro=k,
            what="run setting" if not k.startswith("Paper") else "reported in the paper",
            value=None,
            text=v if isinstance(v, _Tex) else escape(v),
            reason="",
            reported="",
            fmt="text",
        )
        for k, v in values.items()
    ]
    return pl.DataFrame(rows, schema=SCHEMA)


#: The words every caption and the notes of a prompted-thinking run carry.
PROMPTED_WORDS = "prompted reasoning, not a native thinking switch"


def thinking_macros(cfg: RunConfig, specs: Mapping[str, registry.ModelSpec]) -> dict[str, str]:
    """``ThinkingCaption`` (appended to every caption; '' unless the run prompts reasoning) and
    ``ThinkingNote`` (the notes' sentence on how thinking was switched), so a prompted run's
    thinking results are never read as a native switch."""
    thinking = cfg.answer.thinking
    if not is_prompted(thinking):
        return {
            "ThinkingCaption": "",
            "ThinkingNote": f"Thinking settings: {', '.join(thinking)}; a model "
            "without a native thinking switch runs its only mode.",
        }
    prompted = [specs[m].display_name or m for m in cfg.answer.models if m in specs and specs[m].thinking == "none"]
    return {
        "ThinkingCaption": f" Thinking on: {PROMPTED_WORDS}.",
        "ThinkingNote": f"Thinking on is {PROMPTED_WORDS}: {', '.join(prompted) or 'no model'} have no thinking "
        "switch, so they were asked to reason inside think tags before answering (our instruction, "
        "params/prompts/think_prompted.txt) and the trace was split off as a native one is. The paper's "
        "thinking claims are not testable on it.",
    }
