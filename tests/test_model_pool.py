"""Tests for declinecraft.llm.pool against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import fake_openai
from declinecraft.core import config
from declinecraft.llm import client as llm
from declinecraft.llm import pool as model_pool
from declinecraft.llm.calls import Call


@pytest.fixture()
def pool(project: Path, server: fake_openai.FakeServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[model_pool.ModelPool]:
    """A pool over two 'vLLM' models both answered by the fake server, caching in the project."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
    (project / "params" / "prompts").mkdir()
    for name in ("judge_response", "rewrite_query"):
        placeholder = "{question} {answer}" if name == "judge_response" else "{query}"
        (project / "params" / "prompts" / f"{name}.txt").write_text(f"# section: test\n---\nQ: {placeholder}\n")
    entries = {m: {"backend": "vllm", "served_name": m, "base_url": server.base_url} for m in ("one", "two")}
    (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
    with model_pool.ModelPool(config.load(project / "params" / "default.yaml")) as p:
        yield p


def scripted(reply: str, **extra: object) -> str:
    """A field value that makes the fake server answer ``reply``."""
    return f"[[fake {json.dumps({'reply': reply, **extra})}]]"


class TestToReply:
    def test_failure(self) -> None:
        """A failed result keeps its error and no text."""
        result = llm.Result(key="k", model_id="m", tag="", status="failed", text="", thinking="", raw_text="",
                            thinking_mode="off", finish_reason=None, budget_exhausted=False, prompt_tokens=None,
                            completion_tokens=None, latency_s=None, attempts=3, error="HTTP 500", cached=False,
                            created_at="", prompt_version="v")  # fmt: skip
        reply = model_pool.to_reply(result)
        assert (reply.text, reply.error, reply.cache_key) == ("", "HTTP 500", "k")


class TestModelPool:
    def test_thinking_split_and_cache(self, pool: model_pool.ModelPool, server: fake_openai.FakeServer) -> None:
        """Thinking is split from the answer; a second run of the same calls is served from the cache."""
        ask = pool.asker("one", thinking="off", max_tokens=8)
        calls = [Call("judge_response", {"question": "q", "answer": scripted("<think>hm</think>ABSTAIN")})]
        (first,) = ask(calls)
        sent = server.stats()["requests"]
        (again,) = ask(calls)
        assert (first.text, first.thinking, first.cache_key) == ("ABSTAIN", "hm", again.cache_key)
        assert server.stats()["requests"] == sent

    def test_history_appended(self, pool: model_pool.ModelPool) -> None:
        """A re-ask sends the history turns after the rendered prompt (the fake echoes the last one)."""
        ask = pool.asker("one", thinking="off", max_tokens=8)
        (reply,) = ask([Call("judge_response", {"question": "q", "answer": "a"}, history=(("assistant", "hm"), ("user", "ONE WORD")))])
        assert reply.text == "echo: ONE WORD"

    def test_budget_exhausted(self, pool: model_pool.ModelPool) -> None:
        """A reply cut at the token limit inside its thinking is budget exhausted."""
        ask = pool.asker("one", thinking="off", max_tokens=8)
        (reply,) = ask([Call("judge_response", {"question": "q", "answer": scripted("<think>long", finish="length")})])
        assert (reply.text, reply.budget_exhausted, reply.finish_reason) == ("", True, "length")

    def test_one_model_at_a_time(self, pool: model_pool.ModelPool) -> None:
        """Asking another model closes the first model's connection."""
        pool.asker("one", thinking=None, max_tokens=8)([Call("judge_response", {"question": "1", "answer": "x"})])
        first = pool.client("one")
        pool.asker("two", thinking=None, max_tokens=8)([Call("judge_response", {"question": "2", "answer": "x"})])
        assert pool.client("two") is not first and pool._current and pool._current[0] == "two"

    def test_unknown_model(self, pool: model_pool.ModelPool) -> None:
        """An unknown model id names the models file."""
        with pytest.raises(ValueError, match="no model 'three'"):
            pool.spec("three")


class TestRewriter:
    def test_first_line_or_empty(self, pool: model_pool.ModelPool) -> None:
        """The rewrite is the reply's first line; an empty reply gives '' (the retriever falls back)."""
        rewrite = model_pool.rewriter(pool.asker("one", thinking=None, max_tokens=8))
        assert rewrite([scripted("copper golem health\nmore"), scripted("  ")]) == ["copper golem health", ""]
