"""Stopping on SIGTERM and SIGHUP the way Ctrl-C stops: with every ``finally`` and ``with`` block run.

Python turns SIGINT into :class:`KeyboardInterrupt`, so context managers and ``finally`` blocks
clean up (a local server is stopped, a file is closed), but SIGTERM and SIGHUP end the process at
once by default, skipping them and ``atexit`` too. A scheduler, a container or systemd stops a job
with SIGTERM; closing a terminal sends SIGHUP. Within :func:`stop_on_signals` all three raise
:class:`Stopped` (a ``KeyboardInterrupt``, so code that already handles Ctrl-C handles them alike).

A signal the process inherited as ignored stays ignored: ``nohup`` ignores SIGHUP and a shell's
background job ignores SIGINT, by the user's choice. Only the first signal raises: a second one
during the clean-up is ignored, so the clean-up (which has its own time limits) is not cut short.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals that ask a process to stop.
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived; ``signum`` says which (``name``: e.g. ``"SIGTERM"``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        """The signal's name, e.g. ``"SIGTERM"``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's status for a process ended by this signal (128 + its number)."""
        return 128 + self.signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM, SIGINT and SIGHUP raise :class:`Stopped` (once) in the main thread.

    Signals inherited as ignored stay ignored; the previous handlers come back when the block ends.

    Raises:
        ValueError: not called from the main thread (Python sets signal handlers only there).
    """
    raised: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        if not raised:
            raised.append(signum)
            raise Stopped(signum)

    previous = {}
    for sig in SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
