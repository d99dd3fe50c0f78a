"""What a model answered: the thinking trace split from the final answer, budget exhaustion, JSON.

Thinking arrives in one of three shapes: a separate message field (``reasoning_content`` from
vLLM/llama.cpp reasoning parsers, ``reasoning`` from OpenRouter), ``<think>…</think>`` blocks in the
content, or only a closing ``</think>`` (chat templates that open the block in the prompt). The
trace is kept apart from the answer because judges must never see it (App. I). Models without
native thinking can be asked to reason in those tags instead (:func:`reasoning_prompt`, thinking
mode "prompt"): prompted reasoning, not a native thinking switch, split off the same way.

A response whose output budget ran out before a final answer (``finish_reason == "length"`` and
nothing left after removing thinking, e.g. an unclosed ``<think>``) is *budget exhausted*: the paper
excludes those from the rates and scores them 0 in accuracy (§4.1).

Structured outputs are parsed leniently (code fences, prose around the object, trailing commas);
what still does not parse is *lost to format*, a counted outcome, never a silent drop.

:class:`Result` is one call's outcome as stages see it; :func:`results_frame` makes the parquet
rows (one per call, with its cache key) and :func:`summary` the counts every batch reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from declinecraft.core import paths, prompts
from declinecraft.llm.cache import CallRecord, canonical_json

OPEN, CLOSE = "<think>", "</think>"
#: Template of the prompted-reasoning instruction (ours, not the paper's) in ``params/prompts/``.
REASONING_TEMPLATE = "think_prompted"
_BLOCK = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.S)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class FormatError(ValueError):
    """A structured output could not be parsed (the call counts as lost to format)."""


def split_thinking(content: str | None, reasoning: str | None = None) -> tuple[str, str]:
    """Return ``(answer, thinking)`` from a message's content and its optional reasoning field.

    Every ``<think>`` block goes to the thinking (an unclosed one runs to the end of the text); a
    lone ``</think>`` ends a trace that began in the prompt. Both are stripped of outer whitespace.
    """
    text = content or ""
    traces = [reasoning.strip()] if reasoning and reasoning.strip() else []
    if OPEN in text:
        traces += [m.strip() for m in _BLOCK.findall(text) if m.strip()]
        text = _BLOCK.sub("", text)
    if CLOSE in text:  # the opening tag was part of the prompt
        before, _, text = text.rpartition(CLOSE)
        if before.strip():
            traces.append(before.replace(CLOSE, "").strip())
    return text.strip(), "\n\n".join(traces)


def reasoning_prompt(root: Path | None = None) -> str:
    """The instruction of thinking mode "prompt" (``params/prompts/think_prompted.txt``, our
    wording), filled with the tags :func:`split_thinking` splits off, so instruction and parser
    cannot drift apart. ``root`` defaults to the project this package lives in."""
    root = root or paths.find_root(Path(__file__))
    return prompts.load(REASONING_TEMPLATE, root).render(open=OPEN, close=CLOSE)


def is_budget_exhausted(finish_reason: str | None, answer: str) -> bool:
    """True when generation stopped at the token limit with no final answer left after thinking."""
    return finish_reason == "length" and not answer.strip()


def parse_json(text: str) -> Any:
    """Parse a JSON value from a model's final answer, leniently.

    Tries, in order: the whole text; the first fenced code block; the first ``{``/``[`` through a
    valid end (prose around it ignored); the same after removing trailing commas.

    Raises:
        FormatError: nothing parsed; the message quotes the start of the text.
    """
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    for candidate in candidates:
        for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
            value = _first_value(attempt)
            if value is not _MISSING:
                return value
    snippet = text.strip()[:80].replace("\n", " ")
    raise FormatError(f"no JSON value in model output {snippet!r}{'…' if len(text.strip()) > 80 else ''}")


_MISSING = object()
_DECODER = json.JSONDecoder()


def _first_value(text: str) -> Any:
    """Return the first JSON object/array that decodes from some ``{`` or ``[``, else _MISSING."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    for start, char in enumerate(text):
        if char in "{[":
            try:
                value, _ = _DECODER.raw_decode(text, start)
            except ValueError:
                continue
            return value
    return _MISSING


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    """One call's outcome, from the server or from the cache."""

    key: str
    model_id: str
    tag: str
    status: Literal["ok", "failed"]
    text: str
    """Final answer with every thinking trace removed ('' for a failure)."""
    thinking: str
    raw_text: str
    """Message content exactly as returned."""
    thinking_mode: str
    """"on" (native), "off", or "prompt" (reasoning prompt standing in for native thinking)."""
    finish_reason: str | None
    budget_exhausted: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    attempts: int
    error: str | None
    cached: bool
    """True when this run read it from the cache instead of sending it."""
    created_at: str
    prompt_version: str
    json_mode: bool = False
    parsed: Any = None
    """The parsed JSON value (json_mode calls that parsed)."""
    lost_to_format: bool = False
    """json_mode call answered, within budget, but unparsable."""

    @property
    def ok(self) -> bool:
        """True for a stored answer (which may still be budget exhausted or lost to format)."""
        return self.status == "ok"


def make_result(
    record: CallRecord, *, model_id: str, tag: str, thinking_mode: str, json_mode: bool, cached: bool
) -> Result:
    """Turn a stored record into a :class:`Result`: split thinking, flag budget, parse JSON.

    Done on every read, so a better split or parser applies to cached calls without re-sending.
    """
    ok = record.status == "ok"
    text, thinking = split_thinking(record.text, record.reasoning) if ok else ("", "")
    exhausted = ok and is_budget_exhausted(record.finish_reason, text)
    parsed, lost = None, False
    if json_mode and ok and not exhausted:
        try:
            parsed = parse_json(text)
        except FormatError:
            lost = True
    return Result(
        key=record.key,
        model_id=model_id,
        tag=tag,
        status=record.status,
        text=text,
        thinking=thinking,
        raw_text=record.text or "",
        thinking_mode=thinking_mode,
        finish_reason=record.finish_reason,
        budget_exhausted=exhausted,
        prompt_tokens=record.prompt_tokens,
        completion_tokens=record.completion_tokens,
        latency_s=record.latency_s,
        attempts=record.attempts,
        error=record.error,
        cached=cached,
        created_at=record.created_at,
        prompt_version=record.prompt_version,
        json_mode=json_mode,
        parsed=parsed,
        lost_to_format=lost,
    )


def summary(results: Sequence[Result]) -> dict[str, int]:
    """Count calls, cache hits, sent, failed, budget exhausted, lost to format."""
    return {
        "calls": len(results),
        "cached": sum(r.cached for r in results),
        "sent": sum(not r.cached for r in results),
        "failed": sum(not r.ok for r in results),
        "budget_exhausted": sum(r.budget_exhausted for r in results),
        "lost_to_format": sum(r.lost_to_format for r in results),
    }


def results_frame(results: Sequence[Result]) -> pl.DataFrame:
    """One row per call (the cache key included), ready to write as a stage's parquet output.

    ``parsed`` becomes ``parsed_json`` (canonical JSON text, null when absent).
    """
    rows = {name: [getattr(r, name) for r in results] for name in _FRAME_SCHEMA if name != "parsed_json"}
    rows["parsed_json"] = [None if r.parsed is None else canonical_json(r.parsed) for r in results]
    return pl.DataFrame(rows, schema=_FRAME_SCHEMA)


_FRAME_SCHEMA: dict[str, Any] = {
    "key": pl.String,
    "model_id": pl.String,
    "tag": pl.String,
    "status": pl.String,
    "text": pl.String,
    "thinking": pl.String,
    "raw_text": pl.String,
    "thinking_mode": pl.String,
    "finish_reason": pl.String,
    "budget_exhausted": pl.Boolean,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
    "latency_s": pl.Float64,
    "attempts": pl.Int64,
    "error": pl.String,
    "cached": pl.Boolean,
    "created_at": pl.String,
    "prompt_version": pl.String,
    "json_mode": pl.Boolean,
    "parsed_json": pl.String,
    "lost_to_format": pl.Boolean,
}
