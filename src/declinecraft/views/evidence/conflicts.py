"""The key value of every answerable question: by rule, else by the generator model (L5).

One row per answerable question (:data:`SCHEMA`) saying which value its conflicting copy alters
and where that came from (``rule`` or ``model``), or why it has none (``reason``). Rules come
first (:func:`values.rule_value`); the model is asked only for the facts no rule covers, with
our prompt ``esb_conflict`` (ESB does not publish how it built its conflicting passages).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Ask, Call
from declinecraft.views.evidence import values
from declinecraft.views.evidence.values import KeyValue

PROMPT = "esb_conflict"

SCHEMA: dict[str, Any] = {
    "question_id": pl.String,
    "source": pl.String,
    "kind": pl.String,
    "original": pl.String,
    "altered": pl.String,
    "unit": pl.String,
    "answer_string": pl.String,
    "altered_string": pl.String,
    "reason": pl.String,
    "raw_output": pl.String,
    "cache_key": pl.String,
}


def question_rng(seed: int, question_id: str, purpose: str) -> np.random.Generator:
    """A generator that depends only on the run's seed, the question and the purpose, so adding
    a question or a level never changes another's draws."""
    digest = hashlib.sha256(f"{question_id}\0{purpose}".encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def _row(
    qid: str,
    source: str | None,
    value: KeyValue | None,
    reason: str | None,
    raw: str | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    return {
        "question_id": qid,
        "source": source,
        "kind": value.kind if value else None,
        "original": value.original if value else None,
        "altered": value.altered if value else None,
        "unit": value.unit if value else None,
        "answer_string": value.answer_string if value else None,
        "altered_string": value.altered_string if value else None,
        "reason": reason,
        "raw_output": raw,
        "cache_key": key,
    }


def find_values(
    questions: pl.DataFrame,
    chunks: Mapping[str, Chunk],
    *,
    titles: Sequence[str],
    related: Mapping[str, Sequence[str]],
    ask: Ask | None,
    seed: int,
) -> pl.DataFrame:
    """Key values of the answerable questions whose target chunk is known (see :data:`SCHEMA`).

    ``related`` maps a question to the titles of its retrieved pages (the pool of named-item
    replacements); ``ask`` is the conflict model, or None for rules only (the facts no rule
    covers then get reason ``no_rule_value``).
    """
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for r in questions.filter(pl.col("answerable")).iter_rows(named=True):
        qid = r["id"]
        chunk = chunks.get(r["target_chunk_id"])
        if chunk is None:
            continue  # counted by the level builder as target_chunk_missing
        value = values.rule_value(
            r["fact"] or "",
            r["question"] or "",
            chunk.text,
            titles,
            own_title=chunk.title,
            related=related.get(qid, ()),
            rng=question_rng(seed, qid, "value"),
        )
        if value:
            rows[qid] = _row(qid, "rule", value, None)
        elif ask is None or not (r["fact"] or "").strip():
            rows[qid] = _row(qid, None, None, "no_rule_value" if ask is None else "no_fact")
        else:
            todo.append(r)
    calls = [Call(PROMPT, {"question": r["question"], "fact": r["fact"]}) for r in todo]
    replies = ask(calls) if (todo and ask is not None) else []
    for r, reply in zip(todo, replies, strict=True):
        qid = r["id"]
        if reply.error or reply.budget_exhausted:
            reason = "model_error" if reply.error else "model_budget_exhausted"
            rows[qid] = _row(qid, "model", None, reason, reply.text, reply.cache_key)
            continue
        answer, problem = values.model_value(reply.text, r["fact"], chunks[r["target_chunk_id"]].text)
        rows[qid] = _row(qid, "model", answer, problem, reply.text, reply.cache_key)
    return pl.DataFrame([rows[q] for q in sorted(rows)], schema=SCHEMA)


def key_value(row: Mapping[str, Any]) -> KeyValue | None:
    """The :class:`KeyValue` of one row of :func:`find_values` (None when it has none)."""
    if not row.get("original"):
        return None
    return KeyValue(row["kind"], row["original"], row["altered"], row["unit"] or "")
