"""ESB's three prompt strategies (§4.3) over the evidence instances, for each model under test.

=====  =====================================================================================
P1     standard: ``esb_baseline`` (ours; ESB's text is not in our copy): answer from the
       passages, with no word on abstaining or on the model's own knowledge
P2     sufficiency-aware: ``esb_sufficiency`` (ours): P1 plus the instruction to abstain when
       the evidence is insufficient
P3     CoT + sufficiency: ``esb_cot_sufficiency`` (ours): assess sufficiency, then decide
J2     extra, not ESB's: our J.2 answer prompt with the context (``answer_with_context``), and
       J.2's prompt without retrieval (``answer_no_context``) for L4, as stage 05 sends them; it
       already asks the model to say when it does not know, so it is no baseline
=====  =====================================================================================

P1-P3 have one template each; at L4 their context is :data:`NO_PASSAGES`. Models run one at
a time, each thinking setting and prompt in turn; calls go in question order so consecutive
prompts share their prefix on a llama.cpp server.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

import polars as pl

from declinecraft.evaluation import answer
from declinecraft.evaluation.answer import Setting
from declinecraft.llm.calls import Call
from declinecraft.llm.pool import Models, each_model

PROMPTS: dict[str, str] = {
    "P1": "esb_baseline",
    "P2": "esb_sufficiency",
    "P3": "esb_cot_sufficiency",
    "J2": answer.TEMPLATES["default"],
}
"""Template of each prompt strategy when there is a context."""
NO_PASSAGES = "(No passages were retrieved.)"
"""The context of P1, P2 and P3 at L4 (no context); J2 there is stage 05's no-retrieval prompt."""

RESPONSE_SCHEMA: dict[str, Any] = {
    "response_id": pl.String,
    "instance_id": pl.String,
    "question_id": pl.String,
    "answerable": pl.Boolean,
    "level": pl.String,
    "order": pl.String,
    "model": pl.String,
    "thinking": pl.String,
    "prompt": pl.String,
    "template": pl.String,
    "query": pl.String,
    "response": pl.String,
    "thinking_trace": pl.String,
    "finish_reason": pl.String,
    "budget_exhausted": pl.Boolean,
    "cache_key": pl.String,
    "completion_tokens": pl.Int64,
    "error": pl.String,
}


def check_prompts(prompts: Sequence[str]) -> list[str]:
    """The prompt strategies of a run, in P1, P2, P3, J2 order.

    Raises:
        ValueError: an unknown or empty list (naming the allowed ones).
    """
    bad = [p for p in prompts if p not in PROMPTS]
    if bad or not prompts:
        raise ValueError(f"evidence.prompts must be a non-empty subset of {sorted(PROMPTS)}, got {list(prompts)}")
    return [p for p in PROMPTS if p in prompts]


def call_of(prompt: str, level: str, query: str, context: str) -> Call:
    """The call of one instance under one prompt strategy (J2 at L4 is stage 05's no-RAG call)."""
    if prompt == "J2":
        if level == "L4":
            return answer.answer_call(Setting("no_rag"), query, None)
        return answer.answer_call(Setting("single"), query, context)
    return Call(PROMPTS[prompt], {"context": context if level != "L4" else NO_PASSAGES, "question": query})


def response_id(instance_id: str, model: str, thinking: str, prompt: str) -> str:
    """A stable 16-hex id of one response (the join key of labels and scores)."""
    return hashlib.sha256(json.dumps([instance_id, model, thinking, prompt]).encode()).hexdigest()[:16]


def answer_instances(
    instances: pl.DataFrame,
    *,
    models: Models,
    model_ids: Sequence[str],
    thinking: Sequence[str],
    prompts: Sequence[str],
    max_tokens: int,
    temperature: float = 0.0,
) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Answer every instance under every prompt with every model; return rows and timings, in
    model order (the models at once where their endpoints are separate: :func:`each_model`)."""
    items = instances.sort("question_id", "level", "order").to_dicts()

    def one_model(model: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        rows: list[dict[str, Any]] = []
        timings: list[dict[str, Any]] = []
        for mode in answer.thinking_modes(thinking, models.thinking_switch(model)):
            ask = models.asker(model, thinking=mode, max_tokens=max_tokens, temperature=temperature)
            for prompt in prompts:
                start = time.monotonic()
                calls = [call_of(prompt, i["level"], i["query"], i["context"]) for i in items]
                for item, call, reply in zip(items, calls, ask(calls), strict=True):
                    rows.append(
                        {
                            "response_id": response_id(item["instance_id"], model, mode, prompt),
                            "instance_id": item["instance_id"],
                            "question_id": item["question_id"],
                            "answerable": item["answerable"],
                            "level": item["level"],
                            "order": item["order"],
                            "model": model,
                            "thinking": mode,
                            "prompt": prompt,
                            "template": call.prompt,
                            "query": item["query"],
                            "response": reply.text or "",
                            "thinking_trace": reply.thinking,
                            "finish_reason": reply.finish_reason,
                            "budget_exhausted": bool(reply.budget_exhausted),
                            "cache_key": reply.cache_key,
                            "completion_tokens": reply.completion_tokens,
                            "error": reply.error,
                        }
                    )
                timings.append(
                    {
                        "model": model,
                        "thinking": mode,
                        "prompt": prompt,
                        "calls": len(calls),
                        "seconds": round(time.monotonic() - start, 2),
                    }
                )
        return rows, timings

    done = each_model(models, model_ids, one_model)
    rows = [row for model_rows, _ in done for row in model_rows]
    return pl.DataFrame(rows, schema=RESPONSE_SCHEMA), [t for _, model_timings in done for t in model_timings]
