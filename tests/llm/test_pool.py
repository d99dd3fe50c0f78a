"""Tests for declinecraft.llm.pool against the fake OpenAI-compatible server."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.core.registry import ModelSpec
from declinecraft.llm import batch_files, resources
from declinecraft.llm import pool as llm_pool
from declinecraft.llm.calls import Call
from declinecraft.llm.client import BudgetExceeded, Request, Result, Unreachable
from declinecraft.llm.pool import ModelFailed, ModelPool, Tally, check_failures, rewriter, to_reply
from declinecraft.llm.resources import ResourceError, Resources
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
        assert pool.client("two") is not first and list(pool._open) == ["two"]

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


def overlapping(spans: list[list[float]], others: list[list[float]]) -> bool:
    """Whether a request of one server was in flight while one of another server was."""
    return any(a0 < b1 and b0 < a1 for a0, a1 in spans for b0, b1 in others)


@pytest.fixture()
def apart(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[fake_openai.FakeServer]]]:
    """Two slow fake endpoints and a models file with one model on each ("a", "b")."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
    (project / "params" / "prompts").mkdir()
    (project / "params" / "prompts" / "rewrite_query.txt").write_text("# section: test\n---\nQ: {query}\n")
    servers = [fake_openai.start(latency=0.3), fake_openai.start(latency=0.3)]
    entries = {
        m: {"backend": "openai", "served_name": m, "base_url": s.base_url, "max_concurrency": 2}
        for m, s in zip("ab", servers, strict=True)
    }
    (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
    try:
        yield project, servers
    finally:
        for server in servers:
            server.stop()


class TestEach:
    def test_separate_endpoints_at_once(self, apart: tuple[Path, list[fake_openai.FakeServer]]) -> None:
        """Two models on separate endpoints are in flight at the same time, each at its own
        concurrency; the results come back in model order."""
        project, servers = apart

        def work(model: str) -> list[str]:
            ask = pool.asker(model, thinking=None, max_tokens=8)
            return [r.text for r in ask([Call("rewrite_query", {"query": f"{model}{i}"}) for i in range(4)])]

        with ModelPool(config.load(project / "params" / "default.yaml")) as pool:
            got = pool.each(["a", "b"], work)
        stats = [s.stats() for s in servers]
        assert got == [[f"echo: Q: {m}{i}" for i in range(4)] for m in "ab"]
        assert overlapping(stats[0]["spans"], stats[1]["spans"])
        assert [s["max_inflight"] for s in stats] == [2, 2]

    def test_offline_servers_in_order_here(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Two llama.cpp servers declaring nothing run one after another, in their order, in the
        calling thread (the default run's schedule), whatever the machine."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        entries = {m: {"backend": "llamacpp", "served_name": m} for m in ("l1", "l2", "l3")}
        (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
        monkeypatch.setattr(resources, "machine", lambda: Resources(gpus=8, cores=64, memory_gb=512))
        with ModelPool(config.load(project / "params" / "default.yaml")) as models:
            got = models.each(["l2", "l1", "l3"], lambda m: (m, threading.current_thread()))
        assert got == [(m, threading.main_thread()) for m in ("l2", "l1", "l3")]

    def test_shared_endpoint_in_turn(self, pool: ModelPool, server: fake_openai.FakeServer) -> None:
        """Two models behind one URL take turns, and each is released after its work."""
        seen: list[list[str]] = []

        def work(model: str) -> str:
            seen.append(list(pool._open))
            return pool.asker(model, thinking=None, max_tokens=8)([Call("rewrite_query", {"query": model})])[0].text

        assert pool.each(["one", "two"], work) == ["echo: Q: one", "echo: Q: two"]
        assert seen == [[], []] and not pool._open

    def test_too_many_gpus_refused_first(self, apart: tuple[Path, list[fake_openai.FakeServer]]) -> None:
        """An entry declaring more GPUs than the machine has stops the stage before any model works."""
        project, servers = apart
        models = project / "params" / "models.yaml"
        entries = json.loads(models.read_text())
        entries["models"]["big"] = {"backend": "vllm", "served_name": "big", "resources": {"gpus": 4096}}
        models.write_text(json.dumps(entries))
        worked: list[str] = []
        with ModelPool(config.load(project / "params" / "default.yaml")) as pool:
            with pytest.raises(ResourceError, match=r"model 'big'.*4096 GPUs.*Nothing was started"):
                pool.each(["a", "b", "big"], worked.append)
        assert worked == [] and [s.stats()["requests"] for s in servers] == [0, 0]

    def test_error_after_every_model(self, apart: tuple[Path, list[fake_openai.FakeServer]]) -> None:
        """A model whose work raises does not stop the other's: its answers are kept, then the
        error is raised."""
        project, servers = apart

        def work(model: str) -> str:
            if model == "a":
                raise RuntimeError("a broke")
            return pool.asker(model, thinking=None, max_tokens=8)([Call("rewrite_query", {"query": "b"})])[0].text

        with ModelPool(config.load(project / "params" / "default.yaml")) as pool:
            with pytest.raises(RuntimeError, match="a broke"):
                pool.each(["a", "b"], work)
            assert pool.cache.count("ok") == 1

    def test_servers_lent_their_own_share(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Two servers declaring one GPU and two cores each, on a machine with two GPUs, start side
        by side, each told its own GPU and its thread count."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        declared = {"gpus": 1, "cores": 2}
        entries = {m: {"backend": "vllm", "served_name": m, "resources": declared} for m in ("g1", "g2")}
        (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
        monkeypatch.setattr(resources, "machine", lambda: Resources(gpus=2, cores=4, memory_gb=8))
        lent: dict[str, object] = {}
        both = threading.Barrier(2, timeout=10)  # passes only when both models work at once

        @contextlib.contextmanager
        def connect(spec: ModelSpec, cache: object, cache_dir: object, **given: object) -> Iterator[object]:
            lent[spec.id] = {k: v for k, v in given.items() if k != "budget"}
            yield object()

        monkeypatch.setattr(llm_pool, "connect", connect)
        with ModelPool(config.load(project / "params" / "default.yaml")) as models:
            models.each(["g1", "g2"], lambda m: (models.client(m), both.wait()))
        assert lent == {"g1": {"gpus": (0,), "threads": 2}, "g2": {"gpus": (1,), "threads": 2}}


class TestRetrievalGpu:
    @pytest.fixture()
    def kept(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, object]]:
        """A run keeping GPU 1 of three for the retrieval models; ``connect`` records what each
        server was lent instead of starting it."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        (project / "params" / "gpu.yaml").write_text("base: default\nllm: {retrieval_device: 'cuda:1'}\n")
        monkeypatch.setattr(resources, "machine", lambda: Resources(gpus=3, cores=4, memory_gb=8))
        lent: dict[str, object] = {}

        @contextlib.contextmanager
        def connect(spec: ModelSpec, cache: object, cache_dir: object, **given: object) -> Iterator[object]:
            lent[spec.id] = {k: v for k, v in given.items() if k != "budget"}
            yield object()

        monkeypatch.setattr(llm_pool, "connect", connect)
        return project / "params" / "gpu.yaml", lent

    def test_declared_servers_lent_other_gpus(self, kept: tuple[Path, dict[str, object]], project: Path) -> None:
        """Servers declaring a GPU each are lent GPUs 0 and 2, never the retrieval models' GPU 1."""
        params, lent = kept
        entries = {m: {"backend": "vllm", "served_name": m, "resources": {"gpus": 1}} for m in ("g1", "g2")}
        (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
        both = threading.Barrier(2, timeout=10)  # passes only when both models work at once
        with ModelPool(config.load(params)) as models:
            models.each(["g1", "g2"], lambda m: (models.client(m), both.wait()))
        assert lent == {"g1": {"gpus": (0,)}, "g2": {"gpus": (2,)}}

    def test_undeclared_server_lent_all_but_kept(self, kept: tuple[Path, dict[str, object]], project: Path) -> None:
        """A server declaring nothing gets every GPU but the kept one; a hosted model is lent nothing."""
        params, lent = kept
        entries = {
            "v": {"backend": "vllm", "served_name": "v"},
            "h": {"backend": "openai", "served_name": "h", "base_url": "http://127.0.0.1:9/v1"},
        }
        (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
        with ModelPool(config.load(params)) as models:
            models.client("v")
            models.client("h")
        assert lent == {"v": {"gpus": (0, 2)}, "h": {}}

    def test_default_lends_as_before(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Under the default ``auto`` a server declaring nothing is lent no GPU list (it sees them all)."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        (project / "params" / "models.yaml").write_text(json.dumps({"models": {"v": {"backend": "vllm"}}}))
        given: list[dict[str, object]] = []

        @contextlib.contextmanager
        def connect(spec: ModelSpec, cache: object, cache_dir: object, **kwargs: object) -> Iterator[object]:
            given.append({k: v for k, v in kwargs.items() if k != "budget"})
            yield object()

        monkeypatch.setattr(llm_pool, "connect", connect)
        with ModelPool(config.load(project / "params" / "default.yaml")) as models:
            models.client("v")
        assert given == [{}]
