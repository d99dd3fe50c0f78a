"""Child processes that Linux kills when the process that started them dies, even by ``kill -9``.

:func:`popen` starts a command through this file, run as a tiny exec wrapper::

    python -I .../runtime/parent_death.py EXPECTED_PARENT_PID -- COMMAND...

(by path and isolated, ``-I``: the wrapper needs only the standard library, so it works whether
or not the package is installed, and imports nothing of the project).

The wrapper asks the kernel for ``SIGKILL`` on parent death (``prctl(PR_SET_PDEATHSIG)``, which
survives ``execve``), checks with ``getppid()`` that its parent is still the expected process
(closing the race where the parent dies before the request is made), and then replaces itself
with the real command, so the guarded process keeps the wrapper's pid and receives signals
directly.

Why this design:

* ``subprocess.Popen(preexec_fn=...)`` runs Python code between ``fork`` and ``exec``, which the
  Python documentation calls unsafe in the presence of threads (servers are started from
  ``asyncio.to_thread`` workers). The wrapper does the same work after ``exec``, in a fresh,
  single-threaded interpreter.
* The kernel sends the parent-death signal when the *thread* that forked the child exits, not
  the process. A server forked from an ``asyncio.to_thread`` worker would be killed as soon as
  its event loop's executor shuts down (``asyncio.run`` does that on return). So every guarded
  child is forked by one daemon thread per process that never returns: it ends only with the
  process, which is exactly the moment the child should die.
* A pipe watchdog (the child exits on EOF of a pipe only the parent holds) is independent of
  threads too, but needs a supervisor process to watch the pipe next to the server, signal
  forwarding through it, and a second guard for when the supervisor itself is killed; any
  ``fork`` without ``exec`` in the parent would also keep the pipe, and so the server, alive.
* ``setpriv --pdeathsig`` (util-linux) has the same thread caveat, does not close the race, and
  is not installed everywhere.

Where ``prctl`` is missing (not Linux) the wrapper simply runs the command; the caller's own
cleanup (atexit, context managers) is then the only guard.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import errno
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

PR_SET_PDEATHSIG = 1
PR_GET_PDEATHSIG = 2
#: Exit status of the wrapper when it refuses to run the command (parent gone, bad arguments).
REFUSED = 125
#: Exit status of the wrapper when the command could not be executed (as a shell reports it).
NOT_RUN = 127

_Job = tuple["concurrent.futures.Future[subprocess.Popen[Any]]", list[str], dict[str, Any]]


class _Forker:
    """The one thread of this process that forks guarded children (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[_Job] | None = None

    def reset(self) -> None:
        """Forget the thread after ``fork``: the child process has only the forking thread."""
        self._lock = threading.Lock()
        self._jobs = None

    def submit(self, command: list[str], kwargs: dict[str, Any]) -> subprocess.Popen[Any]:
        """Have the forker thread start ``command`` and return the process."""
        with self._lock:
            if self._jobs is None:
                self._jobs = queue.SimpleQueue()
                threading.Thread(target=self._run, args=(self._jobs,), name="declinecraft-forker", daemon=True).start()
            jobs = self._jobs
        future: concurrent.futures.Future[subprocess.Popen[Any]] = concurrent.futures.Future()
        jobs.put((future, command, kwargs))
        try:
            return future.result()
        except BaseException:
            # If waiting was interrupted (Ctrl-C), nobody will own the child: end it once it exists.
            future.add_done_callback(_kill_orphan)
            raise

    @staticmethod
    def _run(jobs: queue.SimpleQueue[_Job]) -> None:
        while True:
            future, command, kwargs = jobs.get()
            try:
                future.set_result(subprocess.Popen(command, **kwargs))
            except BaseException as exc:  # this thread must never end before the process does
                future.set_exception(exc)


def _kill_orphan(future: concurrent.futures.Future[subprocess.Popen[Any]]) -> None:
    if future.exception() is None:
        future.result().kill()


_forker = _Forker()
os.register_at_fork(after_in_child=_forker.reset)
_SCRIPT = os.path.abspath(__file__)


def wrap(command: Sequence[str], parent_pid: int | None = None) -> list[str]:
    """Return ``command`` prefixed with the wrapper that binds it to ``parent_pid`` (default: us).

    The program is resolved on ``PATH`` first, so a missing one fails here as plain ``Popen``
    would, not later inside the wrapper.

    Raises:
        FileNotFoundError: the program is not found.
    """
    program = shutil.which(command[0])
    if program is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command[0])
    pid = os.getpid() if parent_pid is None else parent_pid
    return [sys.executable, "-I", _SCRIPT, str(pid), "--", program, *command[1:]]


def popen(command: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """Start ``command`` (``subprocess.Popen`` keywords) so that it dies with this process.

    Safe to call from any thread; the child outlives the calling thread but never the process,
    whether it exits normally, raises, or is killed with ``kill -9``. The returned process's pid
    is the command's own.
    """
    if "preexec_fn" in kwargs:
        raise TypeError("popen() sets up the parent-death signal itself; preexec_fn is not allowed")
    return _forker.submit(wrap(command), kwargs)


def request_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies; False without prctl."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _main(argv: list[str]) -> int:
    """Wrapper entry point: ``EXPECTED_PARENT_PID -- COMMAND...``; returns only on failure."""
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: python -I parent_death.py PARENT_PID -- COMMAND...", file=sys.stderr)
        return REFUSED
    expected, command = int(argv[0]), argv[2:]
    guarded = request_parent_death_signal()
    if guarded and os.getppid() != expected:
        # The parent died before the request took effect, so no signal will ever come.
        print(f"parent_death: parent {expected} already gone; not starting {command[0]}", file=sys.stderr)
        return REFUSED
    # The interpreter ignores SIGPIPE and SIGXFSZ; give the command the defaults Popen would.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"parent_death: cannot run {command[0]}: {exc}", file=sys.stderr)
    return NOT_RUN


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
