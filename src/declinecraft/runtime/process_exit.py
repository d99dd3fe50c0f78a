"""How a child process ended, in words a user can act on, and the end of its log.

Used wherever the project reports a process it started: a local model server that died under a
batch, and setup's smoke check of each model. A negative return code is a signal; SIGSEGV and
SIGILL point at the native build, SIGKILL most often at the kernel's out-of-memory killer.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: What a signal usually means for a model process, and so what to try.
SIGNAL_HINTS = {
    "SIGSEGV": "a crash inside llama.cpp's native code (a build for another CPU, or a kernel bug)",
    "SIGILL": "an instruction this CPU lacks: the native build was compiled for another CPU",
    "SIGKILL": "killed from outside, most often by the kernel's out-of-memory killer (see `dmesg`)",
    "SIGBUS": "a memory-mapped model file changed or vanished under the process",
    "SIGABRT": "the process aborted itself (an assertion in native code)",
}


def exit_description(returncode: int | None) -> str:
    """``"killed by SIGSEGV (signal 11: a crash inside ...)"``, ``"exit status 3"`` or ``"still running"``."""
    if returncode is None:
        return "still running"
    if returncode >= 0:
        return f"exit status {returncode}"
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"killed by signal {number}"
    hint = SIGNAL_HINTS.get(name)
    return f"killed by {name} (signal {number}" + (f": {hint})" if hint else ")")


def signal_name(returncode: int | None) -> str | None:
    """The signal's name ("SIGSEGV") when ``returncode`` says a signal ended the process."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def log_tail(path: Path | None, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file, each indented ("" when it can't be read)."""
    if path is None:
        return ""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join("    " + line for line in text.rstrip("\n").splitlines()[-lines:])


@dataclass(frozen=True)
class Child:
    """How a child process ended and what it printed."""

    returncode: int | None
    """The exit status (negative: the signal); None when it ran past its time and was killed."""
    stdout: str
    stderr: str

    def result(self) -> dict[str, Any] | None:
        """The last line of stdout that is a JSON object (the child's result), if any."""
        for line in reversed(self.stdout.strip().splitlines()):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            return value if isinstance(value, dict) else None
        return None

    def ended(self, timeout_s: float) -> str:
        """How it ended, in words (:func:`exit_description`, or that it ran out of time)."""
        return (
            f"did not finish within {timeout_s:.0f} s" if self.returncode is None else exit_description(self.returncode)
        )

    def stderr_tail(self, lines: int = 8) -> str:
        """The last lines of its stderr, indented."""
        return "\n".join("    " + line for line in self.stderr.strip().splitlines()[-lines:])


def run_child(command: Sequence[str], timeout_s: float) -> Child:
    """Run ``command`` to its end (or ``timeout_s``), capturing its output."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return Child(None, out, err)
    return Child(done.returncode, done.stdout, done.stderr)


def report(failures: Sequence[str]) -> int:
    """Print each failure message to stderr; the exit status of a check (1 when any failed)."""
    for message in failures:
        print(message, file=sys.stderr)
    return 1 if failures else 0
