"""Tests for declinecraft.llm.pool against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.llm import batch_files
from declinecraft.llm.calls import Call
from declinecraft.llm.client import BudgetExceeded, Request, Result, Unreachable
from declinecraft.llm.pool import ModelFailed, ModelPool, Tally, check_failures, rewriter, to_reply
from tests.support import fake_openai


@pytest.fixture()
def pool(project: Path, server: fake_openai.FakeServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelPool]:
    """A pool over two 'vLLM' models both answered by the fake server, caching in the project."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
    (project / "params" / "prompts").mkdir()
    for name in ("judge_response", "rewrite_query"):
        placeholder = "{question} {answer}" if name == "judge_response" else "{query}"
        (project / "params" / "prompts" / f"{name}.txt").write_text(f"# section: test\n---\nQ: {placeholder}\n")
    entries = {m: {"backend": "vllm", "served_name": m, "base_url": server.base_url} for m in ("one", "two")}
    (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
    with ModelPool(config.load(project / "params" / "default.yaml")) as p:
        yield p


def scripted(reply: str, **extra: object) -> str:
    """A field value that makes the fake server answer ``reply``."""
    return f"[[fake {json.dumps({'reply': reply, **extra})}]]"


class TestToReply:
    def test_failure(self) -> None:
        """A failed result keeps its error and no text."""
        result = Result(
            key="k",
            model_id="m",
            tag="",
            status="failed",
            text="",
            thinking="",
            raw_text="",
            thinking_mode="off",
            finish_reason=None,
            budget_exhausted=False,
            prompt_tokens=None,
            completion_tokens=None,
            latency_s=None,
            attempts=3,
            error="HTTP 500",
            cached=False,
            created_at="",
            prompt_version="v",
        )
        reply = to_reply(result)
        assert (reply.text, reply.error, reply.cache_key) == ("", "HTTP 500", "k")


class TestModelPool:
    def test_thinking_split_and_cache(self, pool: ModelPool, server: fake_openai.FakeServer) -> None:
        """Thinking is split from the answer; a second run of the same calls is served from the cache."""
        ask = pool.asker("one", thinking="off", max_tokens=8)
        calls = [Call("judge_response", {"question": "q", "answer": scripted("<think>hm</think>ABSTAIN")})]
        (first,) = ask(calls)
        sent = server.stats()["requests"]
        (again,) = ask(calls)
        assert (first.text, first.thinking, first.cache_key) == ("ABSTAIN", "hm", again.cache_key)
        assert server.stats()["requests"] == sent

    def test_history_appended(self, pool: ModelPool) -> None:
        """A re-ask sends the history turns after the rendered prompt (the fake echoes the last one)."""
        ask = pool.asker("one", thinking="off", max_tokens=8)
        (reply,) = ask(
            [
                Call(
                    "judge_response",
                    {"question": "q", "answer": "a"},
                    history=(("assistant", "hm"), ("user", "ONE WORD")),
                )
            ]
        )
        assert reply.text == "echo: ONE WORD"

    def test_budget_exhausted(self, pool: ModelPool) -> None:
        """A reply cut at the token limit inside its thinking is budget exhausted."""
        ask = pool.asker("one", thinking="off", max_tokens=8)
        (reply,) = ask([Call("judge_response", {"question": "q", "answer": scripted("<think>long", finish="length")})])
        assert (reply.text, reply.budget_exhausted, reply.finish_reason) == ("", True, "length")

    def test_one_model_at_a_time(self, pool: ModelPool) -> None:
        """Asking another model closes the first model's connection."""
        pool.asker("one", thinking=None, max_tokens=8)([Call("judge_response", {"question": "1", "answer": "x"})])
        first = pool.client("one")
        pool.asker("two", thinking=None, max_tokens=8)([Call("judge_response", {"question": "2", "answer": "x"})])
        assert pool.client("two") is not first and pool._current and pool._current[0] == "two"

    def test_unknown_model(self, pool: ModelPool) -> None:
        """An unknown model id names the models file."""
        with pytest.raises(ValueError, match="no model 'three'"):
            pool.spec("three")


class TestRewriter:
    def test_first_line_or_empty(self, pool: ModelPool) -> None:
        """The rewrite is the reply's first line; an empty reply gives '' (the retriever falls back)."""
        rewrite = rewriter(pool.asker("one", thinking=None, max_tokens=8))
        assert rewrite([scripted("copper golem health\nmore"), scripted("  ")]) == ["copper golem health", ""]


def tallies(**counts: tuple[int, int]) -> dict[str, Tally]:
    """Tallies of (calls, failed) per model, each failure's error 'HTTP 400: first'."""
    return {m: Tally(calls, failed, "HTTP 400: first" if failed else "") for m, (calls, failed) in counts.items()}


class TestCheckFailures:
    def test_all_failed(self) -> None:
        """A model whose every call failed fails the stage, whatever the tolerance."""
        with pytest.raises(
            ModelFailed, match=r"model 'x': 3 of 3 calls failed \(every call.*first error: HTTP 400: first"
        ):
            check_failures(tallies(ok=(5, 0), x=(3, 3)), 1.0)

    @pytest.mark.parametrize(
        ("calls", "failed", "share", "fails"),
        [(100, 10, 0.1, False), (100, 11, 0.1, True), (100, 1, 0.0, True), (100, 0, 0.0, False)],
    )
    def test_share(self, calls: int, failed: int, share: float, fails: bool) -> None:
        """Failures beyond the share fail the stage; up to it they are counted and let through."""
        if fails:
            with pytest.raises(ModelFailed, match=rf"model 'm': {failed} of {calls} calls failed"):
                check_failures(tallies(m=(calls, failed)), share)
        else:
            check_failures(tallies(m=(calls, failed)), share)


class TestModelPoolFailures:
    def test_failed_model_fails_close(self, pool: ModelPool) -> None:
        """Every call of a model failed: closing the pool (the stage's end) raises, naming it."""
        ask = pool.asker("one", thinking=None, max_tokens=8)
        replies = ask([Call("rewrite_query", {"query": scripted("x", status=400) + str(i)}) for i in range(2)])
        assert [r.error is not None for r in replies] == [True, True]
        assert pool.tallies["one"] == Tally(2, 2, replies[0].error or "")
        with pytest.raises(ModelFailed, match=r"model 'one': 2 of 2 calls failed .*first error: HTTP 400"):
            pool.close()

    def test_no_check_over_another_error(self, pool: ModelPool) -> None:
        """A pool closed while another error propagates keeps that error."""
        pool.asker("one", thinking=None, max_tokens=8)([Call("rewrite_query", {"query": scripted("x", status=400)})])
        with pytest.raises(KeyError):
            try:
                raise KeyError("first")
            finally:
                pool.close()

    @pytest.mark.parametrize("retry", [True, False])
    def test_failures_retried_next_run(
        self, project: Path, server: fake_openai.FakeServer, pool: ModelPool, retry: bool
    ) -> None:
        """A call that failed in one run is re-sent by the next (unless llm.retry_failures is false),
        but not again within the run that recorded it."""
        call = Call("rewrite_query", {"query": scripted("fine now", status=400, times=1) + str(retry)})
        (first,) = pool.asker("one", thinking=None, max_tokens=8)([call])
        (same_run,) = pool.asker("one", thinking=None, max_tokens=8)([call])
        assert first.error and same_run.error
        pool.tallies.clear()
        pool.close()
        if not retry:
            text = (project / "params" / "default.yaml").read_text()
            (project / "params" / "default.yaml").write_text(text + "\nllm:\n  retry_failures: false\n")
        sent = server.stats()["requests"]
        with ModelPool(config.load(project / "params" / "default.yaml")) as later:
            (again,) = later.asker("one", thinking=None, max_tokens=8)([call])
            later.tallies.clear()
        assert (again.error is None, server.stats()["requests"] - sent) == ((True, 1) if retry else (False, 0))


class TestModelPoolBudget:
    def test_run_budget_stops_and_resumes(self, project: Path, server: fake_openai.FakeServer, pool: ModelPool) -> None:
        """The params' llm.budget_tokens reaches every call of the stage's pool: 0 sends nothing and
        stops the stage; a run's spend is counted under its name; raised, the stage answers."""
        pool.close()
        params = project / "params" / "default.yaml"
        base = params.read_text()
        call = Call("rewrite_query", {"query": "budgeted"})
        sent = server.stats()["requests"]
        params.write_text(base + "\nllm:\n  budget_tokens: 0\n")
        with pytest.raises(BudgetExceeded, match=r"llm\.budget_tokens is 0: nothing is sent.*run 'default'"):
            with ModelPool(config.load(params)) as zero:
                zero.asker("one", thinking=None, max_tokens=8)([call])
        assert server.stats()["requests"] == sent
        params.write_text(base + "\nllm:\n  budget_tokens: 10000\n")
        with ModelPool(config.load(params)) as later:
            (reply,) = later.asker("one", thinking=None, max_tokens=8)([call])
            assert reply.error is None and later.budget.spent_tokens > 0
            assert later.cache.spend_totals("default")[0]["model"] == "one"


class TestModelPoolExport:
    def test_exported_calls_stop_the_stage(
        self, pool: ModelPool, server: fake_openai.FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Under make batch-export the stage's uncached calls of every model are written, none is sent,
        and the stage's end stops it with BatchExported (not a tolerated share of failures)."""
        monkeypatch.setenv(batch_files.EXPORT_ENV, str(tmp_path / "batches"))
        monkeypatch.setattr(batch_files, "_written", {})
        sent = server.stats()["requests"]
        for model in ("one", "two"):
            (reply,) = pool.asker(model, thinking=None, max_tokens=8)([Call("rewrite_query", {"query": "export me"})])
            assert reply.error and "make batch-export" in reply.error
        assert server.stats()["requests"] == sent
        assert sorted(p.name for p in (tmp_path / "batches").glob("*.jsonl")) == [
            "one.calls.jsonl",
            "one.jsonl",
            "two.calls.jsonl",
            "two.jsonl",
        ]
        with pytest.raises(batch_files.BatchExported, match=r"one\.jsonl \(1 calls\).*two\.jsonl \(1 calls\)"):
            pool.close()


class TestProbe:
    def test_nothing_listening(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A base URL where nothing listens: Unreachable at once (no retries), nothing recorded."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        entries = {"x": {"backend": "openai", "served_name": "x", "base_url": "http://127.0.0.1:9/v1"}}
        (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
        with ModelPool(config.load(project / "params" / "default.yaml")) as p:
            start = time.monotonic()
            with pytest.raises(Unreachable, match=r"model 'x': nothing answers at http://127\.0\.0\.1:9/v1"):
                p.client("x").run([Request.from_text(f"q{i}", max_tokens=8) for i in range(5)], progress=False)
            assert time.monotonic() - start < 5 and p.cache.count() == 0
