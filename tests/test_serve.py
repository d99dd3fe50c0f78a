"""Tests of the local model server: weights, start, health, stop, and no orphans."""

from __future__ import annotations

import asyncio
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
from declinecraft.llm import parent_death, serve, vllm_engine

SMALL = "smollm2-135m"  # the fast model of docs/offline-models.md


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def wait_dead(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


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


def _child_script(body: str) -> str:
    """A script for a starter process that spawns ``sleep`` guarded, prints its pid, then waits."""
    return textwrap.dedent(f"""
        import asyncio, sys, time
        from declinecraft.llm import parent_death
        {body}
        print(proc.pid, flush=True)
        time.sleep(600)
    """)


class TestParentDeath:
    def test_exec_in_place_with_kill_on_parent_death(self) -> None:
        """The wrapper execs the command under the same pid, with SIGKILL as its parent-death signal."""
        probe = (
            "import ctypes, os; sig = ctypes.c_int(); "
            "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0); print(os.getpid(), sig.value)"
        )  # 2 = PR_GET_PDEATHSIG
        proc = parent_death.popen([sys.executable, "-c", probe], stdout=subprocess.PIPE)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
        assert out.split() == [str(proc.pid).encode(), str(int(signal.SIGKILL)).encode()]

    def test_refuses_when_parent_is_not_the_expected_one(self, tmp_path: Path) -> None:
        """A wrapper whose parent already died (here: is not the named one) never runs the command."""
        marker = tmp_path / "ran"
        done = subprocess.run(parent_death.wrap(["touch", str(marker)], parent_pid=1), capture_output=True, check=False)
        assert done.returncode == parent_death.REFUSED and b"already gone" in done.stderr
        assert not marker.exists()

    def test_missing_program_fails_in_the_caller(self) -> None:
        """A program not on PATH raises at once, as plain Popen would, instead of a dead child."""
        with pytest.raises(FileNotFoundError):
            parent_death.popen(["declinecraft-no-such-program"])

    def test_works_again_in_a_forked_child(self) -> None:
        """After fork (which keeps only the calling thread) a child process can still start guarded children."""
        script = textwrap.dedent("""
            import os, signal
            from declinecraft.llm import parent_death
            parent_death.popen(["true"]).wait()
            pid = os.fork()
            if pid == 0:
                signal.alarm(20)  # a lost forker thread would block here forever
                os._exit(parent_death.popen(["sh", "-c", "exit 7"]).wait())
            print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        """)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
        assert done.stdout.split() == ["7"], done.stderr

    def test_outlives_the_thread_that_started_it(self) -> None:
        """The child survives the exit of the to_thread worker that started it (asyncio.run joins it)."""
        proc = asyncio.run(asyncio.to_thread(parent_death.popen, ["sleep", "60"]))
        try:
            time.sleep(1.0)
            assert proc.poll() is None
        finally:
            proc.kill()
            proc.wait(timeout=10)

    @pytest.mark.parametrize(
        "body",
        [
            'proc = parent_death.popen(["sleep", "600"])',
            'proc = asyncio.run(asyncio.to_thread(parent_death.popen, ["sleep", "600"]))',
        ],
        ids=["main-thread", "to-thread"],
    )
    def test_dies_with_its_starter_after_kill_9(self, body: str) -> None:
        """kill -9 of the starting process kills the child, from whichever thread it was started."""
        starter = subprocess.Popen([sys.executable, "-c", _child_script(body)], stdout=subprocess.PIPE, text=True)
        pid = int(starter.stdout.readline())
        time.sleep(0.5)  # the starting thread (if any) has exited by now
        assert alive(pid)
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=30)
        assert wait_dead(pid)


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
        assert wait_dead(pid)
        assert not server.healthy()

    def test_no_orphan_after_exception(self, root: Path, tmp_path: Path) -> None:
        """An exception inside the serve block stops the server; so does kill -9 of its parent, also
        when the server was started from a worker thread that has exited since."""
        script = textwrap.dedent(f"""
            import asyncio, sys, time
            from pathlib import Path
            from declinecraft.core import registry
            from declinecraft.llm import parent_death, serve, vllm_engine
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
        assert wait_dead(int(done.stdout.split()[0]))

        for mode in ("main", "thread"):
            proc = subprocess.Popen([sys.executable, "-c", script, mode], stdout=subprocess.PIPE, text=True)
            pid = int(proc.stdout.readline())
            time.sleep(1.0)  # a to_thread worker has exited by now; the server must not have
            assert alive(pid) and serve._healthy(f"http://{serve.HOST}:{_port_of(pid)}/v1"), mode
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            assert wait_dead(pid), mode

    def test_reuse_recorded_server(self, spec: registry.ModelSpec, tmp_path: Path) -> None:
        """A recorded server is reused (not owned), and survives the reuser's stop."""
        with serve.serve(spec, tmp_path, reuse=False, record=True) as first:
            second = serve.start(spec, tmp_path, reuse=True)
            assert second.base_url == first.base_url and not second.owned
            second.stop()
            assert first.healthy()
        assert serve.find_running(spec, tmp_path) is None
