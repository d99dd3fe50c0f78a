"""Tests for declinecraft.core.artifacts: reading a run's chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.core import artifacts, config
from tests.support import retrieval_data


class TestReadChunks:
    def test_reads_both(self, project: Path) -> None:
        """Both corpus files are read, C_pre first."""
        cfg = config.load(project / "params" / "default.yaml")
        retrieval_data.write_chunks(cfg, retrieval_data.make_chunks())
        frame = artifacts.read_chunks(cfg)
        assert frame.height == len(retrieval_data.CHUNKS) and frame["corpus"][0] == "pre"

    def test_missing_file(self, project: Path) -> None:
        """A missing upstream file is named, with how to make it."""
        cfg = config.load(project / "params" / "default.yaml")
        cfg.stage_dir("corpus").mkdir(parents=True)
        (cfg.stage_dir("corpus") / "NOT_BUILT.md").write_text("x")
        with pytest.raises(
            FileNotFoundError, match=r"chunks_pre\.parquet \(the corpus stage is not built yet.*make nb NB=01"
        ):
            artifacts.read_chunks(cfg)

    def test_missing_column(self, project: Path) -> None:
        """A corpus file without a column is named."""
        cfg = config.load(project / "params" / "default.yaml")
        retrieval_data.write_chunks(cfg, retrieval_data.make_chunks().drop("url"))
        with pytest.raises(ValueError, match="chunks_pre.parquet: missing column 'url'"):
            artifacts.read_chunks(cfg)
