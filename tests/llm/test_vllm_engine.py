"""Tests for declinecraft.llm.vllm_engine against a stand-in vLLM (tests/support/fake_vllm): engine,
launch line, environment, converted folders, cache identity and HTTP 400 refusals."""

from __future__ import annotations

import json
import os
import sys
import time
import tomllib
from pathlib import Path

import pytest

from declinecraft.core import registry
from declinecraft.llm import cache, serve, vllm_engine
from declinecraft.llm.client import Request, client_for, endpoint_identity
from tests.support import engines, processes

GPU = vllm_engine.Engine("/usr/bin/python3", "vllm", "0.33.0", "gpu")


def entry(**extra: object) -> registry.ModelSpec:
    return registry.ModelSpec(id="m", backend="vllm", served_name="served-m", hf_repo="Org/Model", extra=dict(extra))


class TestCommand:
    def test_entry_module_in_engine_interpreter(self) -> None:
        """Both wheels start through vLLM's server module in the engine's own interpreter."""
        for engine in (engines.CPU, GPU):
            cmd = vllm_engine.command(entry(), "/models/m", "127.0.0.1", 8001, engine)
            assert cmd[:3] == [engine.python, "-m", "vllm.entrypoints.openai.api_server"]
            assert cmd[cmd.index("--model") + 1] == "/models/m" and cmd[cmd.index("--port") + 1] == "8001"
            assert cmd[cmd.index("--served-model-name") + 1] == "served-m"
            assert cmd[cmd.index("--generation-config") + 1] == "vllm"

    def test_per_entry_settings(self) -> None:
        """max_model_len, reasoning_parser and vllm_args come from the entry; absent ones are not sent."""
        cmd = vllm_engine.command(
            entry(max_model_len=2048, reasoning_parser="qwen3", vllm_args=["--tensor-parallel-size", 2]),
            "m",
            "127.0.0.1",
            1,
            GPU,
        )
        assert cmd[cmd.index("--max-model-len") + 1] == "2048"
        assert cmd[cmd.index("--reasoning-parser") + 1] == "qwen3"
        assert cmd[-2:] == ["--tensor-parallel-size", "2"]
        plain = vllm_engine.command(entry(), "m", "127.0.0.1", 1, GPU)
        assert "--max-model-len" not in plain and "--reasoning-parser" not in plain

    def test_batch_runner_has_the_server_settings(self) -> None:
        """``vllm run-batch`` runs with the server's engine settings, its input and output, no host or port."""
        server = vllm_engine.command(entry(max_model_len=2048), "/models/m", "127.0.0.1", 1, engines.CPU)
        batch = vllm_engine.batch_command(entry(max_model_len=2048), "/models/m", engines.CPU, Path("i"), Path("o"))
        assert batch[:7] == [engines.CPU.python, "-m", vllm_engine.BATCH_MODULE, "-i", "i", "-o", "o"]
        assert "--host" not in batch and "--port" not in batch
        assert [a for a in server[3:] if a not in ("--host", "127.0.0.1", "--port", "1")] == batch[7:]

    def test_gpu_settings(self) -> None:
        """tensor_parallel_size and gpu_memory_utilization of an entry reach vLLM's command line."""
        cmd = vllm_engine.command(entry(tensor_parallel_size=4, gpu_memory_utilization=0.9), "m", "127.0.0.1", 1, GPU)
        assert cmd[cmd.index("--tensor-parallel-size") + 1] == "4"
        assert cmd[cmd.index("--gpu-memory-utilization") + 1] == "0.9"

    @pytest.mark.parametrize(("engine", "cpu"), [(engines.CPU, True), (GPU, False)])
    def test_cpu_build_settings(self, engine: vllm_engine.Engine, cpu: bool) -> None:
        """The CPU build runs eager in float32 (compiling costs ~70 s a start; bf16 is emulated on
        most CPUs) without prefix caching (an answer then depends on its prompt alone); the GPU
        build compiles, caches prefixes and keeps the checkpoint's dtype."""
        cmd = vllm_engine.command(entry(), "m", "127.0.0.1", 1, engine)
        assert ("--enforce-eager" in cmd) is cpu and ("--no-enable-prefix-caching" in cmd) is cpu
        assert (cmd[cmd.index("--dtype") + 1] if "--dtype" in cmd else None) == ("float32" if cpu else None)

    @pytest.mark.parametrize("engine", [engines.CPU, GPU])
    def test_entry_dtype_wins(self, engine: vllm_engine.Engine) -> None:
        """An entry's ``dtype`` is what the server runs in, on either build."""
        cmd = vllm_engine.command(entry(dtype="bfloat16"), "m", "127.0.0.1", 1, engine)
        assert cmd[cmd.index("--dtype") + 1] == "bfloat16"


class TestEnvironment:
    def test_offline_and_under_cache(self, tmp_path: Path) -> None:
        """Hubs are offline and vLLM's, inductor's and temporary files stay under the cache folder."""
        env = vllm_engine.environment(tmp_path, engines.CPU, entry(kv_cache_gib=1), base={"HOME": "/root"})
        assert env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == "1"
        for name in ("VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TMPDIR"):
            assert Path(env[name]).is_dir() and Path(env[name]).is_relative_to(tmp_path)
        assert env["VLLM_CPU_KVCACHE_SPACE"] == "1"

    def test_threads_on_every_allowed_cpu(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The CPU build's engine is bound to every CPU this process may use (vLLM's ``auto`` keeps
        one back), unless the entry names its own binding."""
        monkeypatch.setattr(vllm_engine.os, "sched_getaffinity", lambda pid: {3, 0, 1})
        env = vllm_engine.environment(tmp_path, engines.CPU, entry(), base={})
        assert env["VLLM_CPU_OMP_THREADS_BIND"] == "0,1,3"
        env = vllm_engine.environment(tmp_path, engines.CPU, entry(cpu_threads_bind="auto"), base={})
        assert env["VLLM_CPU_OMP_THREADS_BIND"] == "auto"

    def test_gpu_has_no_cpu_settings(self, tmp_path: Path) -> None:
        """The CPU build's memory and thread settings are not given to the GPU build."""
        env = vllm_engine.environment(tmp_path, GPU, entry(), base={})
        assert "VLLM_CPU_KVCACHE_SPACE" not in env and "VLLM_CPU_OMP_THREADS_BIND" not in env


class TestLocate:
    def test_cache_engine_first(self, tmp_path: Path) -> None:
        """The engine `make vllm` recorded in the cache is the one used."""
        engines.write_engine(tmp_path, engines.CPU)
        assert vllm_engine.locate(tmp_path) == engines.CPU

    def test_none_names_make_vllm(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without an engine, starting a vLLM entry fails with a message naming `make vllm`."""
        monkeypatch.setattr(vllm_engine, "locate", lambda cache_dir: None)
        with pytest.raises(serve.ServeError, match="make vllm"):
            serve.server_command(entry(), 1, tmp_path)

    def test_gpu_pin_is_the_gpu_extra(self, root: Path) -> None:
        """The GPU build installed by `make vllm` is pyproject's gpu extra."""
        extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["gpu"]
        assert tuple(extra) == vllm_engine.GPU_REQUIREMENTS


class TestIdentity:
    def test_names_engine_mode_and_folder(self, tmp_path: Path) -> None:
        """A served vLLM entry's key names the wheel, version, eager/compiled and the folder hash."""
        engines.write_engine(tmp_path, engines.CPU)
        spec = entry(hf_folder_sha256="ab" * 32)
        ident = endpoint_identity(spec, cache_dir=tmp_path)
        assert ident["server"] == "vllm-cpu:0.32.0:eager:no-prefix-cache" and ident["folder"] == "ab" * 32
        assert ident["dtype"] == "float32"
        assert endpoint_identity(spec) == {
            "backend": "vllm",
            "model": "served-m",
            "revision": "",
            "weights": "Org/Model",
        }

    def test_other_engine_other_key(self, tmp_path: Path) -> None:
        """Another vLLM version or mode gives another cache key for the same request."""
        keys = []
        for i, engine in enumerate((engines.CPU, GPU, vllm_engine.Engine("p", "vllm-cpu", "0.31.0", "cpu"))):
            engines.write_engine(tmp_path / str(i), engine)
            ident = endpoint_identity(entry(), cache_dir=tmp_path / str(i))
            keys.append(cache.call_key(ident, {"messages": []}, "v"))
        assert len(set(keys)) == 3

    def test_dtype_in_key(self, tmp_path: Path) -> None:
        """The dtype a server computes in changes its answers, so it changes the key; a GPU entry
        that sets none keeps the key it had."""
        engines.write_engine(tmp_path / "cpu", engines.CPU)
        engines.write_engine(tmp_path / "gpu", GPU)
        keys = {
            cache.call_key(endpoint_identity(entry(**extra), cache_dir=tmp_path / "cpu"), {"messages": []}, "v")
            for extra in ({}, {"dtype": "bfloat16"})
        }
        assert len(keys) == 2
        assert "dtype" not in endpoint_identity(entry(), cache_dir=tmp_path / "gpu")


class TestConvert:
    def fake_engine(self, tmp_path: Path, payload: str) -> vllm_engine.Engine:
        """An "interpreter" that writes one file into the output folder instead of converting."""
        script = tmp_path / "python"
        script.write_text(
            f'#!/bin/sh\nmkdir -p "$3" && printf \'{payload}\' > "$3/model.bin" && echo run >> {tmp_path}/runs\n'
        )
        script.chmod(0o755)
        return vllm_engine.Engine(str(script), "vllm-cpu", "0", "cpu")

    def expected(self, tmp_path: Path, payload: str) -> str:
        folder = tmp_path / "expected"
        folder.mkdir()
        (folder / "model.bin").write_text(payload)
        return vllm_engine.folder_sha256(folder)

    def test_converted_once_and_checked(self, tmp_path: Path) -> None:
        """A folder with the registry's hash is kept and reused without converting again."""
        spec = entry(hf_folder_sha256=self.expected(tmp_path, "w"))
        engine = self.fake_engine(tmp_path, "w")
        first = vllm_engine.convert(spec, tmp_path / "x.gguf", tmp_path / "cache", engine)
        again = vllm_engine.convert(spec, tmp_path / "x.gguf", tmp_path / "cache", engine)
        assert first == again and (first / "model.bin").read_text() == "w"
        assert (tmp_path / "runs").read_text().count("run") == 1

    def test_wrong_hash_refused(self, tmp_path: Path) -> None:
        """A converted folder unlike the registry's hash is refused and nothing is left behind."""
        spec = entry(hf_folder_sha256=self.expected(tmp_path, "w"))
        with pytest.raises(vllm_engine.EngineError, match="hf_folder_sha256"):
            vllm_engine.convert(spec, tmp_path / "x.gguf", tmp_path / "cache", self.fake_engine(tmp_path, "other"))
        assert not any((vllm_engine.engine_dir(tmp_path / "cache") / "models").iterdir())


class TestLaunchPath:
    """serve.start on a vLLM entry, with the stand-in vLLM as the engine's server module."""

    @pytest.fixture
    def launched(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[serve.Server, dict]:
        engines.write_engine(tmp_path, vllm_engine.Engine(sys.executable, "vllm", "9.9", "gpu"))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(engines.FAKE_VLLM), os.environ.get("PYTHONPATH", "")]))
        monkeypatch.setenv("FAKE_VLLM_RECORD", str(tmp_path / "record.json"))
        server = serve.start(entry(max_model_len=64), tmp_path, reuse=False, startup_timeout=60)
        try:
            yield server, json.loads((tmp_path / "record.json").read_text())
        finally:
            server.stop()

    def test_ready_and_launched_as_configured(self, launched: tuple[serve.Server, dict], tmp_path: Path) -> None:
        """The server is ready once /v1/models answers; it got the entry's settings and offline env."""
        server, record = launched
        assert server.healthy()
        assert record["argv"][record["argv"].index("--max-model-len") + 1] == "64"
        assert record["env"]["HF_HUB_OFFLINE"] == "1"
        assert Path(record["env"]["TMPDIR"]).is_relative_to(tmp_path)

    def test_context_limit_is_a_failed_call_naming_it(
        self, launched: tuple[serve.Server, dict], tmp_path: Path
    ) -> None:
        """vLLM's HTTP 400 for a budget over max_model_len is recorded once as failed, naming the limit."""
        server, _ = launched
        with cache.open_cache(tmp_path) as store:
            client = client_for(entry(max_model_len=64), store, server.base_url)
            request = Request.from_text("hi", max_tokens=128)
            result = client.run([request], progress=False)[0]
            assert not result.ok and "max_model_len=64" in (result.error or "")
            assert store.fetch([client.key(request)])[client.key(request)].attempts == 1
            ok = client.run([Request.from_text("hi", max_tokens=8)], progress=False)[0]
            assert ok.ok
            client.close()

    def test_stop_leaves_no_process(self, launched: tuple[serve.Server, dict]) -> None:
        """Stopping ends the server and the helper that left its process group."""
        server, record = launched
        server.stop()
        deadline = time.monotonic() + 10
        while (processes.alive(record["pid"]) or processes.alive(record["helper"])) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not processes.alive(record["pid"]) and not processes.alive(record["helper"])
