"""Tests for declinecraft.llm.batch_files: uncached calls written as OpenAI batch JSONL instead of sent,
and result files (``vllm run-batch -o``'s format) folded back into the call cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.core import registry
from declinecraft.llm import batch_files, cache
from declinecraft.llm.cache import Cache
from declinecraft.llm.client import LLMError, Request, client_for, run_batch
from tests.support import fake_openai


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Cache]:
    with cache.open_cache(tmp_path / "cache") as db:
        yield db


@pytest.fixture()
def exporting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "batches" / "05"
    monkeypatch.setenv(batch_files.EXPORT_ENV, str(folder))
    monkeypatch.setattr(batch_files, "_written", {})
    return folder


def spec(server: fake_openai.FakeServer) -> registry.ModelSpec:
    return registry.ModelSpec(id="local", backend="vllm", served_name="served", base_url=server.base_url)


def requests(*texts: str) -> list[Request]:
    return [Request.from_text(t, max_tokens=8) for t in texts]


def vllm_output(line: dict[str, object], text: str) -> dict[str, object]:
    """A result line as ``vllm run-batch -o`` writes it."""
    body = {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }
    return {
        "id": "vllm-1",
        "custom_id": line["custom_id"],
        "response": {"status_code": 200, "body": body},
        "error": None,
    }


class TestExport:
    def test_written_not_sent(self, server: fake_openai.FakeServer, store: Cache, exporting: Path) -> None:
        """Uncached calls go to <model>.jsonl in the OpenAI batch format, keyed by cache key; nothing is
        sent or stored, and the stage is stopped with the files named."""
        before = server.stats()["requests"]
        c = client_for(spec(server), store)
        results = run_batch(c, requests("x1", "x2", "x1"), progress=False)
        assert server.stats()["requests"] == before and store.count() == 0
        assert all(not r.ok and "make batch-export" in (r.error or "") for r in results)
        lines = [json.loads(x) for x in (exporting / "local.jsonl").read_text().splitlines()]
        assert [x["custom_id"] for x in lines] == [results[0].key, results[1].key]
        assert lines[0]["url"] == "/v1/chat/completions" and lines[0]["body"]["model"] == "served"
        run_batch(c, requests("x2", "x3"), progress=False)  # a later batch adds only new calls
        assert len((exporting / "local.jsonl").read_text().splitlines()) == 3
        with pytest.raises(batch_files.BatchExported, match=r"local\.jsonl \(3 calls\)"):
            batch_files.stop_if_exported()


class TestImport:
    def test_results_answer_from_cache(
        self, server: fake_openai.FakeServer, store: Cache, exporting: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Imported results (one answered, one errored) are stored under their calls' keys; the next run
        answers the answered one from the cache without sending it."""
        c = client_for(spec(server), store)
        run_batch(c, requests("y1", "y2"), progress=False)
        lines = [json.loads(x) for x in (exporting / "local.jsonl").read_text().splitlines()]
        error = {"custom_id": lines[1]["custom_id"], "response": None, "error": {"code": "x", "message": "broke"}}
        out = exporting / "local.out.jsonl"
        out.write_text(json.dumps(vllm_output(lines[0], "imported answer")) + "\n" + json.dumps(error) + "\n")
        counts = batch_files.import_results(store, [out], [exporting / "local.calls.jsonl"])
        assert counts == {"ok": 1, "failed": 1}
        monkeypatch.delenv(batch_files.EXPORT_ENV)
        before = server.stats()["requests"]
        (first,) = run_batch(client_for(spec(server), store), requests("y1"), progress=False)
        assert first.cached and first.text == "imported answer" and server.stats()["requests"] == before
        assert store.get(lines[1]["custom_id"]).error.endswith("x: broke")  # type: ignore[union-attr]

    def test_unknown_line_named(self, store: Cache, tmp_path: Path) -> None:
        """A result naming no exported call is refused with the file and the line."""
        out = tmp_path / "stray.jsonl"
        out.write_text(json.dumps(vllm_output({"custom_id": "nope"}, "x")) + "\n")
        calls = tmp_path / "m.calls.jsonl"
        calls.write_text("")
        with pytest.raises(LLMError, match=r"stray\.jsonl: result 1 has custom_id 'nope'"):
            batch_files.import_results(store, [out], [calls])
