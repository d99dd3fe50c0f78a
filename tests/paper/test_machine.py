"""Tests for declinecraft.paper.machine: the machine's essentials in the paper."""

from __future__ import annotations

from pathlib import Path


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


class TestRunSpend:
    def test_per_model_and_batch(self, tmp_path: Path) -> None:
        """environment.json's spend: the run's rows per model and batch or not, with totals; other runs apart."""
        from declinecraft.llm import spend
        from declinecraft.llm.cache import open_cache
        from declinecraft.paper.machine import run_spend

        rows = [
            spend.Spent("r", "k1", "gpt", False, 100, 10, 0.5, "t"),
            spend.Spent("r", "k2", "gpt", True, 100, 10, 0.25, "t"),
            spend.Spent("r", "k3", "gpt", True, 50, 5, 0.125, "t"),
            spend.Spent("other", "k4", "gpt", False, 1, 1, 9.0, "t"),
        ]
        with open_cache(tmp_path) as store:
            store.store([], rows)
        got = run_spend(tmp_path, "r")
        assert (got["calls"], got["prompt_tokens"], got["completion_tokens"], got["usd"]) == (3, 250, 25, 0.875)
        assert [(r["batch"], r["calls"], r["usd"]) for r in got["by_model"]] == [(False, 1, 0.5), (True, 2, 0.375)]
