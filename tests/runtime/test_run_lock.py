"""Tests for declinecraft.runtime.run_lock: every command that writes a run holds its lock, and its base's:
`make nb` and `make evaluate` refuse, as `make all` does, while another `make` holds
``outputs/<run>/.lock`` (the two-runs fault test covers `make all`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.runtime import run_lock
from tests.support import processes, projects


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return projects.make_project(tmp_path / "p")


def make(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "MAKEFLAGS": ""}
    env.pop("RUN_LOCKED", None)
    return subprocess.run(
        ["make", *args, f"PY={sys.executable}"], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )


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


def test_derived_run_holds_its_base(project: Path, held: Path) -> None:
    """A derived run reads and may rebuild its base's stages: with the base busy, it is refused too."""
    out = make(project, "nb", "NB=05", "PARAMS=params/k10.yaml")
    assert out.returncode != 0 and "run 'default' is busy" in out.stderr and "outputs/default/.lock" in out.stderr
    assert not (project / "outputs" / "k10" / "executed").exists()  # only its lock file was made


class TestRunsWritten:
    def test_own_and_owners(self, project: Path) -> None:
        assert run_lock.runs_written(project / "params" / "k10.yaml") == ["k10", "default"]
        assert run_lock.runs_written(project / "params" / "default.yaml") == ["default"]

    def test_missing_or_broken_params(self, tmp_path: Path) -> None:
        """A params file that does not load is its own run only (the command reports the error)."""
        broken = tmp_path / "params" / "bad.yaml"
        broken.parent.mkdir()
        broken.write_text("answer: [unclosed\n")
        assert run_lock.runs_written(broken) == ["bad"]
        assert run_lock.runs_written(tmp_path / "params" / "new.yaml") == ["new"]


class TestRunLocked:
    def test_status_and_held_runs(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The command sees RUN_LOCKED naming both runs, and its exit status comes back."""
        monkeypatch.delenv("RUN_LOCKED", raising=False)
        script = 'import os, sys; print(os.environ["RUN_LOCKED"]); sys.exit(3)'
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "declinecraft.runtime.run_lock",
                "params/k10.yaml",
                "--",
                sys.executable,
                "-c",
                script,
            ],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(project / "src")},
        )
        assert out.returncode == 3 and out.stdout.split() == ["k10", "default"]
        # Released with the holder: nothing holds the locks now.
        for run in ("default", "k10"):
            assert subprocess.run(["flock", "-n", str(project / "outputs" / run / ".lock"), "true"]).returncode == 0

    def test_held_by_an_ancestor_is_not_taken_again(self, project: Path, held: Path) -> None:
        """A sub-make whose parent holds the run does not wait on it."""
        env = {**os.environ, "PYTHONPATH": str(project / "src"), "RUN_LOCKED": "default"}
        out = subprocess.run(
            [sys.executable, "-m", "declinecraft.runtime.run_lock", "params/default.yaml", "--", "true"],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
        )
        assert out.returncode == 0, out.stderr

    def test_busy_waits_then_refuses(self, project: Path, held: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(project / "src")}
        env.pop("RUN_LOCKED", None)
        start = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-m", "declinecraft.runtime.run_lock", "--wait", "1", "params/k10.yaml", "--", "true"],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
        )
        assert out.returncode == run_lock.BUSY and time.monotonic() - start >= 1
        assert "run 'default' is busy" in out.stderr and "waited 1 s" in out.stderr

    @pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
    def test_stop_signal_passed_on(self, project: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals) -> None:
        """SIGTERM or SIGHUP sent to the lock holder alone reaches the command, whose status comes
        back; the lock is held until the command has ended."""
        monkeypatch.delenv("RUN_LOCKED", raising=False)
        script = (
            "import signal, sys, time; "
            "[signal.signal(s, lambda *a: sys.exit(7)) for s in (signal.SIGTERM, signal.SIGHUP)]; "
            "print('ready', flush=True); time.sleep(60)"
        )
        holder = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "declinecraft.runtime.run_lock",
                "params/default.yaml",
                "--",
                sys.executable,
                "-c",
                script,
            ],
            cwd=project,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(project / "src")},
            preexec_fn=processes.default_signals,
        )
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        holder.send_signal(sig)
        assert holder.wait(timeout=30) == 7
        holder.stdout.close()
