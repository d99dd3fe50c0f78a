"""Tests for declinecraft.runtime.process_exit: how a child process ended, in words."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from declinecraft.runtime.process_exit import exit_description, log_tail, signal_name


class TestExitDescription:
    @pytest.mark.parametrize(
        ("code", "expected"),
        [
            (0, "exit status 0"),
            (3, "exit status 3"),
            (None, "still running"),
            (-signal.SIGSEGV, "killed by SIGSEGV (signal 11: a crash inside llama.cpp"),
            (-signal.SIGILL, "killed by SIGILL (signal 4: an instruction this CPU lacks"),
            (
                -signal.SIGKILL,
                "killed by SIGKILL (signal 9: killed from outside, most often by the kernel's out-of-memory",
            ),
        ],
    )
    def test_words(self, code: int | None, expected: str) -> None:
        """Exit codes read as statuses, negative ones as named signals with what they usually mean."""
        assert exit_description(code).startswith(expected)

    def test_unknown_signal(self) -> None:
        """A signal number Python does not know is still reported as a signal."""
        assert exit_description(-200) == "killed by signal 200"


class TestSignalName:
    def test_names(self) -> None:
        """Only signals have a name."""
        assert (signal_name(-11), signal_name(1), signal_name(None)) == ("SIGSEGV", None, None)


class TestLogTail:
    def test_last_lines_indented(self, tmp_path: Path) -> None:
        """The last lines of the log, indented; nothing for a missing file."""
        log = tmp_path / "server.log"
        log.write_text("".join(f"line {i}\n" for i in range(30)))
        assert log_tail(log, lines=2) == "    line 28\n    line 29"
        assert log_tail(tmp_path / "absent.log") == ""
