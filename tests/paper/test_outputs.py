"""Tests for declinecraft.paper.outputs: where the paper stage writes, and what it removes."""

from __future__ import annotations

import re
from pathlib import Path

from declinecraft.core import config
from declinecraft.paper import outputs
from tests.support import judged_tables


class TestOutputDirs:
    def test_default_and_other(self, tmp_path: Path) -> None:
        """The default run writes figures/ and paper/; others write under outputs/<run>/."""
        cfg = judged_tables.project(tmp_path, None)
        assert outputs.output_dirs(cfg) == (tmp_path / "figures", tmp_path / "paper")
        other = config.load(tmp_path / "params" / "nopdf.yaml")
        assert outputs.output_dirs(other) == (tmp_path / "outputs/nopdf/figures", tmp_path / "outputs/nopdf/paper")


class TestRemoveStale:
    def test_only_generated_names(self, tmp_path: Path) -> None:
        """Generated files the run did not write go; kept ones and hand-written files stay."""
        for name in ("table02.tex", "table03.tex", "reported.tex"):
            (tmp_path / name).write_text("x")
        outputs.remove_stale(tmp_path, re.compile(r"table\d\d\.tex"), {"table02.tex"})
        assert sorted(p.name for p in tmp_path.iterdir()) == ["reported.tex", "table02.tex"]

    def test_missing_folder(self, tmp_path: Path) -> None:
        """A folder that does not exist yet is nothing to clean: no error, and it is not created."""
        outputs.remove_stale(tmp_path / "absent", re.compile("x"), set())
        assert not (tmp_path / "absent").exists()
        assert list(tmp_path.iterdir()) == []
