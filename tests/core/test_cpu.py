"""Tests for declinecraft.core.cpu: the model name and feature flags read from /proc/cpuinfo."""

from __future__ import annotations

from declinecraft.core import cpu

#: An AMD EPYC (Zen 2): AVX2, no AVX-512.
ZEN2 = "fpu sse4_2 avx avx2 fma f16c bmi2"


def cpuinfo(flags: str) -> str:
    return f"processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: fpu\n"


class TestCpuFlags:
    def test_first_cpu(self) -> None:
        """The flags line of the first CPU, as a set."""
        assert cpu.cpu_flags(cpuinfo(ZEN2)) == frozenset(ZEN2.split())

    def test_arm_features(self) -> None:
        """An ARM CPU's ``Features`` line counts as its flags."""
        assert cpu.cpu_flags("processor\t: 0\nFeatures\t: fp asimd\n") == frozenset({"fp", "asimd"})

    def test_none(self) -> None:
        """No flags line gives the empty set."""
        assert cpu.cpu_flags("processor\t: 0\n") == frozenset()


class TestCpuModel:
    def test_model(self) -> None:
        """The model name line."""
        assert cpu.cpu_model(cpuinfo(ZEN2)) == "Test CPU"

    def test_unsaid(self) -> None:
        """A cpuinfo without a model name gives ""."""
        assert cpu.cpu_model("processor\t: 0\n") == ""
