"""Tests for declinecraft.llm.kept: a server kept for the run is reused by the run's later stages,
makes room for another, and never outlives the run (real llama.cpp servers, slow)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from declinecraft.core import registry
from declinecraft.llm import kept, resources, serve
from tests.support import processes

SMALL, OTHER = "smollm2-135m", "qwen2.5-coder-0.5b"

#: A stage's way to a local server under Make: the supervisor every client wraps a model in.
STAGE_SCRIPT = """
import json, sys
from pathlib import Path
import httpx
from declinecraft.core import registry
from declinecraft.llm.supervisor import LocalServer
spec = registry.get_model(sys.argv[1], sys.argv[2])
server = LocalServer(spec, Path(sys.argv[3]))
url = server.urls()[0]
body = {"model": spec.served_name, "messages": [{"role": "user", "content": "Name a block."}],
        "max_tokens": 12, "temperature": 0}
text = httpx.post(f"{url}/chat/completions", json=body, timeout=120).json()["choices"][0]["message"]["content"]
server.close()
print(json.dumps({"url": url, "keeper": server.servers[-1].process.pid, "text": text}))
"""


@pytest.fixture()
def run() -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for the run's ``make``: the keepers live as long as it does."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def spec_of(root: Path, model: str) -> registry.ModelSpec:
    return registry.get_model(root / "params" / "models.yaml", model)


def _ended_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def state_of(cache: Path, run: subprocess.Popen[bytes], model: str) -> dict[str, object]:
    path = serve.servers_dir(cache) / f"run-{run.pid}" / f"{model}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


class TestRunPid:
    def test_only_a_live_process(self, run: subprocess.Popen[bytes]) -> None:
        """The variable names the run only while that process lives; unset or junk is no run."""
        assert kept.run_pid({kept.RUN_PID_ENV: str(run.pid)}) == run.pid
        assert kept.run_pid({}) is None and kept.run_pid({kept.RUN_PID_ENV: "x"}) is None
        run.kill()
        run.wait()
        assert kept.run_pid({kept.RUN_PID_ENV: str(run.pid)}) is None


class TestIdentity:
    def test_threads_and_gpus_count(self, root: Path, tmp_path: Path) -> None:
        """Another thread count or other GPUs make another server; the port does not."""
        spec = spec_of(root, SMALL)
        base = kept.identity(spec, tmp_path, None, None)
        assert base == kept.identity(spec, tmp_path, None, None)
        assert base != kept.identity(spec, tmp_path, 1, None) and base != kept.identity(spec, tmp_path, None, [0])

    def test_spec_round_trip(self, root: Path) -> None:
        """The keeper rebuilds the entry the stage asked for."""
        import dataclasses

        spec = spec_of(root, OTHER)
        assert kept.spec_from_json(json.loads(json.dumps(dataclasses.asdict(spec), default=str))) == spec


class TestHeldGpus:
    def test_live_keepers_only(self, tmp_path: Path, run: subprocess.Popen[bytes]) -> None:
        """The GPUs of the run's kept servers whose keeper lives, by model; none outside a run."""
        folder = serve.servers_dir(tmp_path) / f"run-{run.pid}"
        folder.mkdir(parents=True)
        for model, pid, gpus in (("a", run.pid, [2, 3]), ("b", _ended_pid(), [0]), ("c", run.pid, None)):
            (folder / f"{model}.json").write_text(json.dumps({"keeper_pid": pid, "key": model, "gpus": gpus}))
        assert kept.held_gpus(tmp_path, run.pid) == {"a": [2, 3]}
        assert kept.held_gpus(tmp_path, None) == {}


class TestMakeRoom:
    """Which kept servers a new one stops, with stand-in keepers (a process that ends on SIGTERM)."""

    def keepers(self, folder: Path, lent: dict[str, list[int] | None]) -> dict[str, subprocess.Popen[bytes]]:
        folder.mkdir(parents=True)
        procs = {}
        for name, gpus in lent.items():
            procs[name] = subprocess.Popen(["sleep", "600"])
            needs = {"gpus": 2, "cores": 4.0, "memory_gb": 10.0}
            state = {"keeper_pid": procs[name].pid, "key": name, "needs": needs, "gpus": gpus}
            (folder / f"{name}.json").write_text(json.dumps(state))
        return procs

    def test_gpus_lent_to_the_new_server_are_freed(self, tmp_path: Path) -> None:
        """A server kept on a GPU lent to the new one is stopped, though the machine has room for
        both by count; one on other GPUs stays. A server that sees every GPU shares any."""
        procs = self.keepers(tmp_path / "run", {"on01": [0, 1], "on45": [4, 5], "every": None})
        has, need = resources.Resources(8, 64.0, 500.0), resources.Resources(2, 4.0, 10.0)
        try:
            kept._make_room(tmp_path / "run", need, has, [1, 2])
            assert processes.wait_dead(procs["on01"].pid) and processes.wait_dead(procs["every"].pid)
            assert processes.alive(procs["on45"].pid)
            assert sorted(p.stem for p in (tmp_path / "run").glob("*.json")) == ["on45"]
        finally:
            for proc in procs.values():
                proc.kill()
                proc.wait()

    def test_least_recently_used_first(self, tmp_path: Path) -> None:
        """Without room for one more, the server used longest ago is stopped, and only it."""
        procs = self.keepers(tmp_path / "run", {"old": [0, 1], "new": [2, 3]})
        os.utime(tmp_path / "run" / "old.json", (1, 1))
        has, need = resources.Resources(4, 64.0, 500.0), resources.Resources(2, 4.0, 10.0)
        try:
            kept._make_room(tmp_path / "run", need, has, [4, 5])
            assert processes.wait_dead(procs["old"].pid) and processes.alive(procs["new"].pid)
        finally:
            for proc in procs.values():
                proc.kill()
                proc.wait()


@pytest.mark.slow
class TestKept:
    def test_later_stage_reuses_then_run_end_stops(
        self, root: Path, tmp_path: Path, run: subprocess.Popen[bytes]
    ) -> None:
        """Two stages of one run send to one server started once, and get the same greedy answer;
        when the run ends, the keeper and its server end and the state file goes."""
        env = {**os.environ, kept.RUN_PID_ENV: str(run.pid)}
        command = [sys.executable, "-c", STAGE_SCRIPT, str(root / "params" / "models.yaml"), SMALL, str(tmp_path)]
        first, second = (
            json.loads(subprocess.run(command, env=env, capture_output=True, check=True).stdout) for _ in "12"
        )
        assert first == second
        state = state_of(tmp_path, run, SMALL)
        assert state["keeper_pid"] == first["keeper"] and processes.alive(int(state["server_pid"]))  # type: ignore[call-overload]
        run.kill()
        run.wait()
        assert processes.wait_dead(first["keeper"]) and processes.wait_dead(int(state["server_pid"]))  # type: ignore[call-overload]
        assert state_of(tmp_path, run, SMALL) == {}

    def test_room_made_for_another(self, root: Path, tmp_path: Path, run: subprocess.Popen[bytes]) -> None:
        """A server that declares nothing takes the machine: a kept one no longer used is stopped
        before another model's starts; one still in use is never stopped."""
        small, other = spec_of(root, SMALL), spec_of(root, OTHER)
        gone = serve.servers_dir(tmp_path) / f"run-{_ended_pid()}"
        gone.mkdir(parents=True)
        (gone / ".lock").touch()
        first = kept.start(small, tmp_path, run.pid)
        assert not gone.exists()  # an ended run's folder is removed
        first.stop()  # kept up, no longer used
        second = kept.start(other, tmp_path, run.pid)
        assert processes.wait_dead(first.process.pid) and state_of(tmp_path, run, SMALL) == {}
        third = kept.start(small, tmp_path, run.pid)  # the second is still in use: both up
        assert processes.alive(second.process.pid) and second.healthy() and third.healthy()
        assert httpx.get(f"{third.base_url}/models", timeout=10).status_code == 200
        for server in (second, third):
            server.evict()
            assert processes.wait_dead(server.process.pid)

    def test_one_start_for_two_at_once(self, root: Path, tmp_path: Path, run: subprocess.Popen[bytes]) -> None:
        """Two asking for one model at once share one keeper: the second waits for the first's start."""
        import concurrent.futures

        spec = spec_of(root, SMALL)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            servers = list(pool.map(lambda _: kept.start(spec, tmp_path, run.pid), range(2)))
        assert servers[0].process.pid == servers[1].process.pid and servers[0].base_url == servers[1].base_url
        assert len(list(serve.servers_dir(tmp_path).glob(f"{SMALL}-*.log"))) == 1 and servers[1].healthy()
        servers[0].evict()
        assert processes.wait_dead(servers[0].process.pid)

    @pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL])
    def test_keeper_stopped(
        self, root: Path, tmp_path: Path, run: subprocess.Popen[bytes], sig: signal.Signals
    ) -> None:
        """A keeper ends on each stop signal and takes its server along, even on kill -9."""
        server = kept.start(spec_of(root, SMALL), tmp_path, run.pid)
        served = int(state_of(tmp_path, run, SMALL)["server_pid"])  # type: ignore[call-overload]
        os.kill(server.process.pid, sig)
        assert processes.wait_dead(server.process.pid) and processes.wait_dead(served)
        assert not server.healthy()
