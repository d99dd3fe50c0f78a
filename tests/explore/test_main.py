"""Tests for declinecraft.explore.__main__: the explorer's command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.explore.__main__ import main


class TestMain:
    def test_cli(self, run: config.RunConfig, capsys: pytest.CaptureFixture[str]) -> None:
        """``report PARAMS`` prints the page's path; a run without outputs exits 1 with the reason."""
        assert main(["report", str(run.params_file)]) == 0
        assert capsys.readouterr().out.strip() == str(run.run_dir() / "explorer" / "index.html")
        empty = run.root / "params" / "empty.yaml"
        empty.write_text("base: default\nseed: 7\n")
        assert main(["report", str(empty)]) == 1
        assert "missing" in capsys.readouterr().err

    def test_module(self, run: config.RunConfig, tmp_path: Path) -> None:
        """``python -m declinecraft.explore report PARAMS --out FILE`` (what ``make report`` runs) writes the page."""
        out = tmp_path / "page.html"
        done = subprocess.run(
            [sys.executable, "-m", "declinecraft.explore", "report", str(run.params_file), "--out", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(out) and '"id":"q-sulfur"' in out.read_text()
