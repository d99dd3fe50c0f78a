"""Tests of the Makefile's notebook recipe (``run_notebook``): what a failed attempt leaves behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import projects

#: Stands in for the project's Python: ``-m papermill`` prints the attempt and fails unless it is
#: "good" (then copies the notebook like papermill would); anything else runs the real Python.
FAKE_PYTHON = """#!/bin/bash
if [ "$1 $2" = "-m papermill" ]; then
  echo "attempt: $ATTEMPT"
  [ "$ATTEMPT" = good ] && cp "$3" "$4" && exit 0
  exit 1
fi
exec {python} "$@"
"""


def run_recipe(root: Path, python: Path, attempt: str) -> subprocess.CompletedProcess[str]:
    """Run ``run_notebook`` for stage 01 of run ``default`` through Make, as one attempt."""
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "MAKEFLAGS": "", "ATTEMPT": attempt}
    rule = "logprobe:\n\t$(call run_notebook,default,01_corpus)\n"
    return subprocess.run(
        ["make", "--eval", rule, "logprobe", f"PY={python}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class TestRunNotebook:
    def test_failed_log_kept_beside_good(self, tmp_path: Path) -> None:
        """A failed attempt's log goes to <stage>.failed.log, named on stderr; the last good log stays."""
        root = projects.make_project(tmp_path / "make")
        python = tmp_path / "python"
        python.write_text(FAKE_PYTHON.format(python=sys.executable))
        python.chmod(0o755)
        logs = root / "outputs" / "default" / "logs"
        good = run_recipe(root, python, "good")
        assert good.returncode == 0, good.stderr[-2000:]
        bad = run_recipe(root, python, "bad")
        assert (
            bad.returncode != 0
            and "01_corpus failed; its log is outputs/default/logs/01_corpus.failed.log" in bad.stderr
        )
        assert (logs / "01_corpus.log").read_text() == "attempt: good\n"
        assert (logs / "01_corpus.failed.log").read_text() == "attempt: bad\n"
        assert not list(logs.glob("*.running.log"))
        assert (root / "outputs" / "default" / "executed" / "01_corpus.ipynb").is_file()
