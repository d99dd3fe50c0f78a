"""Tests for declinecraft.retrieval.stage: stage 02 builds the index, and knows when it is current."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.retrieval import stage
from tests.support import retrieval_data


class TestRunStage:
    def test_builds_and_reuses(self, project: Path) -> None:
        """The stage writes its manifest, and a rerun reuses the index."""
        cfg = config.load(project / "params" / "default.yaml")
        retrieval_data.write_chunks(cfg, retrieval_data.make_chunks())
        embedder = retrieval_data.CountingEmbedder(name=cfg.index.embedder)
        first = stage.run(cfg, embedder=embedder)
        second = stage.run(cfg, embedder=embedder)
        assert first.manifest["built_now"] and not second.manifest["built_now"]
        assert (cfg.stage_dir("index") / "manifest.json").is_file()
        assert stage.current(cfg) == cfg.stage_dir("index") / first.manifest["path"] == first.folder
        assert embedder.documents == len(retrieval_data.CHUNKS)


class TestCurrent:
    def test_not_built(self, project: Path) -> None:
        """Asking for the index of a run that has none names the missing manifest."""
        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="run 02_index"):
            stage.current(cfg)


class TestLoadStageEmbedder:
    def test_index_stage_may_take_a_gpu(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The index stage starts no model server: its embedder's ``auto`` may take a GPU."""
        given: list[object] = []
        monkeypatch.setattr(stage, "load_embedder", lambda name, **kw: given.append(kw["device"]))
        stage.load_stage_embedder(config.load(project / "params" / "default.yaml"))
        assert given == [RetrievalDevice("auto", servers=False)]
