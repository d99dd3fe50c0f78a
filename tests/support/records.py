"""Stored LLM calls with known values, for the tests of the call store and what reads it."""

from __future__ import annotations

from dataclasses import replace

from declinecraft.llm import cache
from declinecraft.llm.cache import CallRecord


def record(key: str, status: cache.Status = "ok", text: str | None = "answer", **changes: object) -> CallRecord:
    """A complete record with known values."""
    base = CallRecord(
        key=key,
        status=status,
        endpoint="vllm:m",
        revision="r1",
        prompt_version="p1",
        request="{}",
        text=text,
        reasoning=None,
        finish_reason="stop",
        prompt_tokens=3,
        completion_tokens=2,
        latency_s=0.5,
        error=None if status == "ok" else "HTTP 500: boom",
        attempts=1,
        created_at="2026-01-01T00:00:00.000+00:00",
    )
    return replace(base, **changes)  # type: ignore[arg-type]
