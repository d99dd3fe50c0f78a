"""Tests for declinecraft.runtime.parent_death: a child started through it ends when its parent dies."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from declinecraft.runtime import parent_death
from tests.support import processes


def _child_script(body: str) -> str:
    """A script for a starter process that spawns ``sleep`` guarded, prints its pid, then waits."""
    return textwrap.dedent(f"""
        import asyncio, sys, time
        from declinecraft.runtime import parent_death
        {body}
        print(proc.pid, flush=True)
        time.sleep(600)
    """)


class TestParentDeath:
    def test_exec_in_place_with_kill_on_parent_death(self) -> None:
        """The wrapper execs the command under the same pid, with SIGKILL as its parent-death signal."""
        probe = (
            "import ctypes, os; sig = ctypes.c_int(); "
            "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0); print(os.getpid(), sig.value)"
        )  # 2 = PR_GET_PDEATHSIG
        proc = parent_death.popen([sys.executable, "-c", probe], stdout=subprocess.PIPE)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
        assert out.split() == [str(proc.pid).encode(), str(int(signal.SIGKILL)).encode()]

    def test_refuses_when_parent_is_not_the_expected_one(self, tmp_path: Path) -> None:
        """A wrapper whose parent already died (here: is not the named one) never runs the command."""
        marker = tmp_path / "ran"
        done = subprocess.run(parent_death.wrap(["touch", str(marker)], parent_pid=1), capture_output=True, check=False)
        assert done.returncode == parent_death.REFUSED and b"already gone" in done.stderr
        assert not marker.exists()

    def test_missing_program_fails_in_the_caller(self) -> None:
        """A program not on PATH raises at once, as plain Popen would, instead of a dead child."""
        with pytest.raises(FileNotFoundError):
            parent_death.popen(["declinecraft-no-such-program"])

    def test_works_again_in_a_forked_child(self) -> None:
        """After fork (which keeps only the calling thread) a child process can still start guarded children."""
        script = textwrap.dedent("""
            import os, signal
            from declinecraft.runtime import parent_death
            parent_death.popen(["true"]).wait()
            pid = os.fork()
            if pid == 0:
                signal.alarm(20)  # a lost forker thread would block here forever
                os._exit(parent_death.popen(["sh", "-c", "exit 7"]).wait())
            print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        """)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
        assert done.stdout.split() == ["7"], done.stderr

    def test_outlives_the_thread_that_started_it(self) -> None:
        """The child survives the exit of the to_thread worker that started it (asyncio.run joins it)."""
        proc = asyncio.run(asyncio.to_thread(parent_death.popen, ["sleep", "60"]))
        try:
            time.sleep(1.0)
            assert proc.poll() is None
        finally:
            proc.kill()
            proc.wait(timeout=10)

    @pytest.mark.parametrize(
        "body",
        [
            'proc = parent_death.popen(["sleep", "600"])',
            'proc = asyncio.run(asyncio.to_thread(parent_death.popen, ["sleep", "600"]))',
        ],
        ids=["main-thread", "to-thread"],
    )
    def test_dies_with_its_starter_after_kill_9(self, body: str) -> None:
        """kill -9 of the starting process kills the child, from whichever thread it was started."""
        starter = subprocess.Popen([sys.executable, "-c", _child_script(body)], stdout=subprocess.PIPE, text=True)
        pid = int(starter.stdout.readline())
        time.sleep(0.5)  # the starting thread (if any) has exited by now
        assert processes.alive(pid)
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=30)
        assert processes.wait_dead(pid)
