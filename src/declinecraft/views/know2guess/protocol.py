"""What the models under test are asked (K2G §5.2, Appendix C) and what their replies become.

A *run* is one model, thinking setting, condition and prompt. The prompts are K2G's standard
answer-or-abstain prompt and its three controls (``params/prompts/k2g_*.txt``); the conditions
are K2G's own (no retrieval) and ours (single-shot RAG: the chunks the answer stage retrieved,
in a context block before the question, ``k2g_*_rag.txt``). Every model under test gets the
standard prompt; the controls go to ``control_models`` (all models when empty), as K2G gave
them to three of its nine.

Each reply is parsed by both parsers, so one call gives two rows of the decisions table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.params import AnswerParams, Know2GuessParams
from declinecraft.evaluation.answer import query_of, thinking_modes
from declinecraft.evaluation.context import Lookup, context_of
from declinecraft.llm.calls import Call, Reply
from declinecraft.views.know2guess.decisions import MODES, parse

#: Prompt names of the params and the template of each (no retrieval; ``_rag`` adds our context block).
PROMPTS: dict[str, str] = {
    "standard": "k2g_standard",
    "answer_only": "k2g_answer_only",
    "compact": "k2g_compact",
    "delimiter": "k2g_delimiter",
}
STANDARD = "standard"
CONDITIONS: tuple[str, ...] = ("no_rag", "single")
#: The columns that name one run, then the parser: the key of every per-configuration table.
RUN_KEY: tuple[str, ...] = ("model", "thinking", "condition", "prompt")
KEY: tuple[str, ...] = (*RUN_KEY, "parser")


@dataclass(frozen=True)
class Run:
    """One model, thinking setting, condition and prompt: one call per question."""

    model: str
    thinking: str
    condition: str
    prompt: str


def template(prompt: str, condition: str) -> str:
    """The template name of a prompt under a condition (``k2g_standard`` or ``k2g_standard_rag``)."""
    return PROMPTS[prompt] + ("_rag" if condition == "single" else "")


def decision_call(run: Run, question: str, context: str | None) -> Call:
    """The call that asks one question under one run.

    Raises:
        ValueError: single-shot RAG without a context.
    """
    if run.condition == "no_rag":
        return Call(template(run.prompt, run.condition), {"question": question})
    if context is None:
        raise ValueError(f"{run} needs a retrieved context")
    return Call(template(run.prompt, run.condition), {"context": context, "question": question})


def check(params: Know2GuessParams) -> None:
    """Reject prompt and condition names the view does not know, and a grid without the standard prompt.

    Raises:
        ValueError: names the bad value and what is allowed.
    """
    if bad := [p for p in params.prompts if p not in PROMPTS]:
        raise ValueError(f"know2guess.prompts: unknown prompt {bad[0]!r} (known: {', '.join(PROMPTS)})")
    if STANDARD not in params.prompts:
        raise ValueError("know2guess.prompts must include 'standard': every model gets K2G's standard prompt")
    if not params.conditions or any(c not in CONDITIONS for c in params.conditions):
        raise ValueError(f"know2guess.conditions must be a non-empty subset of {CONDITIONS}, got {params.conditions}")
    if params.lambdas and min(params.lambdas) <= 0:
        raise ValueError(f"know2guess.lambdas must be positive, got {params.lambdas}")


def plan(params: Know2GuessParams, answer: AnswerParams, switch: Callable[[str], str]) -> list[Run]:
    """Every run of the view, model by model (so each model's server starts once).

    Models and thinking settings default to the answer stage's; ``switch(model)`` is the
    registry's thinking field. Control prompts go to ``control_models`` (all when empty).

    Raises:
        ValueError: see :func:`check`; a control model that is not a model under test.
    """
    check(params)
    models = list(dict.fromkeys(params.models or answer.models))
    controls = set(params.control_models or models)
    if bad := sorted(controls - set(models)):
        raise ValueError(f"know2guess.control_models: {bad[0]!r} is not a model under test ({', '.join(models)})")
    runs = []
    for model in models:
        for thinking in thinking_modes(params.thinking or answer.thinking, switch(model)):
            for condition in params.conditions:
                for prompt in params.prompts:
                    if prompt == STANDARD or model in controls:
                        runs.append(Run(model, thinking, condition, prompt))
    return runs


def contexts(
    questions: pl.DataFrame, retrieved: pl.DataFrame, lookup: Lookup, *, pipeline: str, k: int, chunk_chars: int = 0
) -> dict[str, str]:
    """The formatted context of each question: the chunks the answer stage's single-shot RAG saw.

    ``retrieved`` is ``05_answer/retrieved.parquet``; the rows used are those of ``pipeline`` and
    ``k`` with the scenario, formatted as the answer stage formats them (``format_context``).

    Raises:
        ValueError: a question without retrieved chunks there, or a chunk not in the corpus.
    """
    rows = retrieved.filter(pl.col("pipeline") == pipeline, pl.col("k") == k, pl.col("scenario"))
    chunks = dict(zip(rows["question_id"].to_list(), rows["retrieved_ids"].to_list(), strict=True))
    out = {}
    for qid in questions["id"].to_list():
        if qid not in chunks:
            raise ValueError(
                f"question {qid!r}: {catalogue.ANSWER_RETRIEVED.relative()} has no chunks for pipeline "
                f"{pipeline!r} at k={k} (run {catalogue.notebook('answer')} with the 'single' condition, or drop "
                "'single' from know2guess.conditions)"
            )
        out[qid] = context_of(list(chunks[qid]), lookup, qid, chunk_chars)
    return out


def calls(questions: pl.DataFrame, run: Run, context: Mapping[str, str]) -> list[Call]:
    """One call per question for a run, in question order (the model sees the answer stage's question)."""
    rows = questions.to_dicts()
    return [
        decision_call(run, query_of(r, True), context.get(r["id"]) if run.condition == "single" else None) for r in rows
    ]


def completion(reply: Reply) -> str:
    """What the model produced as one text: its thinking trace (in ``<think>`` tags), then the answer.

    The parsers remove the trace again; keeping it in lets them tell a trace-only reply apart.
    """
    return f"<think>{reply.thinking}</think>\n{reply.text}" if reply.thinking else reply.text or ""


SCHEMA: dict[str, Any] = {
    "model": pl.String,
    "thinking": pl.String,
    "condition": pl.String,
    "prompt": pl.String,
    "parser": pl.String,
    "question_id": pl.String,
    "answerable": pl.Boolean,
    "query": pl.String,
    "state": pl.String,
    "confidence": pl.Float64,
    "answer": pl.String,
    "issues": pl.String,
    "response": pl.String,
    "has_thinking": pl.Boolean,
    "finish_reason": pl.String,
    "budget_exhausted": pl.Boolean,
    "truncated": pl.Boolean,
    "error": pl.String,
    "cache_key": pl.String,
    "completion_tokens": pl.Int64,
}


def decision_rows(questions: pl.DataFrame, run: Run, replies: Sequence[Reply]) -> list[dict[str, Any]]:
    """Two rows per reply (strict, normalized); a failed call keeps its error and no state.

    ``issues`` joins the parser's issues with ``;`` and adds ``budget_exhausted`` (no final
    answer within the output budget) and ``truncated`` (cut off after some answer text).
    """
    out = []
    for row, reply in zip(questions.to_dicts(), replies, strict=True):
        truncated = reply.finish_reason == "length" and not reply.budget_exhausted
        flags = ["budget_exhausted"] * reply.budget_exhausted + ["truncated"] * truncated
        for mode in MODES:
            decision = None if reply.error else parse(completion(reply), mode)
            out.append(
                {
                    **run.__dict__,
                    "parser": mode,
                    "question_id": row["id"],
                    "answerable": bool(row["answerable"]),
                    "query": query_of(row, True),
                    "state": decision.state if decision else None,
                    "confidence": decision.confidence if decision else None,
                    "answer": decision.answer if decision else None,
                    "issues": ";".join([*(decision.issues if decision else ()), *flags]),
                    "response": reply.text,
                    "has_thinking": bool(reply.thinking),
                    "finish_reason": reply.finish_reason,
                    "budget_exhausted": bool(reply.budget_exhausted),
                    "truncated": truncated,
                    "error": reply.error,
                    "cache_key": reply.cache_key,
                    "completion_tokens": reply.completion_tokens,
                }
            )
    return out


def decisions_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """The decisions table (:data:`SCHEMA`), one row per run, parser and question.

    Raises:
        ValueError: the same (run, parser, question) twice.
    """
    frame = pl.DataFrame(list(rows), schema=SCHEMA)
    dup = frame.filter(pl.struct(*KEY, "question_id").is_duplicated())
    if dup.height:
        raise ValueError(f"question {dup['question_id'][0]!r} was asked twice under {dup.select(KEY).row(0)}")
    return frame
