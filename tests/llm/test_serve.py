"""Tests for declinecraft.llm.serve: weights, start, health, stop, and no orphans."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from declinecraft.core import registry
from declinecraft.llm import serve, vllm_engine
from tests.support import processes

SMALL = "smollm2-135m"  # the fast model of docs/offline-models.md


def _port_of(pid: int) -> str:
    """The --port argument of a server process, read from its command line."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return argv[argv.index(b"--port") + 1].decode()


@pytest.fixture(scope="module")
def spec(root: Path) -> registry.ModelSpec:
    return registry.get_model(root / "params" / "models.yaml", SMALL)


class TestFreePort:
    def test_port_is_bindable(self) -> None:
        """The returned port can be bound on loopback."""
        import socket

        port = serve.free_port()
        with socket.socket() as sock:
            sock.bind((serve.HOST, port))


class TestGgufPath:
    def test_single_file_package(self, spec: registry.ModelSpec, tmp_path: Path) -> None:
        """A one-wheel model resolves to the GGUF inside its package."""
        path = serve.gguf_path(spec, tmp_path)
        assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000

    def test_parts_checked_against_sha(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Parts are concatenated in order and a wrong sha256 is refused, leaving no file behind."""
        parts = []
        for i, data in enumerate([b"abc", b"def"], start=1):
            p = tmp_path / f"part{i}"
            p.write_bytes(data)
            parts.append(p)
        monkeypatch.setattr(serve, "_part_path", lambda module: parts[int(module[-1]) - 1])
        import hashlib

        good = registry.ModelSpec(
            id="toy",
            backend="llamacpp",
            served_name="toy",
            gguf={"prefix": "toy_part", "parts": 2, "sha256": hashlib.sha256(b"abcdef").hexdigest()},
        )
        assert serve.gguf_path(good, tmp_path).read_bytes() == b"abcdef"
        bad = registry.ModelSpec(
            id="bad", backend="llamacpp", served_name="bad", gguf={"prefix": "toy_part", "parts": 2, "sha256": "0" * 64}
        )
        with pytest.raises(serve.ServeError, match="sha256"):
            serve.gguf_path(bad, tmp_path)
        assert not list((tmp_path / "models").glob("bad-*.gguf"))


class TestStartupTimeoutOf:
    @pytest.mark.parametrize(
        ("backend", "size", "extra", "want"),
        [
            ("vllm", 235.0, {}, 600 + 8 * 235),
            ("vllm", None, {}, 600),
            ("llamacpp", 1.5, {}, 600),
            ("vllm", 8.0, {"start_timeout_s": 90}, 90),
        ],
    )
    def test_scales_with_size(self, backend: str, size: float | None, extra: dict[str, object], want: float) -> None:
        """A vLLM server gets 8 s more per billion parameters; an entry's start_timeout_s wins."""
        spec = registry.ModelSpec(id="m", backend=backend, served_name="m", params_total_b=size, extra=extra)
        assert serve.startup_timeout_of(spec) == want


class TestServerCommand:
    def test_hosted_backend_refused(self) -> None:
        """A hosted model is never started locally."""
        spec = registry.ModelSpec(id="h", backend="openai", served_name="h")
        with pytest.raises(serve.ServeError, match="hosted"):
            serve.server_command(spec, 1234, Path("/tmp"))

    def test_vllm_command(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A vLLM entry becomes vLLM's server module for its repo on loopback with the served name."""
        engine = vllm_engine.Engine("/venv/bin/python", "vllm", "0.33.0", "gpu")
        monkeypatch.setattr(vllm_engine, "locate", lambda cache_dir: engine)
        spec = registry.ModelSpec(id="v", backend="vllm", served_name="qwen", hf_repo="Qwen/Qwen3-8B")
        cmd = serve.server_command(spec, 8001, tmp_path)
        assert cmd[:3] == ["/venv/bin/python", "-m", vllm_engine.ENTRY_MODULE]
        assert cmd[cmd.index("--model") + 1] == "Qwen/Qwen3-8B" and cmd[cmd.index("--served-model-name") + 1] == "qwen"
        assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and "8001" in cmd


@pytest.mark.slow
class TestServe:
    def test_chat_then_stop(self, spec: registry.ModelSpec, tmp_path: Path) -> None:
        """A real llama.cpp server answers a chat request, and stopping it ends the process."""
        with serve.serve(spec, tmp_path, reuse=False) as server:
            assert server.healthy()
            reply = httpx.post(
                f"{server.base_url}/chat/completions",
                json={
                    "model": spec.served_name,
                    "messages": [{"role": "user", "content": "Say hi."}],
                    "max_tokens": 8,
                    "temperature": 0,
                },
                timeout=60,
            )
            assert reply.status_code == 200
            assert reply.json()["choices"][0]["message"]["content"]
            pid = server.process.pid
        assert processes.wait_dead(pid)
        assert not server.healthy()

    def test_threads_wait_passively(
        self, spec: registry.ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A llama.cpp server's OpenMP threads sleep at barriers, unless the caller's environment
        chose another OMP_WAIT_POLICY."""
        for chosen, expected in ((None, b"passive"), ("active", b"active")):
            if chosen is None:
                monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
            else:
                monkeypatch.setenv("OMP_WAIT_POLICY", chosen)
            with serve.serve(spec, tmp_path, reuse=False) as server:
                assert server.process is not None
                environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
            assert b"OMP_WAIT_POLICY=" + expected in environ

    def test_no_orphan_after_exception(self, root: Path, tmp_path: Path) -> None:
        """An exception inside the serve block stops the server; so does kill -9 of its parent, also
        when the server was started from a worker thread that has exited since."""
        script = textwrap.dedent(f"""
            import asyncio, sys, time
            from pathlib import Path
            from declinecraft.core import registry
            from declinecraft.llm import serve, vllm_engine
            from declinecraft.runtime import parent_death
            spec = registry.get_model({str(root / "params" / "models.yaml")!r}, {SMALL!r})
            mode = sys.argv[1]
            if mode == "raise":
                with serve.serve(spec, Path({str(tmp_path)!r}), reuse=False) as s:
                    print(s.process.pid, flush=True)
                    raise RuntimeError("boom")
            if mode == "thread":
                s = asyncio.run(asyncio.to_thread(serve.start, spec, Path({str(tmp_path)!r}), reuse=False))
            else:
                s = serve.start(spec, Path({str(tmp_path)!r}), reuse=False)
            print(s.process.pid, flush=True)
            time.sleep(600)
        """)
        done = subprocess.run(
            [sys.executable, "-c", script, "raise"], capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode != 0 and "boom" in done.stderr
        assert processes.wait_dead(int(done.stdout.split()[0]))

        for mode in ("main", "thread"):
            proc = subprocess.Popen([sys.executable, "-c", script, mode], stdout=subprocess.PIPE, text=True)
            pid = int(proc.stdout.readline())
            time.sleep(1.0)  # a to_thread worker has exited by now; the server must not have
            assert processes.alive(pid) and serve.healthy(f"http://{serve.HOST}:{_port_of(pid)}/v1"), mode
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            assert processes.wait_dead(pid), mode

    def test_reuse_recorded_server(self, spec: registry.ModelSpec, tmp_path: Path) -> None:
        """A recorded server is reused (not owned), and survives the reuser's stop."""
        with serve.serve(spec, tmp_path, reuse=False, record=True) as first:
            second = serve.start(spec, tmp_path, reuse=True)
            assert second.base_url == first.base_url and not second.owned
            second.stop()
            assert first.healthy()
        assert serve.find_running(spec, tmp_path) is None


#: A stage's way to a local server: the supervisor every client wraps a llama.cpp model in.
STAGE_SCRIPT = """
import sys, time
from pathlib import Path
from declinecraft.core import registry
from declinecraft.llm.supervisor import LocalServer
spec = registry.get_model(sys.argv[1], sys.argv[2])
server = LocalServer(spec, Path(sys.argv[3]))
server.urls()
print(server.servers[-1].process.pid, flush=True)
time.sleep(600)
"""


def start_serving(command: list[str], root: Path, cache: Path) -> tuple[subprocess.Popen[str], int]:
    """Start ``command`` in a session of its own; return it and the pid of the server it started,
    read from the state file (``llm.serve``) or the first line it prints (a stage)."""
    env = {**os.environ, "DECLINECRAFT_CACHE": str(cache)}
    proc = subprocess.Popen(
        command,
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=processes.default_signals,
    )
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if line.startswith("serving"):
        state = json.loads((serve.servers_dir(cache) / f"{SMALL}.json").read_text())
        return proc, int(state["pid"])
    assert line.strip().isdigit(), line + proc.stderr.read()  # type: ignore[union-attr]
    return proc, int(line)


@pytest.mark.slow
class TestStopSignals:
    """No server outlives the process that started it, and that process ends on each stop signal."""

    @pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    def test_serve_command(self, root: Path, tmp_path: Path, sig: signal.Signals) -> None:
        """``python -m declinecraft.llm.serve`` stops its server and exits 0 on SIGTERM, SIGINT and
        SIGHUP (its SIGTERM used to leave the llama.cpp server running under init)."""
        proc, pid = start_serving([sys.executable, "-m", "declinecraft.llm.serve", SMALL], root, tmp_path)
        assert processes.alive(pid)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and f"{sig.name}: stopped serving {SMALL}" in err, err[-2000:]
        assert processes.wait_dead(pid)
        assert serve.find_running(registry.get_model(root / "params" / "models.yaml", SMALL), tmp_path) is None

    def test_serve_command_under_nohup(self, root: Path, tmp_path: Path) -> None:
        """Under nohup, SIGHUP is ignored as asked and the server keeps serving; SIGTERM then stops
        both (it used to end the command and leave the server running under init)."""
        command = ["nohup", sys.executable, "-m", "declinecraft.llm.serve", SMALL]
        proc, pid = start_serving(command, root, tmp_path)
        proc.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=2)
        assert serve.healthy(f"http://{serve.HOST}:{_port_of(pid)}/v1")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and f"SIGTERM: stopped serving {SMALL}" in err, err[-2000:]
        assert processes.wait_dead(pid)

    def test_serve_command_killed(self, root: Path, tmp_path: Path) -> None:
        """kill -9 of ``llm.serve`` (nothing can run then) still ends its server."""
        proc, pid = start_serving([sys.executable, "-m", "declinecraft.llm.serve", SMALL], root, tmp_path)
        proc.kill()
        proc.communicate(timeout=30)
        assert processes.wait_dead(pid)

    @pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
    def test_stage_process(self, root: Path, tmp_path: Path, sig: signal.Signals) -> None:
        """A process that started a server the way a stage does (its client's supervisor) ends on
        SIGTERM, SIGINT and SIGHUP, and its server ends with it."""
        models = str(root / "params" / "models.yaml")
        proc, pid = start_serving([sys.executable, "-c", STAGE_SCRIPT, models, SMALL, str(tmp_path)], root, tmp_path)
        assert processes.alive(pid)
        proc.send_signal(sig)
        proc.communicate(timeout=30)
        assert proc.returncode != 0
        assert processes.wait_dead(pid)
