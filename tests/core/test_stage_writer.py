"""Tests for declinecraft.core.stage_writer: one way every stage writes its files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import catalogue, config
from declinecraft.core.stage_writer import StageWriter, not_built, write_frame


@pytest.fixture()
def cfg(project: Path) -> config.RunConfig:
    return config.load(project / "params" / "default.yaml")


class TestWriteFrame:
    def test_formats(self, tmp_path: Path) -> None:
        """The suffix picks Parquet, JSON lines or CSV (floats to the precision asked)."""
        frame = pl.DataFrame({"a": [1.23456789], "b": [["x", "y"]]})
        assert pl.read_parquet(write_frame(frame, tmp_path / "f.parquet")).equals(frame)
        assert json.loads(write_frame(frame, tmp_path / "f.jsonl").read_text())["b"] == ["x", "y"]
        text = write_frame(frame.drop("b"), tmp_path / "f.csv", float_precision=3).read_text()
        assert text.splitlines() == ["a", "1.235"]

    def test_atomic(self, tmp_path: Path) -> None:
        """A failed write leaves the earlier file and no temporary file."""
        target = tmp_path / "f.csv"
        target.write_text("old\n")
        with pytest.raises(Exception):  # noqa: B017 (polars raises its own error for a struct it cannot write)
            write_frame(pl.DataFrame({"a": [object()]}), target)
        assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["f.csv"]


class TestStageWriter:
    def test_writes_declared_artifacts(self, cfg: config.RunConfig) -> None:
        """Frames, text and the manifest go into the stage folder under their catalogue names."""
        writer = StageWriter.of(cfg, "generate")
        writer.frame(catalogue.GENERATE_DRAFTS, pl.DataFrame({"id": ["q1"]}))
        writer.json(catalogue.GENERATE_STAGE, {"input": {}})
        assert catalogue.missing(cfg, "generate") == []
        assert catalogue.GENERATE_STAGE.path(cfg).read_text() == '{\n  "input": {}\n}\n'

    def test_refuses_other_stages(self, cfg: config.RunConfig) -> None:
        """A stage writes only its own artifacts."""
        with pytest.raises(ValueError, match="does not write judge's"):
            StageWriter.of(cfg, "generate").frame(catalogue.JUDGE_JUDGED, pl.DataFrame())

    def test_manifest_and_timing(self, cfg: config.RunConfig) -> None:
        """The manifest is the stage's declared one; laps and the total are in seconds."""
        writer = StageWriter.of(cfg, "judge")
        writer.mark()
        writer.lap("labels")
        timing = writer.timing()
        assert list(timing) == ["labels", "total"] and all(v >= 0 for v in timing.values())
        assert writer.manifest({"seconds": timing}) == catalogue.JUDGE_MANIFEST.path(cfg)

    def test_not_built_marker(self, cfg: config.RunConfig, capsys: pytest.CaptureFixture[str]) -> None:
        """A stage not built yet leaves its marker, and the stage's first run removes it with stale notes."""
        marker = not_built(cfg, "evidence")
        assert marker.name == catalogue.NOT_BUILT and "not built yet" in capsys.readouterr().out
        writer = StageWriter.of(cfg, "evidence")
        writer.text(catalogue.EVIDENCE_STATUS, "off\n")
        writer.finish(catalogue.EVIDENCE_STATUS)
        assert not marker.exists() and not catalogue.EVIDENCE_STATUS.path(cfg).exists()

    def test_paper_places(self, cfg: config.RunConfig) -> None:
        """The paper stage's writer also writes the run's paper folders."""
        writer = StageWriter.of(cfg, "paper", own_run=True)
        path = writer.text(catalogue.PAPER_TABLE, "x\n", "claims")
        assert path == cfg.root / "paper" / "tables" / "claims.tex"
