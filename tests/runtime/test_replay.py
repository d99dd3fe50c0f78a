"""Tests for declinecraft.runtime.replay: strict replay misses and the stage ledger of cached lookups."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.core import registry
from declinecraft.llm.cache import Cache
from declinecraft.llm.client import LLMError, Request, client_for
from declinecraft.retrieval import index
from declinecraft.retrieval.embedding_cache import CachedEmbedder, EmbeddingCache
from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.runtime import replay
from tests.support import retrieval_data


def hosted(**changes: object) -> registry.ModelSpec:
    values: dict[str, object] = {
        "id": "hosted",
        "backend": "openai",
        "served_name": "vendor/hosted",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "DECLINECRAFT_NO_SUCH_KEY",
    }
    values.update(changes)
    return registry.ModelSpec(**values)  # type: ignore[arg-type]


class TestReplayMiss:
    def test_llm_call_names_stage_model_and_prompt(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A call the bundle lacks stops with the stage, the model and the prompt's first line; nothing is sent."""
        monkeypatch.setenv(replay.REPLAY_ENV, str(tmp_path / "x.zip"))
        monkeypatch.setenv(replay.STAGE_ENV, "05_answer")
        with Cache(tmp_path / "calls.sqlite") as store:
            client = client_for(hosted(), store)  # no key needed: a replay sends nothing
            request = Request.from_text("\nWhich block glows?\nSecond line", max_tokens=8)
            with pytest.raises(
                replay.ReplayMiss, match=r"stage 05_answer: 1 model call\(s\) of model 'hosted'.*'Which block glows\?'"
            ):
                client.run([request], progress=False)
            assert store.count() == 0

    def test_llm_call_outside_replay_needs_the_key(self, tmp_path: Path) -> None:
        """Without a replay the key variable is still required (the check is not lost)."""
        with Cache(tmp_path / "calls.sqlite") as store, pytest.raises(LLMError, match="DECLINECRAFT_NO_SUCH_KEY"):
            client_for(hosted(), store)

    def test_embedding(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An embedding the bundle lacks stops the stage, naming the embedder and the text."""
        embedder = CachedEmbedder(HashEmbedder(8), EmbeddingCache(tmp_path / "e.sqlite"))
        embedder.embed_queries(["known query"])
        monkeypatch.setenv(replay.REPLAY_ENV, str(tmp_path / "x.zip"))
        assert embedder.embed_queries(["known query"]).shape == (1, 8)
        with pytest.raises(replay.ReplayMiss, match=r"1 embedding\(s\) of model 'hash-8@v1'.*'new query'"):
            embedder.embed_queries(["known query", "new query"])


class TestLedger:
    def test_note_and_read(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Looked-up keys reach the ledger once each, by kind; without the variable nothing is written."""
        ledger = tmp_path / "calls" / "02_index.tsv"
        replay.ledger_note("llm", "m", ["a"])
        assert not ledger.exists()
        monkeypatch.setenv(replay.LEDGER_ENV, str(ledger))
        embedder = CachedEmbedder(HashEmbedder(4), EmbeddingCache(tmp_path / "e.sqlite"))
        embedder.embed_documents(["one", "two", "one"])
        got = replay.ledger_read(ledger)
        assert got["embedding"] == {("hash-4@v1", EmbeddingCache.digest("document", t)) for t in ("one", "two")}
        assert got["llm"] == got["rerank"] == set()

    def test_reused_index_lists_its_vectors(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An index reused from an earlier run still lists the vectors a fresh build reads (a replay builds one)."""
        chunks, params = retrieval_data.make_chunks(), retrieval_data.make_params()
        embedder = CachedEmbedder(HashEmbedder(retrieval_data.DIM), EmbeddingCache(tmp_path / "e.sqlite"))
        index.ensure(chunks, tmp_path / "02_index", embedder=embedder, params=params)
        monkeypatch.setenv(replay.LEDGER_ENV, str(tmp_path / "02_index.tsv"))
        assert index.ensure(chunks, tmp_path / "02_index", embedder=embedder, params=params)["built_now"] is False
        listed = {key for _, key in replay.ledger_read(tmp_path / "02_index.tsv")["embedding"]}
        assert listed == {EmbeddingCache.digest("document", t) for t in chunks["text"]}

    def test_bad_line_names_file_and_line(self, tmp_path: Path) -> None:
        """A damaged ledger line is an error naming the file and the line number."""
        (tmp_path / "x.tsv").write_text("llm\tm\tk\nnonsense\n")
        with pytest.raises(ValueError, match=r"x.tsv:2: not a ledger line"):
            replay.ledger_read(tmp_path / "x.tsv")
