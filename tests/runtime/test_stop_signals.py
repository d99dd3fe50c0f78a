"""Tests for declinecraft.runtime.stop_signals: SIGTERM, SIGINT and SIGHUP run the clean-up Ctrl-C runs."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from declinecraft.runtime import stop_signals
from tests.support import processes

#: Writes "cleaned <signal>" from a finally block after a stop signal, then exits with 3.
SCRIPT = """
import sys, time
from pathlib import Path
from declinecraft.runtime.stop_signals import Stopped, stop_on_signals
out = Path(sys.argv[1])
with stop_on_signals():
    try:
        print("ready", flush=True)
        time.sleep(60)
    except Stopped as stop:
        out.write_text(f"cleaned {stop.name}")
        sys.exit(3)
"""


def run_until_signal(tmp_path: Path, sig: signal.Signals, *, ignore: bool = False) -> tuple[int, Path]:
    """Run SCRIPT, send it ``sig`` once it is ready; return its status and the clean-up's file.
    ``ignore`` starts it with ``sig`` ignored, as nohup does with SIGHUP."""
    out = tmp_path / "out.txt"
    preexec = (lambda: signal.signal(sig, signal.SIG_IGN)) if ignore else processes.default_signals
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(out)], stdout=subprocess.PIPE, text=True, preexec_fn=preexec
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=1.5 if ignore else 30)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    proc.stdout.close()
    return code, out


class TestStopOnSignals:
    @pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    def test_cleanup_runs(self, tmp_path: Path, sig: signal.Signals) -> None:
        """Each stop signal raises Stopped, so the except/finally blocks run."""
        code, out = run_until_signal(tmp_path, sig)
        assert code == 3 and out.read_text() == f"cleaned {sig.name}"

    def test_inherited_ignore_kept(self, tmp_path: Path) -> None:
        """A SIGHUP ignored by the parent (nohup) stays ignored: the process runs on."""
        code, out = run_until_signal(tmp_path, signal.SIGHUP, ignore=True)
        assert code == -signal.SIGKILL and not out.exists()

    def test_handlers_restored(self) -> None:
        """The handlers in force before the block come back after it."""
        before = signal.getsignal(signal.SIGTERM)
        with stop_signals.stop_on_signals():
            assert signal.getsignal(signal.SIGTERM) is not before
        assert signal.getsignal(signal.SIGTERM) is before

    def test_exit_status(self) -> None:
        """Stopped carries the shell's status: 128 + the signal's number."""
        assert stop_signals.Stopped(signal.SIGTERM).exit_status == 143
