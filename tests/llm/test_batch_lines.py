"""Tests for declinecraft.llm.batch_lines: a call's request line and its result line, in the OpenAI
and Anthropic batch formats."""

from __future__ import annotations

import pytest

from declinecraft.llm import batch_lines
from declinecraft.llm.transport import LLMError

OPENAI_OK = {
    "custom_id": "k1",
    "response": {
        "status_code": 200,
        "body": {
            "choices": [{"message": {"role": "assistant", "content": "Steve"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 1},
        },
    },
}


class TestOpenaiLine:
    def test_model_added(self) -> None:
        """The line posts to the chat endpoint, keyed by the call, with the model in the body."""
        line = batch_lines.openai_line("k", "m", {"messages": [], "max_tokens": 3})
        assert line == {
            "custom_id": "k",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": "m", "messages": [], "max_tokens": 3},
        }


class TestAnthropicLine:
    def test_anthropic_line_moves_system_and_stop(self) -> None:
        """System turns become ``system``, ``stop`` becomes ``stop_sequences``; an unknown field is refused."""
        body = {
            "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
            "max_tokens": 5,
            "stop": "END",
            "response_format": {"type": "json_object"},
        }
        line = batch_lines.anthropic_line("k", "claude", body)
        assert line["params"]["system"] == "S" and line["params"]["messages"] == [{"role": "user", "content": "U"}]
        assert line["params"]["stop_sequences"] == ["END"] and "response_format" not in line["params"]
        with pytest.raises(LLMError, match="'chat_template_kwargs' has no counterpart"):
            batch_lines.anthropic_line("k", "claude", {"messages": [], "chat_template_kwargs": {}})

    def test_max_completion_tokens(self) -> None:
        """OpenAI's ``max_completion_tokens`` becomes Anthropic's ``max_tokens``."""
        line = batch_lines.anthropic_line("k", "claude", {"messages": [], "max_completion_tokens": 9})
        assert line["params"]["max_tokens"] == 9


class TestJsonl:
    def test_round_trip(self) -> None:
        """Lines written as JSON lines (non-ASCII kept) read back equal, blank lines skipped."""
        lines = [{"custom_id": "a", "text": "café"}, {"custom_id": "b"}]
        data = batch_lines.jsonl(lines)
        assert data.endswith(b"\n") and "café".encode() in data
        assert batch_lines.read_jsonl(data + b"\n\n", "out.jsonl") == lines

    @pytest.mark.parametrize(("text", "match"), [('{"a": 1}\n[1]', "line 2 is not a JSON object"), ("{", "line 1")])
    def test_bad_line_named(self, text: str, match: str) -> None:
        """A line that is not a JSON object is an error naming the file and the line."""
        with pytest.raises(LLMError, match=f"out.jsonl: {match}"):
            batch_lines.read_jsonl(text, "out.jsonl")


class TestOpenaiResult:
    def test_success(self) -> None:
        """A 200 response becomes a successful answer with its text and token counts."""
        key, answer = batch_lines.openai_result(OPENAI_OK, "batch b1")
        assert key == "k1" and answer.ok and answer.text == "Steve"
        assert (answer.prompt_tokens, answer.completion_tokens) == (7, 1)

    def test_failures_name_the_batch(self) -> None:
        """An error line or a non-200 status is a failed answer whose error names the batch and the reason."""
        _, errored = batch_lines.openai_result(
            {"custom_id": "k2", "error": {"code": "expired", "message": "too late"}}, "batch b1"
        )
        assert not errored.ok and errored.error == "batch b1: expired: too late"
        _, refused = batch_lines.openai_result(
            {"custom_id": "k3", "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}}},
            "batch b1",
        )
        assert not refused.ok and refused.error == "batch b1: HTTP 429: slow down"


class TestAnthropicResult:
    def test_success(self) -> None:
        """Text and thinking blocks are joined apart; the stop reason is read in OpenAI's words."""
        line = {
            "custom_id": "k",
            "result": {
                "type": "succeeded",
                "message": {
                    "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Alex"}],
                    "stop_reason": "max_tokens",
                    "usage": {"input_tokens": 5, "output_tokens": 2},
                },
            },
        }
        key, answer = batch_lines.anthropic_result(line, "batch b2")
        assert key == "k" and answer.ok and (answer.text, answer.reasoning) == ("Alex", "hm")
        assert answer.finish_reason == "length" and (answer.prompt_tokens, answer.completion_tokens) == (5, 2)

    def test_expired(self) -> None:
        """A result that did not succeed is a failed answer naming its type."""
        _, answer = batch_lines.anthropic_result({"custom_id": "k", "result": {"type": "expired"}}, "batch b2")
        assert not answer.ok and answer.error == "batch b2: expired: no answer"


class TestRecordOf:
    def test_fields(self) -> None:
        """A batch answer's record: the call's key and request, one attempt, no latency, status from the answer."""
        _, answer = batch_lines.openai_result(OPENAI_OK, "b")
        call = {"key": "k1", "prompt_version": "v1", "request": '{"x": 1}'}
        record = batch_lines.record_of(call, answer, endpoint="e", revision="r", created_at="2026-01-01T00:00:00Z")
        assert (record.key, record.status, record.text, record.attempts, record.latency_s) == (
            "k1",
            "ok",
            "Steve",
            1,
            None,
        )
        assert (record.endpoint, record.revision, record.prompt_version) == ("e", "r", "v1")
