"""A guard between the project and a server that starts processes of its own (vLLM).

``python -I group_guard.py [--with-parent] -- COMMAND...`` runs COMMAND as its child and makes
itself the subreaper of everything below it (``prctl(PR_SET_CHILD_SUBREAPER)``), so a grandchild
orphaned by the server's death is re-parented to the guard instead of to init. When the server
exits, is killed, or the guard is asked to stop (SIGTERM, SIGINT, SIGHUP), the guard kills every
process left below it and exits with the server's status. With ``--with-parent`` the guard also
stops when the process that started it dies (``PR_SET_PDEATHSIG`` with SIGTERM, which it can
catch, unlike the SIGKILL that :mod:`declinecraft.runtime.parent_death` asks for).

Why: vLLM's API server starts an engine-core process and a resource tracker. Killing the API
server with SIGKILL (as the parent-death signal does when a notebook's kernel dies) left both
running, holding gigabytes of memory, with init as their parent. Run by path and isolated
(standard library only), like parent_death.py.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Seconds the server gets to end by itself after a stop request, before everything is killed.
GRACE_S = 10.0


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children...), read from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents.setdefault(int(stat.read_text().rsplit(")", 1)[1].split()[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_below() -> None:
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:  # reap what was re-parented to us
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def main(argv: list[str]) -> int:
    """Run the command under the guard; return its exit status (128 + signal when killed)."""
    with_parent = argv[:1] == ["--with-parent"]
    argv = argv[1:] if with_parent else argv
    if argv[:1] != ["--"] or len(argv) < 2:
        print("usage: group_guard.py [--with-parent] -- COMMAND...", file=sys.stderr)
        return 125
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if with_parent:
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if with_parent and os.getppid() != parent:
        return 125
    child = subprocess.Popen(argv[1:])
    stopping: list[float] = []

    def stop(signum: int, _frame: object) -> None:
        if not stopping:
            stopping.append(time.monotonic())
            try:
                child.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    while True:
        try:
            code = child.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            if stopping and time.monotonic() - stopping[0] > GRACE_S:
                child.kill()
    _kill_below()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
