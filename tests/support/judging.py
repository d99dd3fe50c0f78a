"""Scripted stand-ins for judging: a judge that answers by prompt, labelled responses, one question and its chunks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply


class ScriptedJudge:
    """A judge whose reply depends on the call: ``script(call) -> text``; records every call."""

    def __init__(self, script: Callable[[Call], str], *, error_on: str | None = None) -> None:
        self.script, self.error_on, self.calls = script, error_on, []

    def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.calls.extend(calls)
        out = []
        for c in calls:
            text = self.script(c)
            err = "HTTP 500" if self.error_on and self.error_on in str(dict(c.fields)) else None
            out.append(Reply("" if err else text, cache_key=f"key-{len(self.calls)}", error=err))
        return out


def responses(rows: list[dict]) -> pl.DataFrame:
    """A responses frame with defaults for the columns the judge does not vary here."""
    base = {
        "model": "m",
        "thinking": "off",
        "condition": "single",
        "pipeline": "hybrid",
        "k": 5,
        "scenario": True,
        "prompt_variant": "default",
        "budget_exhausted": False,
        "error": None,
        "answerable": True,
    }
    return pl.DataFrame([{**base, **r} for r in rows], schema_overrides={"error": pl.String})


def labelled() -> pl.DataFrame:
    """Six responses covering every labelling outcome."""
    return responses(
        [
            {"response_id": "r1", "question_id": "a0", "query": "Q0?", "response": "It has 10 health."},
            {"response_id": "r2", "question_id": "a1", "query": "Q1?", "response": "I do not know the answer."},
            {
                "response_id": "r3",
                "question_id": "u0",
                "query": "Q2?",
                "response": "It does not exist.",
                "answerable": False,
            },
            {
                "response_id": "r4",
                "question_id": "u1",
                "query": "Q3?",
                "response": "",
                "budget_exhausted": True,
                "answerable": False,
            },
            {"response_id": "r5", "question_id": "a2", "query": "Q4?", "response": "   "},
            {
                "response_id": "r6",
                "question_id": "a3",
                "query": "Q5?",
                "response": "",
                "error": "HTTP 400: context too long",
            },
        ]
    )


QUESTION = {
    "id": "a0",
    "answerable": True,
    "target_title": "Horse",
    "target_url": "https://wiki/Horse",
    "scenario_chunk_ids": ["c1"],
    "question": "I ride. How much armor?",
}


def lookup(ids: Sequence[str]) -> list[Chunk]:
    """One known chunk; others raise KeyError like the retriever."""
    known = {"c1": Chunk("c1", "Saddle", "https://wiki/Saddle", "[Page: Saddle]\nsaddle text")}
    if missing := [i for i in ids if i not in known]:
        raise KeyError(f"chunk {missing[0]!r} is not in the index")
    return [known[i] for i in ids]
