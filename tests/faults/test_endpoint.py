"""Fault suite: a hosted endpoint that misbehaves, and a local server killed under a batch.

Each fault has a counted outcome: attempts per call, what was recorded (answer or failure), what a
rerun re-sends, and for rate limits the time actually waited against ``Retry-After``."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest

from declinecraft.core import registry
from declinecraft.llm import cache, serve
from declinecraft.llm.cache import Cache
from declinecraft.llm.client import Client, LLMError, Request, Result, RetryPolicy, client_for, connect, summary
from tests.support import fake_openai, faults

pytestmark = pytest.mark.faults


RETRY = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=5.0, timeout_s=5.0)


def hosted(**changes: object) -> registry.ModelSpec:
    """A hosted OpenAI-compatible model (the fake server stands in for OpenRouter)."""
    values: dict[str, object] = {"id": "hosted", "backend": "openai", "served_name": "vendor/model"}
    return registry.ModelSpec(**{**values, **changes})  # type: ignore[arg-type]


def scripted(text: str, **script: object) -> str:
    return f"{text} [[fake {json.dumps(script)}]]"


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Cache]:
    with cache.open_cache(tmp_path) as db:
        yield db


def ask(client: Client, text: str, max_tokens: int = 16) -> Result:
    return client.run([Request.from_text(text, max_tokens=max_tokens)], progress=False)[0]


class TestHostedMisbehaviour:
    def test_429_retry_after_respected(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """429 with Retry-After: 1.2 once: answered on attempt 2, after waiting at least 1.2 s."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        start = time.monotonic()
        result = ask(client, scripted("rate", status=429, retry_after=1.2, times=1))
        waited = time.monotonic() - start
        assert result.ok and result.attempts == 2 and result.text.startswith("echo: rate")
        assert waited >= 1.2, waited

    @pytest.mark.parametrize("burst", [[500, 502, 503], [503, 503]])
    def test_5xx_burst(self, server: fake_openai.FakeServer, store: Cache, burst: list[int]) -> None:
        """A burst of 5xx answers: retried through, answered on attempt len(burst) + 1."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        result = ask(client, scripted(f"burst-{burst}", statuses=burst))
        assert result.ok and result.attempts == len(burst) + 1

    def test_5xx_beyond_attempts_is_a_recorded_failure(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """503 on every attempt: one failed record with the status, counted, not re-sent on rerun."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        text = scripted("down", status=503)
        first = ask(client, text)
        before = server.stats()["by_text"][text]
        again = ask(client, text)
        assert not first.ok and first.attempts == RETRY.max_attempts and "HTTP 503" in (first.error or "")
        assert again.cached and not again.ok and server.stats()["by_text"][text] == before == RETRY.max_attempts
        assert summary([first])["failed"] == 1

    def test_connection_reset_mid_body(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """Headers and part of a body, then a cut connection (twice): answered on attempt 3."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        result = ask(client, scripted("reset", reset=True, times=2))
        assert result.ok and result.attempts == 3 and result.text.startswith("echo: reset")

    def test_malformed_json_200(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A 200 whose body is not JSON: retried; once forever malformed, a failure naming it."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        healed = ask(client, scripted("bad-json-once", malformed=True, times=1))
        broken = ask(client, scripted("bad-json", malformed=True))
        assert healed.ok and healed.attempts == 2
        assert not broken.ok and "malformed response body" in (broken.error or "")

    def test_cut_at_max_tokens(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """finish_reason length: an answer kept with its finish reason; only-thinking is exhausted."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        cut = ask(client, scripted("cut", reply="The answer is", finish="length"))
        thinking_only = ask(client, scripted("cut-think", reply="<think>still going", finish="length"))
        assert cut.ok and cut.finish_reason == "length" and cut.text == "The answer is" and not cut.budget_exhausted
        assert thinking_only.budget_exhausted and thinking_only.text == ""
        assert summary([cut, thinking_only])["budget_exhausted"] == 1

    @pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
    def test_reasoning_with_empty_content(self, server: fake_openai.FakeServer, store: Cache, field: str) -> None:
        """A reasoning field and empty content: the trace kept apart, the answer '' (not a failure)."""
        client = client_for(hosted(), store, server.base_url, retry=RETRY)
        result = ask(client, scripted(f"empty-{field}", reply="", reasoning="Let me think.", reasoning_key=field))
        assert result.ok and result.attempts == 1 and result.text == "" and result.thinking == "Let me think."
        assert not result.budget_exhausted  # finish "stop": an empty answer, which the judge labels


class TestRetryAfterHeader:
    @pytest.mark.parametrize(
        ("headers", "expected"),
        [
            ({"retry-after": "3"}, 3.0),
            ({"retry-after-ms": "250"}, 0.25),
            ({"retry-after": "soon"}, None),
            ({}, None),
        ],
    )
    def test_parsed(self, headers: dict[str, str], expected: float | None) -> None:
        """Seconds, milliseconds, and unreadable values (ignored: the backoff applies)."""
        import httpx2

        from declinecraft.llm import transport

        assert transport._retry_after(httpx2.Response(429, headers=headers)) == expected

    def test_http_date(self) -> None:
        """An HTTP-date Retry-After gives the seconds until that date."""
        from datetime import datetime, timedelta
        from email.utils import format_datetime

        import httpx2

        from declinecraft.llm import transport

        when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
        assert 25 <= (transport._retry_after(httpx2.Response(429, headers={"retry-after": when})) or 0) <= 30


class _FakeLocal:
    """A 'local server' that is a fake OpenAI process: its pid can be killed like llama.cpp's."""

    def __init__(self, log_dir: Path) -> None:
        self.handle = fake_openai.start(latency=0.2)
        self.process = self.handle.process
        self.base_url = self.handle.base_url
        self.log_file = log_dir / f"fake-{self.handle.port}.log"

    def stop(self) -> None:
        self.handle.stop()


class TestLocalServerKilled:
    def test_restarted_and_nothing_lost(self, tmp_path: Path, store: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
        """Server pid killed mid-batch: restarted once, every call answered once, none failed."""
        started: list[_FakeLocal] = []
        monkeypatch.setattr(serve, "start", lambda spec, cache_dir: started.append(_FakeLocal(tmp_path)) or started[-1])
        spec = registry.ModelSpec(id="local", backend="llamacpp", served_name="local", max_concurrency=2)
        texts = [f"q{i}" for i in range(12)]
        with connect(spec, store, tmp_path, retry=RETRY) as client:
            first = client.run([Request.from_text(t, max_tokens=8) for t in texts[:2]], progress=False)
            os.kill(started[0].process.pid, signal.SIGKILL)  # between batches
            results = client.run([Request.from_text(t, max_tokens=8) for t in texts], progress=False)
            restarts = client.server.restarts if client.server else -1
        assert all(r.ok for r in first + results) and [r.cached for r in results[:2]] == [True, True]
        assert len(started) == 2 and restarts == 1
        assert store.count("failed") == 0 and store.count("ok") == len(texts)

    def test_killed_in_flight(self, tmp_path: Path, store: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
        """Killed while calls are in flight: the lost calls are re-sent to the new server."""
        import threading

        started: list[_FakeLocal] = []
        monkeypatch.setattr(serve, "start", lambda spec, cache_dir: started.append(_FakeLocal(tmp_path)) or started[-1])
        spec = registry.ModelSpec(id="local", backend="llamacpp", served_name="local", max_concurrency=2)
        requests = [Request.from_text(f"inflight-{i}", max_tokens=8) for i in range(10)]
        killer = threading.Timer(0.5, lambda: os.kill(started[0].process.pid, signal.SIGKILL))
        with connect(spec, store, tmp_path, retry=RETRY) as client:
            killer.start()
            results = client.run(requests, progress=False)
        killer.join()
        assert all(r.ok for r in results) and len(started) == 2
        assert store.count("failed") == 0 and store.count("ok") == len(requests)

    def test_gives_up_naming_model_and_log(self, tmp_path: Path, store: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
        """A server that keeps dying: after max_restarts the batch fails naming model and log file."""
        started: list[_FakeLocal] = []

        def start(spec: registry.ModelSpec, cache_dir: Path) -> _FakeLocal:
            started.append(_FakeLocal(tmp_path))
            if len(started) > 1:  # every restarted server dies at once
                os.kill(started[-1].process.pid, signal.SIGKILL)
                started[-1].process.wait()
            return started[-1]

        monkeypatch.setattr(serve, "start", start)
        spec = registry.ModelSpec(id="flaky-local", backend="llamacpp", served_name="flaky", max_concurrency=1)
        with connect(spec, store, tmp_path, retry=RETRY, max_restarts=2) as client:
            assert ask(client, "before").ok
            os.kill(started[0].process.pid, signal.SIGKILL)
            started[0].process.wait()
            with pytest.raises(LLMError, match=r"'flaky-local': its local server died 3 times.*fake-\d+\.log"):
                ask(client, "after")
        assert len(started) == 3 and store.count("ok") == 1 and store.count("failed") == 0


@pytest.mark.slow
def test_real_llama_server_killed_mid_batch(tmp_path: Path) -> None:
    """The real llama.cpp server of SmolLM2-135M, its pid killed with SIGKILL while calls are in
    flight: the client restarts it once, every call is answered and none is recorded as failed,
    and the answers are the ones an uninterrupted server gives (the server is deterministic)."""
    import threading

    from declinecraft.core import paths

    root = paths.find_root(Path(__file__))
    spec = registry.get_model(root / "params" / "models.yaml", "smollm2-135m")
    models = paths.cache_dir(root)  # where `make setup` put the assembled GGUF
    requests = [Request.from_text(f"Name a Minecraft block that starts with {c}.", max_tokens=48) for c in "ABCDEFGH"]
    retry = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=5.0, timeout_s=300.0)

    def answers(store_dir: Path, kill_after_s: float | None) -> tuple[list[str], int, int, int]:
        with cache.open_cache(store_dir) as store, connect(spec, store, models, retry=retry) as client:
            killer = None
            if kill_after_s is not None:

                def kill() -> None:
                    while not (client.server and client.server.servers):
                        time.sleep(0.05)
                    time.sleep(kill_after_s)
                    os.kill(client.server.servers[0].process.pid, signal.SIGKILL)

                killer = threading.Thread(target=kill)
                killer.start()
            results = client.run(requests, progress=False)
            if killer is not None:
                killer.join()
            assert all(r.ok for r in results), [r.error for r in results if not r.ok]
            restarts = client.server.restarts if client.server else -1
            return [r.text for r in results], restarts, store.count("ok"), store.count("failed")

    calm, calm_restarts, _, _ = answers(tmp_path / "calm", None)
    killed, restarts, ok, failed = answers(tmp_path / "killed", 1.5)
    faults.report(
        {
            "fault": "real llama.cpp server killed",
            "setup": "smollm2",
            "restarts": restarts,
            "ok": ok,
            "failed": failed,
            "same_answers": killed == calm,
        }
    )
    assert calm_restarts == 0 and restarts == 1
    assert ok == len(requests) and failed == 0 and killed == calm


#: A stand-in llama.cpp server that answers health checks, then dies as llama.cpp did on AMX CPUs:
#: SIGSEGV at the first matrix product (its first chat request), after writing to its log.
_SEGFAULTING_SERVER = """
import http.server, os, signal, sys
port = int(sys.argv[1])
print("load_tensors: AMX model buffer size = 12.00 MiB", flush=True)
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("content-type", "application/json"); self.end_headers()
        self.wfile.write(b'{"object": "list", "data": [{"id": "crashy"}]}')
    def do_POST(self):
        print("ggml_backend_amx_mul_mat: about to multiply", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    def log_message(self, *args):
        pass
if "--at-start" in sys.argv:
    print("amx repack tensor blk.0.attn_q.weight of type q4_K", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


class TestServerKilledBySignal:
    """A local server that kills itself: the error names the signal and quotes its log."""

    @staticmethod
    def crashing(monkeypatch: pytest.MonkeyPatch, *extra: str) -> registry.ModelSpec:
        def command(spec: registry.ModelSpec, port: int, *args: object, **kwargs: object) -> list[str]:
            return [sys.executable, "-c", _SEGFAULTING_SERVER, str(port), *extra]

        monkeypatch.setattr(serve, "server_command", command)
        return registry.ModelSpec(id="crashy", backend="llamacpp", served_name="crashy", max_concurrency=1)

    def test_at_start(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Dies while starting: ServeError names SIGSEGV and quotes the log's last line."""
        spec = self.crashing(monkeypatch, "--at-start")
        with pytest.raises(serve.ServeError, match=r"(?s)'crashy' killed by SIGSEGV.*amx repack tensor"):
            serve.start(spec, tmp_path, reuse=False, startup_timeout=30)

    def test_mid_batch(self, tmp_path: Path, store: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
        """Dies at its first request, twice: the batch fails naming the model, SIGSEGV and the log."""
        spec = self.crashing(monkeypatch)
        with connect(spec, store, tmp_path, retry=RETRY, max_restarts=1) as client:
            with pytest.raises(LLMError) as caught:
                ask(client, "multiply")
        message = str(caught.value)
        assert "'crashy': its local server died 2 times" in message
        assert "killed by SIGSEGV (signal 11" in message
        assert "ggml_backend_amx_mul_mat: about to multiply" in message
        assert store.count("failed") == 0
