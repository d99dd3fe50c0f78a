"""Tests for declinecraft.runtime.group_guard: a vLLM server's own processes end with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from declinecraft.llm import vllm_engine
from tests.support import engines, processes


class TestGroupGuard:
    """A vLLM server's own processes end with it: when it is killed, and when its starter is."""

    def start_in_child(self, tmp_path: Path) -> tuple[subprocess.Popen[str], dict]:
        engines.write_engine(tmp_path, vllm_engine.Engine(sys.executable, "vllm", "9.9", "gpu"))
        script = (
            "import sys, time; from pathlib import Path; from declinecraft.core import registry; "
            "from declinecraft.llm import serve; "
            "spec = registry.ModelSpec(id='m', backend='vllm', served_name='s', hf_repo='Org/Model'); "
            f"s = serve.start(spec, Path({str(tmp_path)!r}), reuse=False, startup_timeout=60); "
            "print(s.process.pid, flush=True); time.sleep(600)"
        )
        env = {
            **os.environ,
            "FAKE_VLLM_RECORD": str(tmp_path / "record.json"),
            "PYTHONPATH": os.pathsep.join([str(engines.FAKE_VLLM), os.environ.get("PYTHONPATH", "")]),
        }
        starter = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
        guard = int(starter.stdout.readline())
        return starter, {**json.loads((tmp_path / "record.json").read_text()), "guard": guard}

    @staticmethod
    def gone(*pids: int) -> bool:
        deadline = time.monotonic() + 20
        while any(processes.alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        return not any(processes.alive(p) for p in pids)

    def test_starter_killed(self, tmp_path: Path) -> None:
        """kill -9 of the starting process ends the guard, the server and the server's own children."""
        starter, record = self.start_in_child(tmp_path)
        assert processes.alive(record["pid"]) and processes.alive(record["helper"])
        starter.kill()
        starter.wait(timeout=30)
        starter.stdout.close()
        assert self.gone(record["guard"], record["pid"], record["helper"])

    def test_server_killed(self, tmp_path: Path) -> None:
        """kill -9 of the server process ends its children and the guard (so the supervisor sees it)."""
        starter, record = self.start_in_child(tmp_path)
        try:
            os.kill(record["pid"], 9)
            assert self.gone(record["guard"], record["helper"])
        finally:
            starter.kill()
            starter.wait(timeout=30)
            starter.stdout.close()
