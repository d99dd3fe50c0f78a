"""How a child process ended, in words a user can act on, and the end of its log.

Used wherever the project reports a process it started: a local model server that died under a
batch, and setup's smoke check of each model. A negative return code is a signal; SIGSEGV and
SIGILL point at the native build, SIGKILL most often at the kernel's out-of-memory killer.
"""

from __future__ import annotations

import signal
from pathlib import Path

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
