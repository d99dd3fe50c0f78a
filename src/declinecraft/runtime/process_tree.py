"""Ending a local server with every process it started.

A server runs in its own process group (``start_new_session``), so one signal reaches it and the
children that stayed in the group. vLLM starts an engine-core process and helpers; whatever left
the group is found through /proc before the signal and killed after it, so nothing outlives a stop
(:func:`~declinecraft.runtime.group_guard.descendants`, which the guard itself uses too).
"""

from __future__ import annotations

import os
import signal
import subprocess

from declinecraft.runtime.group_guard import descendants


def stop(process: subprocess.Popen[bytes], timeout: float) -> None:
    """End the server's process group, then any descendant that left it (vLLM's engine core may)."""
    if process.poll() is not None:
        _kill_group(process.pid)  # the leader died (killed): its group may still hold children
        return
    tree = descendants(process.pid)
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=timeout)
    _kill_group(process.pid)
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
