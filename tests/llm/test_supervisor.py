"""Tests for declinecraft.llm.supervisor: a local server started on first use, restarted a bounded
number of times, and every server stopped on close (no real server: ``serve.start`` is replaced).

A real llama.cpp server killed mid-batch is tests/faults/test_endpoint.py's TestLocalServerKilled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from declinecraft.llm import serve
from declinecraft.llm.supervisor import LocalServer
from declinecraft.llm.transport import LLMError
from tests.support import model_specs


class _Process:
    """A process whose exit code the test sets (None while it runs)."""

    def __init__(self) -> None:
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code


class _Server:
    """What ``serve.start`` returns: a URL, a process, a log file and ``stop``."""

    def __init__(self, n: int, log_file: Path) -> None:
        self.base_url = f"http://127.0.0.1:{9000 + n}/v1"
        self.process, self.log_file, self.stopped = _Process(), log_file, False

    def stop(self) -> None:
        self.stopped = True


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[_Server, dict[str, Any]]]:
    """Every server ``serve.start`` was asked for, with the keywords it was lent."""
    servers: list[tuple[_Server, dict[str, Any]]] = []
    log_file = tmp_path / "server.log"
    log_file.write_text("line one\nout of memory\n")

    def start(spec: object, cache_dir: Path, **lent: Any) -> _Server:
        servers.append((_Server(len(servers), log_file), lent))
        return servers[-1][0]

    monkeypatch.setattr(serve, "start", start)
    return servers


class TestLocalServer:
    def test_started_once_on_first_use(self, started: list[tuple[_Server, dict[str, Any]]], tmp_path: Path) -> None:
        """Nothing starts until the URLs are asked for; asking again reuses the running server."""
        server = LocalServer(model_specs.spec(), tmp_path)
        assert started == []
        assert server.urls() == server.urls() == ("http://127.0.0.1:9000/v1",)
        assert len(started) == 1 and started[0][1] == {}

    def test_lends_only_what_was_given(self, started: list[tuple[_Server, dict[str, Any]]], tmp_path: Path) -> None:
        """GPUs and threads reach ``serve.start`` only when lent."""
        LocalServer(model_specs.spec(), tmp_path, gpus=[0, 1], threads=4).urls()
        assert started[0][1] == {"gpus": (0, 1), "n_threads": 4}

    def test_alive_follows_the_process(self, started: list[tuple[_Server, dict[str, Any]]], tmp_path: Path) -> None:
        server = LocalServer(model_specs.spec(), tmp_path)
        server.urls()
        assert server.alive()
        started[0][0].process.code = -9
        assert not server.alive()

    def test_restart_once_per_generation(self, started: list[tuple[_Server, dict[str, Any]]], tmp_path: Path) -> None:
        """Two callers that saw the same dead server cause one restart; the dead one is stopped."""
        server = LocalServer(model_specs.spec(), tmp_path)
        server.urls()
        started[0][0].process.code = -9
        first = server.restart(0, "connection reset")
        second = server.restart(0, "connection reset")
        assert first == second == ("http://127.0.0.1:9001/v1",)
        assert len(started) == 2 and started[0][0].stopped and server.restarts == 1

    def test_past_the_limit_names_model_and_log(
        self, started: list[tuple[_Server, dict[str, Any]]], tmp_path: Path
    ) -> None:
        """One death more than ``max_restarts`` fails with the model, the signal and the log's end."""
        spec = model_specs.spec()
        server = LocalServer(spec, tmp_path, max_restarts=1)
        server.urls()
        started[0][0].process.code = -9
        server.restart(0, "reset")
        started[1][0].process.code = -9
        with pytest.raises(LLMError) as error:
            server.restart(1, "reset")
        message = str(error.value)
        assert spec.id in message and "2 times" in message and "out of memory" in message
        assert "SIGKILL" in message

    def test_close_stops_every_server(self, started: list[tuple[_Server, dict[str, Any]]], tmp_path: Path) -> None:
        server = LocalServer(model_specs.spec(), tmp_path)
        server.urls()
        started[0][0].process.code = 1
        server.restart(0, "exited")
        server.close()
        assert [s.stopped for s, _ in started] == [True, True]
