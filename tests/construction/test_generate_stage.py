"""Tests for declinecraft.construction.generate_stage: stage 03's inputs, the stage, its completer."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from declinecraft.construction import generate_stage
from declinecraft.core import config
from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.llm.calls import Call
from tests.support import generation, projects


class TestInputReport:
    def test_counts_empty(self) -> None:
        """Chunks without text, and pages left with none, are counted."""
        pre = pl.DataFrame({"title": ["A", "A", "B", "C"], "text": ["[Page: A] a", " ", "", "[Page: C] c"]})
        post = pl.DataFrame({"title": ["D"], "text": ["[Page: D] d"]})
        report = generate_stage.input_report(pre, post)
        assert (report["pre_chunks"], report["pre_empty_chunks"]) == (2, 2)
        assert (report["pre_pages"], report["pre_pages_without_text"]) == (2, 1)
        assert (report["post_chunks"], report["post_empty_chunks"]) == (1, 0)


def make_project(project: Path) -> config.RunConfig:
    """A project with the corpus stage's outputs written from the synthetic chunks."""
    folder = project / "outputs" / "default" / "01_corpus"
    folder.mkdir(parents=True)
    generation.chunk_table(generation.PRE_PAGES, "pre").write_parquet(folder / "chunks_pre.parquet")
    generation.chunk_table(generation.POST_PAGES, "post").write_parquet(folder / "chunks_post.parquet")
    text = (project / "params" / "default.yaml").read_text()
    (project / "params" / "default.yaml").write_text(text.replace("n_answerable: ", "n_answerable: 3 #"))
    return config.load(project / "params" / "default.yaml")


class TestReadChunks:
    def test_splits_corpora(self, project: Path) -> None:
        """The corpus stage's chunks come back as C_pre and C_post tables."""
        pre, post = generate_stage.read_chunks(make_project(project))
        assert set(pre["corpus"]) == {"pre"} and set(post["corpus"]) == {"post"}
        assert pre.height == 2 * len(generation.PRE_PAGES)


class TestRunStage:
    def test_writes_drafts(self, project: Path) -> None:
        """The stage writes drafts.parquet and stage.json under 03_generate/."""
        cfg = make_project(project)
        pre, post = generate_stage.read_chunks(cfg)
        drafts = generate_stage.run(
            cfg, complete=generation.good_model(), search=generation.lexical_search(pre, post)
        ).drafts
        folder = cfg.stage_dir("generate")
        assert pl.read_parquet(folder / "drafts.parquet").equals(drafts)
        stage = json.loads((folder / "stage.json").read_text())
        assert stage["input"]["post_pages"] == len(generation.POST_PAGES) and stage["timing"][0]["seconds"] >= 0
        assert drafts.filter(pl.col("answerable")).height == 3


class TestCompleter:
    def test_injected_passes_through(self, project: Path) -> None:
        """An injected complete is used as is (no server, no cache)."""
        model = generation.good_model()
        with generate_stage.completer(make_project(project), "any", temperature=0.0, complete=model) as run:
            assert run is model

    def test_through_llm_layer(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Calls are rendered from params/prompts, sent once through the cached LLM layer, keyed."""
        import shutil

        from declinecraft.core import paths
        from tests.support import fake_openai

        monkeypatch.setenv(paths.CACHE_ENV, str(project / "cache"))
        shutil.copytree(projects.REPO / "params" / "prompts", project / "params" / "prompts")
        server = fake_openai.start()
        try:
            (project / "params" / "fake_models.yaml").write_text(
                f"models:\n  fake:\n    backend: openai\n    served_name: fake\n    base_url: {server.base_url}\n"
            )
            (project / "params" / "fake.yaml").write_text("base: default\nmodels_file: params/fake_models.yaml\n")
            cfg = config.load(project / "params" / "fake.yaml")
            call = Call("verify_stated", {"fact": "Copper golems sort items.", "context": "[Page: A] a"}, 8)
            with generate_stage.completer(cfg, "fake", temperature=0.0) as run:
                first = run([call])
            with generate_stage.completer(cfg, "fake", temperature=0.0) as run:
                again = run([call])
            assert first[0].text.startswith("echo: Does the CONTEXT") and "Copper golems sort items." in first[0].text
            assert first[0].cache_key and first[0].error is None and again == first
            assert server.stats()["requests"] == 1
        finally:
            server.stop()


class TestRetrieverSearch:
    def test_models_placed_as_in_a_server_stage(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Generation and verification open the index, at the first query, with
        ``llm.retrieval_device`` as a stage that starts model servers."""
        opened: list[dict[str, object]] = []

        class Opened:
            def search_many(self, queries: list[str], *args: object, **kw: object) -> list[list[object]]:
                return [[] for _ in queries]

        def open_index(folder: Path, **kw: object) -> Opened:
            opened.append(kw)
            return Opened()

        monkeypatch.setattr(generate_stage.retrieve.Retriever, "open", open_index)
        search = generate_stage.retriever_search(config.load(project / "params" / "default.yaml"))
        assert opened == [] and search(["q"], "pre", 3) == [[]]
        assert [kw["device"] for kw in opened] == [RetrievalDevice("auto", servers=True)]
