"""Tests for declinecraft.runtime.process_tree: a process's descendants, and stopping them all."""

from __future__ import annotations

import subprocess
import sys
import time

from declinecraft.runtime import process_tree
from tests.support import processes


class TestProcessTree:
    def test_stop_ends_escaped_descendant(self) -> None:
        """Stopping a server ends a child that left its process group, not only the group."""
        script = (
            "import subprocess, time; p = subprocess.Popen(['sleep', '600'], start_new_session=True); "
            "print(p.pid, flush=True); time.sleep(600)"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        child = int(proc.stdout.readline())
        assert child in process_tree.descendants(proc.pid)
        process_tree.stop(proc, 10)
        proc.stdout.close()
        deadline = time.monotonic() + 10
        while processes.alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not processes.alive(child)
