"""Tests for declinecraft.paper.machine: the machine's essentials in the paper."""

from __future__ import annotations


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
