"""Tests for declinecraft.llm.responses: thinking split, budget exhaustion, lenient JSON."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.llm import responses
from declinecraft.llm.cache import CallRecord


def record(text: str | None, *, status: str = "ok", finish: str = "stop", reasoning: str | None = None) -> CallRecord:
    """A stored call with known values."""
    return CallRecord(
        key=f"k-{text}",
        status=status,  # type: ignore[arg-type]
        endpoint="vllm:m",
        revision="",
        prompt_version="v",
        request="{}",
        text=text,
        reasoning=reasoning,
        finish_reason=finish if status == "ok" else None,
        prompt_tokens=5,
        completion_tokens=7,
        latency_s=0.25,
        error=None if status == "ok" else "HTTP 500: x",
        attempts=1,
        created_at="2026-01-01T00:00:00.000+00:00",
    )


def result(rec: CallRecord, *, json_mode: bool = False, cached: bool = False) -> responses.Result:
    return responses.make_result(rec, model_id="m", tag="t", thinking_mode="off", json_mode=json_mode, cached=cached)


class TestSplitThinking:
    @pytest.mark.parametrize(
        ("content", "reasoning", "answer", "thinking"),
        [
            ("plain answer", None, "plain answer", ""),
            ("<think>step 1\nstep 2</think>\n\nThe answer.", None, "The answer.", "step 1\nstep 2"),
            ("<think>\n\n</think>\n\nNo thinking.", None, "No thinking.", ""),
            ("<think>runs out of budget", None, "", "runs out of budget"),
            ("opened in the prompt</think>final", None, "final", "opened in the prompt"),
            ("<think>a</think>mid<think>b</think>end", None, "midend", "a\n\nb"),
            ("The answer.", "field trace", "The answer.", "field trace"),
            (None, "all budget spent thinking", "", "all budget spent thinking"),
            ("<think>inline</think>ok", "field", "ok", "field\n\ninline"),
        ],
    )
    def test_cases(self, content: str | None, reasoning: str | None, answer: str, thinking: str) -> None:
        """Field, <think> blocks, unclosed and prompt-opened traces all go to the thinking."""
        assert responses.split_thinking(content, reasoning) == (answer, thinking)


class TestIsBudgetExhausted:
    @pytest.mark.parametrize(
        ("finish", "answer", "expected"),
        [("length", "", True), ("length", "  \n", True), ("length", "partial answer", False), ("stop", "", False)],
    )
    def test_cases(self, finish: str, answer: str, expected: bool) -> None:
        """Only a length stop with no final answer is budget exhausted."""
        assert responses.is_budget_exhausted(finish, answer) is expected


class TestParseJson:
    @pytest.mark.parametrize(
        ("text", "value"),
        [
            ('{"facts": ["a", "b"]}', {"facts": ["a", "b"]}),
            ('```json\n{"a": 1}\n```', {"a": 1}),
            ("```\n[1, 2]\n```", [1, 2]),
            ('Sure! Here it is:\n{"a": {"b": 2}}\nHope this helps.', {"a": {"b": 2}}),
            ('{"a": [1, 2,], "b": 3,}', {"a": [1, 2], "b": 3}),
            ('Result: ```json\n{"x": "y",}\n``` done', {"x": "y"}),
            ("[]", []),
        ],
    )
    def test_lenient(self, text: str, value: object) -> None:
        """Fences, prose around the value and trailing commas are tolerated."""
        assert responses.parse_json(text) == value

    @pytest.mark.parametrize("text", ["", "no json at all", '{"a": ', "{'a': 1}"])
    def test_lost(self, text: str) -> None:
        """Unparsable output raises FormatError quoting the text."""
        with pytest.raises(responses.FormatError, match="no JSON value in model output"):
            responses.parse_json(text)


class TestMakeResult:
    def test_split(self) -> None:
        """The answer loses its trace; raw text and reasoning field are kept apart."""
        r = result(record("<think>a</think>B", reasoning="field"))
        assert (r.text, r.thinking, r.raw_text, r.ok) == ("B", "field\n\na", "<think>a</think>B", True)

    def test_failure(self) -> None:
        """A failed record gives an empty answer and keeps its error."""
        r = result(record(None, status="failed"), json_mode=True)
        assert (r.ok, r.text, r.error, r.lost_to_format, r.budget_exhausted) == (False, "", "HTTP 500: x", False, False)

    @pytest.mark.parametrize(
        ("text", "finish", "parsed", "lost", "exhausted"),
        [
            ('{"a": 1}', "stop", {"a": 1}, False, False),
            ("no json", "stop", None, True, False),
            ('{"a": ', "length", None, True, False),
            ("<think>out of budget", "length", None, False, True),
        ],
    )
    def test_json(self, text: str, finish: str, parsed: object, lost: bool, exhausted: bool) -> None:
        """json_mode parses the answer; unparsable is lost to format unless the budget ran out first."""
        r = result(record(text, finish=finish), json_mode=True)
        assert (r.parsed, r.lost_to_format, r.budget_exhausted) == (parsed, lost, exhausted)


class TestSummary:
    def test_counts(self) -> None:
        """Every outcome is counted, none dropped."""
        results = [
            result(record("a"), cached=True),
            result(record(None, status="failed")),
            result(record("<think>x", finish="length")),
            result(record("nope"), json_mode=True),
        ]
        assert responses.summary(results) == {
            "calls": 4,
            "cached": 1,
            "sent": 3,
            "failed": 1,
            "budget_exhausted": 1,
            "lost_to_format": 1,
        }


class TestResultsFrame:
    def test_columns(self) -> None:
        """One typed row per call with its cache key; parsed JSON as canonical text."""
        results = [
            result(record('{"b": 1, "a": 2}'), json_mode=True),
            result(record("<think>x", finish="length"), json_mode=True),
        ]
        frame = responses.results_frame(results)
        assert frame.height == 2 and frame["key"].to_list() == [r.key for r in results]
        assert frame["parsed_json"].to_list() == ['{"a":2,"b":1}', None]
        assert frame["budget_exhausted"].to_list() == [False, True]
        assert frame.schema["prompt_tokens"] == pl.Int64 and frame.schema["latency_s"] == pl.Float64

    def test_empty(self) -> None:
        """No results still give the full schema."""
        frame = responses.results_frame([])
        assert frame.height == 0 and frame.columns[:3] == ["key", "model_id", "tag"]
        assert "lost_to_format" in frame.columns
