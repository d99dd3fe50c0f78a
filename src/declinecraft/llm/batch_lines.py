"""The lines of a batch: one call's request and its result, in the OpenAI and Anthropic batch formats.

OpenAI's Batch API (also Together's, many OpenAI-compatible gateways' and ``vllm run-batch``'s):
one JSON line per request, ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``,
and one per result, ``{"custom_id", "response": {"status_code", "body"}, "error"}``. Anthropic's
Message Batches: ``{"custom_id", "params"}`` per request, ``{"custom_id", "result": {"type", ...}}``
per result, where type is ``succeeded``, ``errored``, ``canceled`` or ``expired``.

A call's ``custom_id`` is its cache key (64 hex digits, within both providers' limits), so a result
is folded into the call cache under the key of the call that asked for it. Results become the
transport's :class:`~declinecraft.llm.transport.Answer`, successful or failed with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from declinecraft.llm.cache import CallRecord
from declinecraft.llm.transport import Answer, LLMError, answer_of

#: The endpoint every OpenAI-format line asks for.
CHAT_URL = "/v1/chat/completions"
#: Body fields an Anthropic request takes over unchanged.
ANTHROPIC_FIELDS = ("max_tokens", "temperature", "top_p", "top_k", "thinking", "metadata", "tool_choice", "tools")
#: Body fields with no Anthropic counterpart that are left out: the prompts ask for JSON themselves.
ANTHROPIC_DROPPED = ("response_format",)
#: Anthropic stop reasons in the OpenAI words the rest of the client reads.
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def openai_line(key: str, model: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI batch line of one call (``model`` added to the keyed body)."""
    return {"custom_id": key, "method": "POST", "url": CHAT_URL, "body": {"model": model, **body}}


def anthropic_line(key: str, model: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The Anthropic Message Batches request of one call: system turns into ``system``, ``stop`` into
    ``stop_sequences``.

    Raises:
        LLMError: the body has a field Anthropic's API has no counterpart for (named).
    """
    params: dict[str, Any] = {"model": model}
    system = [str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "system"]
    if system:
        params["system"] = "\n\n".join(system)
    params["messages"] = [
        {"role": m["role"], "content": m.get("content")} for m in body.get("messages", []) if m.get("role") != "system"
    ]
    for name, value in body.items():
        if name == "messages" or name in ANTHROPIC_DROPPED:
            continue
        if name == "stop":
            params["stop_sequences"] = [value] if isinstance(value, str) else list(value)
        elif name == "max_completion_tokens":  # an entry's max_tokens_field for OpenAI's reasoning models
            params["max_tokens"] = value
        elif name in ANTHROPIC_FIELDS:
            params[name] = value
        else:
            raise LLMError(f"model {model!r}: request field {name!r} has no counterpart in Anthropic's Message Batches")
    return {"custom_id": key, "params": params}


def jsonl(lines: Iterable[Mapping[str, Any]]) -> bytes:
    """JSON lines, UTF-8, one per request, each ending in a newline."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


def read_jsonl(data: bytes | str, where: str) -> list[dict[str, Any]]:
    """Parse JSON lines (blank lines skipped).

    Raises:
        LLMError: a line is not a JSON object; names ``where`` and the line number.
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise LLMError(f"{where}: line {number} is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise LLMError(f"{where}: line {number} is not a JSON object")
        out.append(value)
    return out


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        nested = error.get("error")
        inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else error
        code, message = inner.get("code") or inner.get("type") or "", inner.get("message") or ""
        return f"{code}: {message}".strip(": ") if code or message else json.dumps(error)[:500]
    return str(error)[:500]


def openai_result(line: Mapping[str, Any], where: str) -> tuple[str, Answer]:
    """``(custom_id, answer)`` of one OpenAI-format result line (an output or an error file's)."""
    key = str(line.get("custom_id") or "")
    response = line.get("response") or {}
    if line.get("error"):
        return key, Answer(ok=False, error=f"{where}: {_error_text(line['error'])}")
    status = int(response.get("status_code") or 0)
    body = response.get("body")
    if status != 200:
        return key, Answer(ok=False, error=f"{where}: HTTP {status}: {_error_text(body)}")
    answer = answer_of(json.dumps(body).encode())
    return key, answer if answer.ok else Answer(ok=False, error=f"{where}: {answer.error}")


def anthropic_result(line: Mapping[str, Any], where: str) -> tuple[str, Answer]:
    """``(custom_id, answer)`` of one Anthropic Message Batches result line."""
    key = str(line.get("custom_id") or "")
    result = line.get("result") or {}
    kind = result.get("type")
    if kind != "succeeded":
        why = _error_text(result.get("error")) if result.get("error") else "no answer"
        return key, Answer(ok=False, error=f"{where}: {kind or 'no result'}: {why}")
    message = result.get("message") or {}
    blocks = message.get("content") or []
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    thinking = "".join(str(b.get("thinking", "")) for b in blocks if b.get("type") == "thinking")
    usage = message.get("usage") or {}
    stop = message.get("stop_reason")
    return key, Answer(
        ok=True,
        text=text,
        reasoning=thinking or None,
        finish_reason=STOP_REASONS.get(str(stop), None if stop is None else str(stop)),
        prompt_tokens=usage.get("input_tokens"),
        completion_tokens=usage.get("output_tokens"),
        latency_s=None,
    )


def record_of(call: Mapping[str, Any], answer: Answer, *, endpoint: str, revision: str, created_at: str) -> CallRecord:
    """The cache record of one batch line's answer (``call``: its ``key``, ``prompt_version`` and
    ``request`` as the batch stored them); a batch gives no latency and one attempt."""
    return CallRecord(
        key=call["key"],
        status="ok" if answer.ok else "failed",
        endpoint=endpoint,
        revision=revision,
        prompt_version=call["prompt_version"],
        request=call["request"],
        text=answer.text,
        reasoning=answer.reasoning,
        finish_reason=answer.finish_reason,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        latency_s=None,
        error=answer.error,
        attempts=1,
        created_at=created_at,
    )
