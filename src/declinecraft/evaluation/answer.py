"""Answering (§4.1–4.2, Appendix A.2–A.4, E, H): no retrieval, single-shot RAG, iterative RAG.

Every model under test answers every question once per *setting*: a retrieval condition, a
pipeline, a number of chunks k, with or without the scenario, with the paper's answer prompt or
our temporal variant (§6.4). :func:`settings` lists a run's settings from its params; the main grid
(``no_rag``, ``single``, ``iterative`` at the run's pipeline and k) comes first, then the ablations
(k sweep, pipelines, no scenario, temporal prompt) as single-shot settings. Settings that coincide
(the k sweep's k=5 is the main single-shot run) are answered once.

The model and the retriever are injected batch callables (:data:`Ask`, :data:`Search`), so all the
logic here is tested with scripted fakes; :mod:`declinecraft.evaluation.answer_stage` wires them to the LLM
layer, the model servers and the index, and writes the stage outputs.

Budget-exhausted responses (the output budget ran out before any final answer) are flagged, never
dropped: the judge stage leaves them unlabelled, the metrics leave them out of the two rates and
score them 0 in accuracy (§4.1).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from declinecraft.core.config import AnswerParams
from declinecraft.evaluation import iterative
from declinecraft.evaluation.context import Lookup, context_of
from declinecraft.llm.calls import Ask, Call, Reply
from declinecraft.retrieval.fusion import Hit

Condition = Literal["no_rag", "single", "iterative"]
CONDITIONS: tuple[str, ...] = ("no_rag", "single", "iterative")
#: Answer templates of ``params/prompts/`` per prompt variant (with retrieval).
TEMPLATES = {"default": "answer_with_context", "temporal": "answer_with_context_temporal"}
NO_CONTEXT = "answer_no_context"
REFLECT = "reflect"
#: The columns of ``05_answer/responses.parquet``; one row per (question, *KEY).
KEY = ("model", "thinking", "condition", "pipeline", "k", "scenario", "prompt_variant")


@dataclass(frozen=True)
class Setting:
    """One way of answering: retrieval condition, pipeline, k, scenario on/off, prompt variant."""

    condition: str
    pipeline: str = "none"
    """Retrieval pipeline; "none" without retrieval."""
    k: int = 0
    """Chunks retrieved (per round, for iterative RAG); 0 without retrieval."""
    scenario: bool = True
    """False: the question alone is both the retrieval query and the model's input (App. A.4)."""
    prompt_variant: str = "default"
    """"default" (App. J.2) or "temporal" (ours, §6.4: the game may be newer than the model)."""


#: ``search(queries, pipeline, k)`` -> ranked hits per query (C_pre only).
Search = Callable[[Sequence[str], str, int], list[list[Hit]]]


# --- the grid ------------------------------------------------------------------------------------


def settings(params: AnswerParams) -> list[Setting]:
    """Return every setting a run answers, main grid first, duplicates removed.

    Main grid: each of ``params.conditions`` at ``params.pipeline`` and ``params.k``. Ablations
    (single-shot RAG, paper App. A.2–A.4, §6.4): ``k_sweep`` at the main pipeline, ``pipelines``
    at the main k, ``no_scenario`` and ``temporal_prompt`` at the main pipeline and k.

    Raises:
        ValueError: an unknown condition, a k below 1, or an empty condition list.
    """
    unknown = [c for c in params.conditions if c not in CONDITIONS]
    if unknown or not params.conditions:
        raise ValueError(f"answer.conditions must be a non-empty subset of {CONDITIONS}, got {params.conditions}")
    if params.k < 1 or any(k < 1 for k in params.k_sweep):
        raise ValueError(f"answer.k and answer.k_sweep need k >= 1, got k={params.k}, k_sweep={params.k_sweep}")
    out = main_grid(params)
    out += [Setting("single", params.pipeline, k) for k in params.k_sweep]
    out += [Setting("single", p, params.k) for p in params.pipelines]
    if params.no_scenario:
        out.append(Setting("single", params.pipeline, params.k, scenario=False))
    if params.temporal_prompt:
        out.append(Setting("single", params.pipeline, params.k, prompt_variant="temporal"))
    return list(dict.fromkeys(out))


def main_grid(params: AnswerParams) -> list[Setting]:
    """The main grid's settings: each of ``params.conditions`` at the run's pipeline and k."""
    return [Setting("no_rag") if c == "no_rag" else Setting(c, params.pipeline, params.k) for c in params.conditions]


def ablation_name(setting: Setting, params: AnswerParams) -> str | None:
    """The name of an ablation setting as ``answer.ablation_models`` keys it (``k=10``, ``bm25``,
    ``no_scenario``, ``temporal_prompt``); None for a setting of the main grid."""
    if setting in main_grid(params):
        return None
    if not setting.scenario:
        return "no_scenario"
    if setting.prompt_variant != "default":
        return "temporal_prompt"
    return f"k={setting.k}" if setting.k != params.k else setting.pipeline


def runs_setting(params: AnswerParams, model: str | None, setting: Setting) -> bool:
    """Whether ``model`` answers ``setting``: the main grid always, an ablation when
    ``answer.ablation_models`` does not name it or lists the model (None = any model)."""
    name = ablation_name(setting, params)
    return name is None or model is None or name not in params.ablation_models or model in params.ablation_models[name]


def plan(params: AnswerParams, switch: str, model: str | None = None) -> list[tuple[str, Setting]]:
    """The (thinking mode, setting) pairs one model answers, in order: every setting in each mode
    of ``answer.thinking`` that ``answer.ablation_thinking`` also names (() = all of them), the main
    grid alone in the others. The paper ran its k ablation with thinking disabled (App. A.2), so a
    run may pair thinking on the main grid without doubling every ablation. ``model`` drops the
    ablations ``answer.ablation_models`` gives to other models (the paper's per-ablation subsets).

    Raises:
        ValueError: ``ablation_thinking`` names a setting ``thinking`` does not (or :func:`settings`'s
        and :func:`thinking_modes`' errors).
    """
    extra = [t for t in params.ablation_thinking if t not in params.thinking]
    if extra:
        raise ValueError(f"answer.ablation_thinking must be a subset of answer.thinking {params.thinking}, got {extra}")
    every = [s for s in settings(params) if runs_setting(params, model, s)]
    main = list(dict.fromkeys(main_grid(params)))
    ablating = set(thinking_modes(params.ablation_thinking or params.thinking, switch))
    return [
        (mode, s) for mode in thinking_modes(params.thinking, switch) for s in (every if mode in ablating else main)
    ]


#: ``answer.thinking`` value asking models without native thinking to reason in ``<think>`` tags.
PROMPTED = "prompted"
#: The LLM layer's thinking mode of that stand-in (``client.Request.thinking``; its instruction is
#: ``params/prompts/think_prompted.txt``, our wording).
PROMPT_MODE = "prompt"


def thinking_modes(requested: Sequence[str], switch: str) -> list[str]:
    """Thinking modes to run for a model, as the LLM layer takes them.

    "none" models run "off", plus "prompt" (the declared stand-in: asked to reason inside
    ``<think>`` tags, the trace split off like a native one) when ``requested`` holds "prompted";
    "always" models run "on"; switchable models each requested setting, their native "on" in place
    of "prompted" (the paper: 13 switchable models run both).

    Raises:
        ValueError: an unknown thinking value or registry kind.
    """
    bad = [t for t in requested if t not in ("off", "on", PROMPTED)]
    if bad:
        raise ValueError(f"answer.thinking takes 'off', 'on' and '{PROMPTED}', got {bad}")
    if switch == "none":
        return ["off", PROMPT_MODE] if PROMPTED in requested else ["off"]
    if switch == "always":
        return ["on"]
    if switch != "switchable":
        raise ValueError(f"registry 'thinking' must be none, always or switchable, got {switch!r}")
    return list(dict.fromkeys("on" if t == PROMPTED else t for t in requested))


def thinking_label(mode: str) -> str:
    """The ``thinking`` column of a response: "on" for prompted reasoning too, so the thinking
    comparisons pair it with "off"; which "on" is prompted follows from the model's registry entry
    (no native thinking) and the run's ``answer.thinking`` (:func:`is_prompted`)."""
    return "on" if mode == PROMPT_MODE else mode


def is_prompted(thinking: Sequence[str]) -> bool:
    """True when a run's thinking settings ask for prompted reasoning (its thinking results are
    then "prompted reasoning, not a native thinking switch", and its paper says so)."""
    return PROMPTED in thinking


def select_questions(questions: pl.DataFrame, limit: int, seed: int) -> pl.DataFrame:
    """Return ``limit`` questions (all when 0), keeping the benchmark's answerable share.

    Each half is shuffled with ``seed`` and cut; at least one question of each half present is
    kept. The result is sorted by id, so it does not depend on the benchmark's row order.
    """
    frame = questions.sort("id")
    if limit <= 0 or limit >= frame.height:
        return frame
    rng = np.random.default_rng(seed)
    n_ans = int(frame["answerable"].sum())
    take_ans = min(n_ans, max(1 if n_ans else 0, round(limit * n_ans / frame.height)))
    take_ans = min(take_ans, limit - (1 if frame.height > n_ans else 0))
    picked = []
    for half, take in ((True, take_ans), (False, limit - take_ans)):
        part = frame.filter(pl.col("answerable") == half)
        picked.append(part[sorted(rng.permutation(part.height)[:take].tolist())])
    return pl.concat(picked).sort("id")


def query_of(row: Mapping[str, Any], scenario: bool) -> str:
    """The question as the model and the retriever see it: scenario + question, or the question."""
    text = row["question"] if scenario else row["asked_question"]
    if not isinstance(text, str) or not text.strip():
        which = "question" if scenario else "asked_question"
        raise ValueError(f"question {row.get('id')!r} has an empty {which!r}")
    return text.strip()


def response_id(question_id: str, model: str, thinking: str, setting: Setting) -> str:
    """A stable 16-hex id of one response row (the join key of every 06_judge table)."""
    key = [
        question_id,
        model,
        thinking,
        setting.condition,
        setting.pipeline,
        setting.k,
        setting.scenario,
        setting.prompt_variant,
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]


def answer_call(setting: Setting, query: str, context: str | None) -> Call:
    """The answer call of a setting (J.2 without retrieval, with retrieval, or temporal variant)."""
    if setting.condition == "no_rag":
        return Call(NO_CONTEXT, {"question": query})
    if context is None:
        raise ValueError(f"setting {setting} needs a context")
    return Call(TEMPLATES[setting.prompt_variant], {"context": context, "question": query})


# --- answering one setting -------------------------------------------------------------------------


@dataclass
class Answered:
    """One response before it becomes a row: its reply, chunks and (iterative) rounds."""

    question_id: str
    query: str
    reply: Reply
    hits: list[Hit] = field(default_factory=list)
    rounds: str | None = None
    n_rounds: int | None = None


def answer_setting(
    questions: pl.DataFrame,
    setting: Setting,
    *,
    ask: Ask,
    search: Search,
    lookup: Lookup,
    max_rounds: int = 2,
    chunk_chars: int = 0,
) -> list[Answered]:
    """Answer every question under one setting with one model (bound into ``ask``).

    Iterative RAG starts from the same first ``k`` chunks as single-shot RAG (same query, same
    pipeline) and asks the model under test to reflect (:mod:`declinecraft.evaluation.iterative`)
    before the answer call. ``chunk_chars`` cuts each chunk in the prompts
    (:func:`~declinecraft.evaluation.context.format_context`).
    """
    rows = questions.to_dicts()
    ids = [str(r["id"]) for r in rows]
    queries = [query_of(r, setting.scenario) for r in rows]
    if setting.condition == "no_rag":
        replies = ask([answer_call(setting, q, None) for q in queries])
        return [Answered(i, q, r) for i, q, r in zip(ids, queries, replies, strict=True)]
    first = search(queries, setting.pipeline, setting.k)
    if setting.condition == "single":
        contexts = [
            context_of([h.chunk_id for h in hits], lookup, i, chunk_chars) for i, hits in zip(ids, first, strict=True)
        ]
        replies = ask([answer_call(setting, q, c) for q, c in zip(queries, contexts, strict=True)])
        return [Answered(i, q, r, list(h)) for i, q, r, h in zip(ids, queries, replies, first, strict=True)]
    owner = dict(zip(queries, ids, strict=False))
    ranks: dict[str, dict[str, Hit]] = {i: {h.chunk_id: h for h in hits} for i, hits in zip(ids, first, strict=True)}

    def retrieve(texts: Sequence[str], k: int) -> list[list[str]]:
        return [[h.chunk_id for h in hits] for hits in search(list(texts), setting.pipeline, k)]

    def reflect(items: Sequence[tuple[str, Sequence[str]]]) -> list[Reply]:
        return ask(
            [
                Call(REFLECT, {"context": context_of(chunk_ids, lookup, owner.get(q, "?"), chunk_chars), "query": q})
                for q, chunk_ids in items
            ]
        )

    traces = iterative.run(
        queries,
        retrieve=retrieve,
        reflect=reflect,
        k=setting.k,
        max_rounds=max_rounds,
        first=[[h.chunk_id for h in hits] for hits in first],
    )
    contexts = [context_of(t.chunk_ids, lookup, i, chunk_chars) for i, t in zip(ids, traces, strict=True)]
    replies = ask([answer_call(setting, q, c) for q, c in zip(queries, contexts, strict=True)])
    out = []
    for i, q, r, t in zip(ids, queries, replies, traces, strict=True):
        hits = [ranks[i].get(c, Hit(c)) for c in t.chunk_ids]
        out.append(Answered(i, q, r, hits, t.to_json(), len(t.rounds)))
    return out


# --- the responses table ---------------------------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "response_id": pl.String,
    "question_id": pl.String,
    "answerable": pl.Boolean,
    "model": pl.String,
    "thinking": pl.String,
    "condition": pl.String,
    "pipeline": pl.String,
    "k": pl.Int64,
    "scenario": pl.Boolean,
    "prompt_variant": pl.String,
    "query": pl.String,
    "response": pl.String,
    "thinking_trace": pl.String,
    "finish_reason": pl.String,
    "budget_exhausted": pl.Boolean,
    "cache_key": pl.String,
    "retrieved_chunk_ids": pl.List(pl.String),
    "component_ranks": pl.String,
    "rounds": pl.String,
    "n_rounds": pl.Int64,
    "completion_tokens": pl.Int64,
    "error": pl.String,
}


def rows_of(
    answered: Sequence[Answered], *, model: str, thinking: str, setting: Setting, answerable: Mapping[str, bool]
) -> list[dict[str, Any]]:
    """Turn answered questions into rows of ``responses.parquet`` (see :data:`SCHEMA`); ``thinking``
    is the mode asked of the LLM layer, stored as :func:`thinking_label`."""
    rows = []
    thinking = thinking_label(thinking)
    for a in answered:
        r = a.reply
        rows.append(
            {
                "response_id": response_id(a.question_id, model, thinking, setting),
                "question_id": a.question_id,
                "answerable": bool(answerable[a.question_id]),
                "model": model,
                "thinking": thinking,
                "condition": setting.condition,
                "pipeline": setting.pipeline,
                "k": setting.k,
                "scenario": setting.scenario,
                "prompt_variant": setting.prompt_variant,
                "query": a.query,
                "response": r.text or "",
                "thinking_trace": r.thinking,
                "finish_reason": r.finish_reason,
                "budget_exhausted": bool(r.budget_exhausted),
                "cache_key": r.cache_key,
                "retrieved_chunk_ids": [h.chunk_id for h in a.hits],
                "component_ranks": json.dumps([dict(h.ranks) for h in a.hits]) if a.hits else None,
                "rounds": a.rounds,
                "n_rounds": a.n_rounds,
                "completion_tokens": r.completion_tokens,
                "error": r.error,
            }
        )
    return rows


def responses_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Build ``responses.parquet``'s frame; one row per (question, setting) is enforced.

    Raises:
        ValueError: two rows with the same response id (question, model, thinking, setting).
    """
    frame = pl.DataFrame(list(rows), schema=SCHEMA)
    dup = frame.filter(pl.col("response_id").is_duplicated())
    if dup.height:
        raise ValueError(
            f"duplicate response {dup.row(0, named=True)['response_id']} for question "
            f"{dup['question_id'][0]!r}: a setting was answered twice"
        )
    return frame
