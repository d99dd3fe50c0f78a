"""Tests for declinecraft.core.environment: the machine record and the call store's environment ids."""

from __future__ import annotations

import json
from pathlib import Path

from declinecraft.core import environment
from declinecraft.llm import cache
from tests.support import records


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


class TestLlamaBuildRecord:
    def test_reads_the_venv_record(self, tmp_path: Path) -> None:
        """The record make setup copied into the venv comes back as written; none gives {}."""
        assert environment.llama_build_record(tmp_path) == {}
        (tmp_path / environment.LLAMA_BUILD_RECORD).write_text(json.dumps({"key": "abc"}), encoding="utf-8")
        assert environment.llama_build_record(tmp_path) == {"key": "abc"}

    def test_unreadable_is_empty(self, tmp_path: Path) -> None:
        """A record that is not JSON gives {} (the machine record still writes)."""
        (tmp_path / environment.LLAMA_BUILD_RECORD).write_text("{cut", encoding="utf-8")
        assert environment.llama_build_record(tmp_path) == {}


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


class TestCallEnvironments:
    def test_each_call_names_its_environment(self, tmp_path: Path) -> None:
        """Stored calls are counted under this process's environment id, whose record is kept once."""
        env_id, _ = environment.current()
        with cache.open_cache(tmp_path) as store:
            store.store([records.record("a"), records.record("b")])
            assert store.environment_counts(["a", "b", "missing"]) == {env_id: 2}
            assert store.environment_record(env_id)["cpu_model"] == environment.record()["cpu_model"]

    def test_ok_row_keeps_its_environment(self, tmp_path: Path) -> None:
        """A call stored as ok keeps the environment that answered it; a failure's is replaced."""
        with cache.open_cache(tmp_path) as store:
            store.store([records.record("ok"), records.record("failed", "failed")])
            store._db.execute("UPDATE call_environment SET environment = 'elsewhere'")
            store.store([records.record("ok"), records.record("failed")])
            counts = store.environment_counts(["ok", "failed"])
        assert counts == {"elsewhere": 1, environment.current()[0]: 1}
