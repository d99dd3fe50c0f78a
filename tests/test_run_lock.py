"""Every command that writes a run holds its lock: `make nb` and `make evaluate` refuse, as `make all`
does, while another `make` holds ``outputs/<run>/.lock`` (the two-runs fault test covers `make all`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.projects import make_project


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "p")


def make(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "MAKEFLAGS": ""}
    env.pop("RUN_LOCKED", None)
    return subprocess.run(["make", *args, f"PY={sys.executable}"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture()
def held(project: Path) -> Iterator[Path]:
    """The default run's lock, held by another process for the test's duration."""
    lock = project / "outputs" / "default" / ".lock"
    lock.parent.mkdir(parents=True)
    holder = subprocess.Popen(["flock", str(lock), "sleep", "120"])
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["flock", "-n", str(lock), "true"]).returncode == 0:
            assert time.monotonic() < deadline, "the holder never took the lock"
            time.sleep(0.05)
        yield lock
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("command", [("nb", "NB=05"), ("evaluate", "MODEL=smollm2-135m")])
def test_refused_while_locked(project: Path, held: Path, command: tuple[str, ...]) -> None:
    params = sorted((project / "params").rglob("*"))
    out = make(project, *command)
    assert out.returncode != 0 and "run 'default' is busy" in out.stderr and "outputs/default/.lock" in out.stderr
    assert not (project / "outputs" / "default" / "executed").exists()
    assert sorted((project / "params").rglob("*")) == params  # evaluate wrote no params file


def test_nb_runs_under_the_lock(project: Path) -> None:
    """With the lock free, `make nb` takes it and runs its body (here: the unknown-notebook check)."""
    out = make(project, "nb", "NB=99")
    assert out.returncode != 0 and "no notebook 99_*.ipynb" in out.stdout + out.stderr and "busy" not in out.stderr
