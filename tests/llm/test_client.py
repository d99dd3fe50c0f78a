"""Tests for declinecraft.llm.client against a fake OpenAI-compatible server: cache, retries, failures,
thinking, JSON, secrets, resume after kill -9."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.core import registry
from declinecraft.llm import cache, serve
from declinecraft.llm.cache import Cache
from declinecraft.llm.client import (
    REASONING_PROMPT,
    Client,
    LLMError,
    Request,
    Result,
    RetryPolicy,
    Unreachable,
    client_for,
    connect,
    results_frame,
    run_batch,
    summary,
)
from declinecraft.llm.supervisor import LocalServer
from declinecraft.llm.transport import run_sync
from tests.support import fake_openai, llm_worker, model_specs, projects

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05, timeout_s=5.0)


KEY_ENV = "DECLINECRAFT_TEST_API_KEY"


PLANTED = "planted-secret-7f3a9c1e5b2d4f60-DO-NOT-LEAK"


def directive(text: str, **script: object) -> str:
    """A message that scripts the fake server's behaviour."""
    return f"{text} [[fake {json.dumps(script)}]]"


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Cache]:
    with cache.open_cache(tmp_path) as db:
        yield db


@pytest.fixture()
def client(server: fake_openai.FakeServer, store: Cache) -> Iterator[Client]:
    c = client_for(model_specs.spec(), store, server.base_url, retry=FAST)
    yield c
    c.close()


def ask(client: Client, *texts: str, **options: object) -> list[Result]:
    requests = [Request.from_text(t, max_tokens=16, **options) for t in texts]  # type: ignore[arg-type]
    return run_batch(client, requests, progress=False)


class TestRunBatch:
    def test_order_and_text(self, client: Client) -> None:
        """Results come back in request order with the server's answer."""
        results = ask(client, "a", "b", "c")
        assert [r.text for r in results] == ["echo: a", "echo: b", "echo: c"]
        assert all(r.ok and not r.cached and r.attempts == 1 and r.finish_reason == "stop" for r in results)

    def test_cached_never_resent(self, client: Client, server: fake_openai.FakeServer) -> None:
        """A second run answers from the cache: same results, zero new requests."""
        first = ask(client, "cache-me-1", "cache-me-2")
        before = server.stats()["by_text"]
        second = ask(client, "cache-me-1", "cache-me-2")
        assert [r.text for r in second] == [r.text for r in first] and all(r.cached for r in second)
        assert server.stats()["by_text"] == before

    def test_duplicates_sent_once(self, client: Client, server: fake_openai.FakeServer) -> None:
        """Identical requests in one batch are sent once; each keeps its own tag."""
        requests = [Request.from_text("dup-x", max_tokens=16, tag=f"row{i}") for i in range(3)]
        results = run_batch(client, requests, progress=False)
        assert [r.tag for r in results] == ["row0", "row1", "row2"]
        assert len({r.key for r in results}) == 1
        assert server.stats()["by_text"]["dup-x"] == 1

    def test_duplicates_across_windows(self, client: Client, server: fake_openai.FakeServer) -> None:
        """Repeats far apart (beyond the window) are sent once too, results in request order."""
        texts = [f"win-{i % 5}" for i in range(40)]
        results = run_sync(client.arun((Request.from_text(t, max_tokens=16) for t in texts), progress=False, window=3))
        assert [r.text for r in results] == [f"echo: {t}" for t in texts]
        assert not any(r.cached for r in results)
        assert all(server.stats()["by_text"][f"win-{i}"] == 1 for i in range(5))

    def test_inside_running_loop(self, client: Client) -> None:
        """Works where an event loop is already running (Jupyter)."""

        async def notebook_cell() -> list[Result]:
            return ask(client, "from-jupyter")

        assert asyncio.run(notebook_cell())[0].text == "echo: from-jupyter"

    def test_progress_bar(self, client: Client, capsys: pytest.CaptureFixture[str]) -> None:
        """The bar reports cache hits and failures."""
        ask(client, "bar-1")
        texts = ("bar-1", directive("bar-2", status=500))
        run_batch(client, [Request.from_text(t, max_tokens=16) for t in texts])
        err = capsys.readouterr().err
        assert "cached=1" in err and "failed=1" in err and "call/s" in err

    def test_concurrency_bound(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """No more than ModelSpec.concurrency() requests are in flight per base URL."""
        slow = [directive(f"slow-{i}", sleep=0.05) for i in range(12)]
        c = client_for(model_specs.spec(max_concurrency=2), store, server.base_url, retry=FAST)
        server.reset()
        ask(c, *slow)
        assert server.stats()["max_inflight"] == 2

    def test_replicas_balanced(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """Several base URLs of one model share the load."""
        other = fake_openai.start(latency=0.01)
        try:
            server.reset()
            c = client_for(model_specs.spec(max_concurrency=4), store, [server.base_url, other.base_url], retry=FAST)
            ask(c, *(directive(f"replica-{i}", sleep=0.01) for i in range(80)))
            counts = server.stats()["requests"], other.stats()["requests"]
        finally:
            other.stop()
        assert sum(counts) == 80 and min(counts) >= 20


class TestFailures:
    def test_429_then_success(self, client: Client, server: fake_openai.FakeServer) -> None:
        """A 429 is retried; the answer records two attempts."""
        text = directive("rate-limited", status=429, times=1)
        (result,) = ask(client, text)
        assert result.ok and result.attempts == 2
        assert server.stats()["by_text"][text] == 2

    def test_500_forever(self, client: Client, server: fake_openai.FakeServer, store: Cache) -> None:
        """5xx on every attempt becomes a recorded failure, not re-sent unless asked."""
        text = directive("broken", status=500)
        (result,) = ask(client, text)
        assert not result.ok and result.attempts == 3 and "HTTP 500" in (result.error or "")
        assert store.count("failed") == 1
        (again,) = ask(client, text)
        assert again.cached and not again.ok and server.stats()["by_text"][text] == 3
        request = Request.from_text(text, max_tokens=16)
        (retried,) = run_batch(client, [request], progress=False, retry_failures=True)
        assert not retried.cached and server.stats()["by_text"][text] == 6

    def test_400_not_retried(self, client: Client) -> None:
        """A client error fails at once."""
        (result,) = ask(client, directive("bad request", status=400))
        assert not result.ok and result.attempts == 1 and "HTTP 400" in (result.error or "")

    def test_malformed_body(self, client: Client) -> None:
        """A body that is not a completion is retried, then recorded as malformed."""
        (result,) = ask(client, directive("garbled", malformed=True))
        assert not result.ok and result.attempts == 3 and "malformed response body" in (result.error or "")

    def test_connection_refused(self, store: Cache) -> None:
        """Nothing listening at a client's first call (the probe): Unreachable at once, nothing
        recorded. Once a client has been answered, a refused connection is a recorded failure."""
        c = client_for(model_specs.spec(), store, f"http://127.0.0.1:{serve.free_port()}/v1", retry=FAST)
        with pytest.raises(Unreachable, match=r"model 'fake-model': nothing answers at http://127\.0\.0\.1:"):
            ask(c, "anyone?", "else?")
        assert store.count() == 0
        c._reached = True  # as after an answered call: the server went away later
        (result,) = ask(c, "anyone?")
        assert not result.ok and result.attempts == 3 and "connection error" in (result.error or "")

    def test_timeout(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A server slower than the timeout: a recorded timeout."""
        policy = RetryPolicy(max_attempts=2, base_delay_s=0.01, timeout_s=0.2)
        c = client_for(model_specs.spec(), store, server.base_url, retry=policy)
        (result,) = ask(c, directive("too slow", sleep=1.0))
        assert not result.ok and result.attempts == 2 and "timeout after 0.2 s" in (result.error or "")


class TestThinking:
    def test_think_tags(self, client: Client) -> None:
        """<think> blocks are stored apart from the answer."""
        (result,) = ask(client, directive("tags", reply="<think>let me see</think>\nFinal."))
        assert (result.text, result.thinking) == ("Final.", "let me see")
        assert result.raw_text == "<think>let me see</think>\nFinal."

    @pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
    def test_reasoning_field(self, client: Client, field: str) -> None:
        """vLLM's reasoning_content and OpenRouter's reasoning both become the thinking."""
        (result,) = ask(client, directive(f"field {field}", reply="Answer.", reasoning="trace", reasoning_key=field))
        assert (result.text, result.thinking) == ("Answer.", "trace")

    def test_budget_exhausted(self, client: Client) -> None:
        """Length stop inside an unclosed <think>: flagged, answer empty."""
        (result,) = ask(client, directive("endless", reply="<think>hmm hmm", finish="length"))
        assert result.ok and result.budget_exhausted and result.text == "" and result.thinking == "hmm hmm"
        assert summary([result])["budget_exhausted"] == 1

    def test_switch_sent(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A switchable model gets its switch in the body, and on/off are different calls."""
        s = model_specs.spec(thinking="switchable", thinking_switch="chat_template_kwargs.enable_thinking")
        c = client_for(s, store, server.base_url, retry=FAST)
        on, off = (ask(c, "switch me", thinking=mode)[0] for mode in ("on", "off"))
        bodies = [b for b in server.stats()["bodies"] if b["messages"][-1]["content"] == "switch me"]
        assert [b["chat_template_kwargs"] for b in bodies] == [{"enable_thinking": True}, {"enable_thinking": False}]
        assert (on.thinking_mode, off.thinking_mode) == ("on", "off") and on.key != off.key

    def test_prompt_mode(self, server: fake_openai.FakeServer, client: Client) -> None:
        """thinking='prompt' adds the labeled reasoning instruction as a system message."""
        (result,) = ask(client, "reason via prompt", thinking="prompt")
        body = [b for b in server.stats()["bodies"] if b["messages"][-1]["content"] == "reason via prompt"][-1]
        assert body["messages"][0] == {"role": "system", "content": REASONING_PROMPT}
        assert result.thinking_mode == "prompt"


class TestJson:
    def test_parsed_and_lost(self, client: Client, server: fake_openai.FakeServer) -> None:
        """json_mode asks for a JSON object, parses leniently and counts what is lost to format."""
        texts = [directive("j1", reply='```json\n{"facts": ["a",],}\n```'), directive("j2", reply="Sorry, no.")]
        results = ask(client, *texts, json_mode=True)
        assert results[0].parsed == {"facts": ["a"]} and not results[0].lost_to_format
        assert results[1].parsed is None and results[1].lost_to_format and results[1].ok
        assert summary(results)["lost_to_format"] == 1
        body = [b for b in server.stats()["bodies"] if b["messages"][-1]["content"] == texts[0]][-1]
        assert body["response_format"] == {"type": "json_object"}

    def test_no_response_format(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A model marked response_format: false gets no response_format field."""
        c = client_for(model_specs.spec(extra={"response_format": False}), store, server.base_url, retry=FAST)
        ask(c, "plain json please", json_mode=True)
        body = [b for b in server.stats()["bodies"] if b["messages"][-1]["content"] == "plain json please"][-1]
        assert "response_format" not in body


class TestClientFor:
    def test_local_needs_url(self, store: Cache) -> None:
        """A local model without a base URL says how to get one."""
        with pytest.raises(LLMError, match=r"'fake' \(vllm\) has no base URL: pass base_url=serve.start"):
            client_for(model_specs.spec(), store)

    def test_missing_key(self, store: Cache) -> None:
        """A hosted model whose key variable is unset names the variable, not a value."""
        s = model_specs.spec(backend="openai", base_url="https://example.invalid/v1", api_key_env=KEY_ENV)
        with pytest.raises(LLMError, match=rf"environment variable {KEY_ENV} \(its API key\) is not set"):
            client_for(s, store, environ={})

    def test_secret_never_written(
        self,
        server: fake_openai.FakeServer,
        store: Cache,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """The planted key reaches the server but no cache file, output, log or repr."""
        monkeypatch.setenv(KEY_ENV, PLANTED)
        caplog.set_level(logging.DEBUG)
        s = model_specs.spec(backend="openai", base_url=server.base_url, api_key_env=KEY_ENV)
        c = client_for(s, store, retry=FAST)
        texts = ("secret ok", directive("secret 500", status=500), directive("secret bad", status=400))
        results = run_batch(c, [Request.from_text(t, max_tokens=8) for t in texts])
        c.close()
        assert f"Bearer {PLANTED}" in server.stats()["auth"]
        out = tmp_path / "out.parquet"
        results_frame(results).write_parquet(out)
        files = [p for p in store.path.parent.iterdir() if p.is_file()] + [out]
        assert any(p.name.endswith("-wal") for p in files) or store.count() == 3
        for path in files:
            assert PLANTED.encode() not in path.read_bytes(), path
        seen = caplog.text + capsys.readouterr().err + repr(c) + repr(c._sender) + repr(results)
        assert PLANTED not in seen


class TestConnect:
    def test_server_started_lazily(
        self, server: fake_openai.FakeServer, store: Cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A fully cached batch starts no server; the first miss starts one, stopped on exit."""
        started: list[str] = []

        class FakeLocal:
            base_url = server.base_url

            def stop(self) -> None:
                started.append("stopped")

        def fake_start(s: registry.ModelSpec, cache_dir: Path) -> FakeLocal:
            started.append(s.id)
            return FakeLocal()

        monkeypatch.setattr(serve, "start", fake_start)
        # The key of a server the project starts names its engine, read from the cache folder.
        warm = client_for(
            model_specs.spec(), store, server.base_url, retry=FAST, server=LocalServer(model_specs.spec(), tmp_path)
        )
        ask(warm, "lazy-1")
        with connect(model_specs.spec(), store, tmp_path, retry=FAST) as c:
            assert ask(c, "lazy-1")[0].cached and started == []
            assert ask(c, "lazy-2")[0].text == "echo: lazy-2"
            assert started == ["fake"]
        assert started == ["fake", "stopped"]


@pytest.mark.slow
class TestLlamaCpp:
    def test_real_server(self, root: Path, tmp_path: Path) -> None:
        """The embedded default: a real llama.cpp server, started lazily, answers and is replayed."""
        spec = registry.get_model(root / "params" / "models.yaml", "smollm2-135m")
        requests = [
            Request.from_text("What is 2+2? Answer briefly.", max_tokens=16),
            Request.from_text('Return a JSON object with key "color" set to "red".', max_tokens=48, json_mode=True),
            Request.from_text("Write a long story about a cat.", max_tokens=4),
        ]
        with cache.open_cache(tmp_path) as store, connect(spec, store, tmp_path) as client:
            first = client.run(requests, progress=False)
            again = client.run(requests, progress=False)
        assert all(r.ok and r.text and r.completion_tokens for r in first), first
        assert first[2].finish_reason == "length" and first[1].json_mode
        assert [r.cached for r in again] == [True] * 3 and [r.text for r in again] == [r.text for r in first]


class TestSummaryCounts:
    def test_counts(self, client: Client) -> None:
        """A batch's summary counts calls, cache hits, sends and failures."""
        ask(client, "sum-1")
        results = ask(client, "sum-1", "sum-2", directive("sum-3", status=500))
        assert summary(results) == {
            "calls": 3,
            "cached": 1,
            "sent": 2,
            "failed": 1,
            "budget_exhausted": 0,
            "lost_to_format": 0,
        }
        assert results_frame(results)["key"].to_list() == [r.key for r in results]


def rows(db: Path) -> int:
    """Rows in a cache file another process is writing (0 before it exists)."""
    if not db.exists():
        return 0
    with Cache(db) as store:
        return store.count()


class TestResume:
    def test_kill_9(self, tmp_path: Path) -> None:
        """kill -9 mid-batch, rerun: every call once in the cache; answered calls never re-sent."""
        server = fake_openai.start(latency=0.02)
        db = tmp_path / "calls.sqlite"
        worker = [sys.executable, "-m", "tests.support.llm_worker"]
        n, concurrency = 2000, 16
        try:
            proc = subprocess.Popen(
                [*worker, server.base_url, str(db), "0", str(n), "--concurrency", str(concurrency)],
                cwd=projects.REPO,
                stdout=subprocess.PIPE,
            )
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and rows(db) < 300:
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            with Cache(db) as store:
                before = set(
                    store.fetch(
                        Client(llm_worker.worker_spec(concurrency), store, ["x"]).key(r)
                        for r in llm_worker.batch_requests(0, n)
                    )
                )
            assert 300 <= len(before) < n, "the worker was not killed mid-batch"
            with Cache(db) as store:
                client = client_for(llm_worker.worker_spec(concurrency), store, server.base_url)
                results = run_batch(client, llm_worker.batch_requests(0, n), progress=False)
                client.close()
                assert store.count() == n and store.count("ok") == n
            counts = server.stats()["by_text"]
        finally:
            server.stop()
        assert all(r.ok for r in results) and {r.cached for r in results if r.key in before} == {True}
        assert len(counts) == n
        resent = sum(counts.values()) - n
        assert all(counts[f"call {i}"] == 1 for i, r in enumerate(results) if r.key in before)
        assert 0 <= resent <= concurrency  # only calls in flight at the kill were sent twice


class TestTwoProcesses:
    def test_same_cache(self, tmp_path: Path) -> None:
        """Two processes filling one cache at once: no lock errors, every call stored once."""
        server = fake_openai.start(latency=0.005)
        db = tmp_path / "calls.sqlite"
        worker = [sys.executable, "-m", "tests.support.llm_worker"]
        try:
            procs = [
                subprocess.Popen(
                    [*worker, server.base_url, str(db), a, b],
                    cwd=projects.REPO,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for a, b in (("0", "1000"), ("500", "1500"))
            ]
            outs = [p.communicate(timeout=120) for p in procs]
        finally:
            server.stop()
        assert [p.returncode for p in procs] == [0, 0], outs
        assert not any("locked" in err for _, err in outs)
        assert [json.loads(out)["failed"] for out, _ in outs] == [0, 0]
        with Cache(db) as store:
            assert store.count() == 1500 and store.count("ok") == 1500


class TestEntryLimits:
    def test_retries_from_entry(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """An entry's max_retries and max_retry_after_s set the retry policy (none is fixed in code)."""
        c = client_for(model_specs.spec(extra={"max_retries": 1, "max_retry_after_s": 0.01}), store, server.base_url)
        try:
            assert c._sender.retry.max_attempts == 2 and c._sender.retry.max_delay_s == 0.01
            (result,) = ask(c, directive("limits-500", status=500))
        finally:
            c.close()
        assert not result.ok and result.attempts == 2

    def test_rate_limits_from_entry(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """Calls of an entry with rate limits go through its throttle and are answered."""
        c = client_for(
            model_specs.spec(extra={"requests_per_minute": 6000, "tokens_per_minute": 10**6}), store, server.base_url
        )
        try:
            assert all(r.ok for r in ask(c, "limited-a", "limited-b"))
        finally:
            c.close()


class TestStream:
    def test_requests_built_lazily(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A generator of 100,000 requests is read a window at a time: after 200 results no more
        than 200 + the window have been built, and no more than the concurrency were in flight."""
        built = 0

        def requests() -> Iterator[Request]:
            nonlocal built
            for i in range(100_000):
                built += 1
                yield Request.from_text(f"lazy-{i}", max_tokens=8)

        async def first(n: int) -> list[Result]:
            got: list[Result] = []
            stream = c.astream(requests(), progress=False, window=32)
            async with contextlib.aclosing(stream):
                async for result in stream:
                    got.append(result)
                    assert built <= len(got) + 32
                    if len(got) == n:
                        break
            return got

        c = client_for(model_specs.spec(max_concurrency=4), store, server.base_url, retry=FAST)
        server.reset()
        got = run_sync(first(200))
        c.close()
        assert [r.text for r in got] == [f"echo: lazy-{i}" for i in range(200)]
        assert built <= 200 + 32 and server.stats()["max_inflight"] <= 4
        assert server.stats()["requests"] <= 200 + 32  # the rest of the window at most, then cancelled
