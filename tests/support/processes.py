"""Whether a process is alive, for the tests that check nothing is left running."""

from __future__ import annotations

import signal
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie is dead for our purposes)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_dead(pid: int, timeout: float = 15.0) -> bool:
    """Wait up to ``timeout`` seconds for ``pid`` to end; whether it did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def default_signals() -> None:
    """A child's ``preexec_fn``: SIGHUP, SIGINT and SIGTERM at their defaults, whatever the test run
    inherited (a run under nohup ignores SIGHUP, a shell's background job SIGINT), so a test that
    sends one sees what a process started from a terminal would do."""
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
