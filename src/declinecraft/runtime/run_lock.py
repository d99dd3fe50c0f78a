"""One writer per run: the locks a command holds while it writes ``outputs/<run>/``.

``python -m declinecraft.runtime.run_lock [--wait S] PARAMS_FILE -- COMMAND ...`` (what ``make all``,
``make nb`` and ``make evaluate`` run their work under) takes ``outputs/<run>/.lock`` of every run
the command may write: the params file's own run and each run that owns one of its stages. A
derived run (``base: default.yaml``) rebuilds its base's stages in the base's folder, so a
``make all`` on the base at the same time would write the same files; both now need the base's
lock. Locks are taken from the run itself down its chain of bases: every command takes them in
that one order (a run is never a base of its own base), so two commands never wait on each other
in a circle, and a busy run is reported as the run the user asked for when that is the one busy.

The locks are ``flock(2)`` locks held by this process, never by COMMAND: they die with their
holder, so a killed run leaves none behind, and a server that COMMAND leaves running holds none.
COMMAND runs with ``RUN_LOCKED`` naming the held runs, so its sub-makes skip them. A run that
stays busy for ``--wait`` seconds ends the command with exit status 75 and a message naming the
run and its lock file.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from declinecraft.core import catalogue, config, paths

#: The exit status of a command refused because a run stayed busy (flock(1)'s convention).
BUSY = 75
#: The variable naming the runs whose locks the running command's ancestors hold.
HELD_ENV = "RUN_LOCKED"
#: Seconds between two attempts at a busy lock.
POLL_S = 0.2


class RunBusy(Exception):
    """Another command holds a run's lock; the message names the run, its lock and the wait."""


def runs_written(params_file: str | Path) -> list[str]:
    """The runs a command on ``params_file`` may write: its own, then each base run that owns one
    of its stages, nearest base first (the order the locks are taken in).

    A params file that does not exist yet (``make evaluate`` on a new run) or does not load is
    its own run only; the command itself then reports what is wrong with it.
    """
    path = Path(params_file)
    own = path.stem
    try:
        cfg = config.load(path)
    except (config.ConfigError, OSError):
        return [own]
    owners = {cfg.owner(name) for name in catalogue.STAGES}
    chain: list[str] = []
    node: config.RunConfig | None = cfg
    while node is not None:
        chain.append(node.run)
        node = node.base
    return [run for i, run in enumerate(chain) if i == 0 or run in owners]


def acquire(lock_file: Path, *, run: str, wait_s: float, stack: ExitStack) -> None:
    """Take ``lock_file`` exclusively within ``wait_s`` seconds, released when ``stack`` closes.

    Raises:
        RunBusy: another process held it for the whole wait.
    """
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    handle: IO[bytes] = stack.enter_context(open(lock_file, "ab"))
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise RunBusy(
                    f"run '{run}' is busy: another 'make' holds {os.path.relpath(lock_file)} (waited {wait_s:g} s). "
                    "Wait for it to finish, or rerun with LOCK_WAIT=<seconds> to wait longer."
                ) from None
            time.sleep(POLL_S)


def run_locked(params_file: str | Path, command: list[str], *, wait_s: float = 0.0, root: Path | None = None) -> int:
    """Run ``command`` holding the lock of every run it may write that no ancestor holds yet;
    return its exit status (128 + the signal's number when a signal ended it)."""
    held = os.environ.get(HELD_ENV, "").split()
    wanted = [run for run in runs_written(params_file) if run not in held]
    if not wanted:
        return subprocess.call(command)
    outputs = paths.outputs_dir(root or paths.find_root(Path(params_file).resolve()))
    with ExitStack() as stack:
        for run in wanted:
            acquire(outputs / run / ".lock", run=run, wait_s=wait_s, stack=stack)
        env = {**os.environ, HELD_ENV: " ".join([*held, *wanted])}
        # A termination or hang-up sent to this process alone is passed on, so the locks are never
        # released while the command still runs; the handlers are in place before it starts (one
        # that comes first is passed on once it has). A hang-up inherited as ignored (nohup's) stays
        # ignored.
        started: list[subprocess.Popen[bytes]] = []
        pending: list[int] = []

        def forward(signum: int, _frame: object) -> None:
            if started:
                started[0].send_signal(signum)
            else:
                pending.append(signum)

        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, forward)
        child = subprocess.Popen(command, env=env)
        started.append(child)
        # Ctrl-C reaches the whole process group: the command handles it, this process waits for
        # it (ignored only now: an ignored signal would be inherited by the command).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for signum in pending:
            child.send_signal(signum)
        status = child.wait()
    return 128 - status if status < 0 else status


def main(argv: list[str]) -> int:
    """``[--wait S] PARAMS_FILE -- COMMAND ...``; exits with COMMAND's status, or 75 when busy."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.runtime.run_lock")
    parser.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a busy run")
    parser.add_argument("params_file")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command after the params file")
    try:
        return run_locked(args.params_file, command, wait_s=args.wait)
    except RunBusy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BUSY


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
