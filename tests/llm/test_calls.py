"""Tests for declinecraft.llm.calls: what a stage keeps of a call's result."""

from __future__ import annotations

import dataclasses

import pytest

from declinecraft.llm.calls import Call, Reply, to_reply
from declinecraft.llm.responses import Result

ANSWERED = Result(
    key="k1",
    model_id="m",
    tag="",
    status="ok",
    text="Steve",
    thinking="let me see",
    raw_text="<think>let me see</think>Steve",
    thinking_mode="on",
    finish_reason="stop",
    budget_exhausted=False,
    prompt_tokens=10,
    completion_tokens=4,
    latency_s=0.5,
    attempts=1,
    error=None,
    cached=False,
    created_at="2026-01-01T00:00:00Z",
    prompt_version="v1",
)


class TestToReply:
    def test_answered(self) -> None:
        """An answer keeps its text, thinking, finish reason, key and token count, and no error."""
        assert to_reply(ANSWERED) == Reply(
            text="Steve", thinking="let me see", finish_reason="stop", cache_key="k1", error=None, completion_tokens=4
        )

    def test_failed_keeps_its_error(self) -> None:
        """A failure has no text and keeps its error ("failed" when the record gave none)."""
        failed = dataclasses.replace(ANSWERED, status="failed", text="partial", error="HTTP 500")
        assert (to_reply(failed).text, to_reply(failed).error) == ("", "HTTP 500")
        assert to_reply(dataclasses.replace(failed, error=None)).error == "failed"

    def test_no_thinking_is_none(self) -> None:
        """An empty thinking trace becomes None, and a budget ran out is carried over."""
        reply = to_reply(dataclasses.replace(ANSWERED, thinking="", budget_exhausted=True))
        assert reply.thinking is None and reply.budget_exhausted


class TestCall:
    def test_hashable_by_everything_but_fields(self) -> None:
        """A call is frozen and hashable although its fields are a dict (left out of the hash)."""
        call = Call("judge_response", {"question": "q"}, max_tokens=8, choices=("0", "1"))
        assert hash(call) == hash(Call("judge_response", {"question": "other"}, max_tokens=8, choices=("0", "1")))
        with pytest.raises(dataclasses.FrozenInstanceError):
            call.prompt = "x"  # type: ignore[misc]
