"""Tests for the machine record: declinecraft.core.environment and the call store's environment ids."""

from __future__ import annotations

import json
from pathlib import Path

from declinecraft.core import environment
from declinecraft.llm import cache


class TestRecord:
    def test_fields(self) -> None:
        """CPU, cores, memory, OS, Python, every package with its version, the llama.cpp build."""
        data = environment.record()
        assert data["cores"] and data["memory_bytes"] and data["python"].startswith("3.")
        assert data["packages"]["polars"] and data["packages"]["llama-cpp-python"] == "0.3.36"
        assert isinstance(data["cpu_flags"], list) and "llama_build" in data
        assert "AVX" in data["llama_system_info"] or data["machine"] != "x86_64"

    def test_id_ignores_memory_not_packages(self) -> None:
        """The id follows packages and CPU, not memory or core count."""
        data = environment.record()
        same = {**data, "memory_bytes": 1, "cores": 64}
        other = {**data, "packages": {**data["packages"], "polars": "0.0.1"}}
        assert environment.environment_id(same) == environment.environment_id(data)
        assert environment.environment_id(other) != environment.environment_id(data)


class TestFileHashes:
    def test_memo(self, tmp_path: Path) -> None:
        """sha256 per file; a changed file is hashed again, an unchanged one read from the memo."""
        file, memo = tmp_path / "w.bin", tmp_path / "memo.json"
        file.write_bytes(b"abc")
        first = environment.file_hashes([file], memo)
        assert first[str(file.resolve())] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        stored = json.loads(memo.read_text())
        stored[str(file.resolve())]["sha256"] = "remembered"
        memo.write_text(json.dumps(stored))
        assert environment.file_hashes([file], memo)[str(file.resolve())] == "remembered"
        file.write_bytes(b"abcd")
        assert environment.file_hashes([file], memo)[str(file.resolve())] != "remembered"


def record(key: str, status: cache.Status = "ok") -> cache.CallRecord:
    return cache.CallRecord(key, status, "llamacpp:m", "", "", "{}", "t", None, "stop", 1, 1, 0.1, None, 1, "now")


class TestCallEnvironments:
    def test_each_call_names_its_environment(self, tmp_path: Path) -> None:
        """Stored calls are counted under this process's environment id, whose record is kept once."""
        env_id, _ = environment.current()
        with cache.open_cache(tmp_path) as store:
            store.store([record("a"), record("b")])
            assert store.environment_counts(["a", "b", "missing"]) == {env_id: 2}
            assert store.environment_record(env_id)["cpu_model"] == environment.record()["cpu_model"]

    def test_ok_row_keeps_its_environment(self, tmp_path: Path) -> None:
        """A call stored as ok keeps the environment that answered it; a failure's is replaced."""
        with cache.open_cache(tmp_path) as store:
            store.store([record("ok"), record("failed", "failed")])
            store._db.execute("UPDATE call_environment SET environment = 'elsewhere'")
            store.store([record("ok"), record("failed")])
            counts = store.environment_counts(["ok", "failed"])
        assert counts == {"elsewhere": 1, environment.current()[0]: 1}


class TestEssentialsTex:
    def test_macros(self) -> None:
        """The notes' macros: CPU, memory in GiB, the build's SIMD with AMX off, llama.cpp's info, counts."""
        from declinecraft.paper.machine import essentials_tex

        build = {
            "llama_cpp_python": "0.3.36",
            "options": {"GGML_NATIVE": False, "GGML_AVX2": True, "GGML_AVX512": True, "GGML_AMX_INT8": False},
        }
        data = {
            "cpu_model": "Xeon_8480+ & co",
            "cores": 2,
            "memory_bytes": 24 * 2**30,
            "os": "Debian 12",
            "python": "3.11.7",
            "llama_build": build,
            "llama_system_info": "CPU : AVX2 = 1 | AVX512 = 1 |",
            "environment_id": "abc",
            "call_environments": {"abc": 3, "def": 1},
            "model_files": {"m": [{"file": "m.gguf"}]},
        }
        tex = essentials_tex(data)
        assert "\\newcommand{\\EnvCPU}{Xeon\\_8480+ \\& co}" in tex
        assert "\\newcommand{\\EnvMemory}{24}" in tex
        assert "\\newcommand{\\EnvLlamaBuild}{llama-cpp-python 0.3.36, AVX2, AVX512, AMX off}" in tex
        assert "\\newcommand{\\EnvLlamaInfo}{CPU : AVX2 = 1; AVX512 = 1}" in tex
        assert "\\newcommand{\\EnvCallMachines}{2}" in tex and "\\newcommand{\\EnvModelFiles}{1}" in tex
