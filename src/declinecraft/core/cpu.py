"""This machine's CPU as ``/proc/cpuinfo`` describes it: its model name and feature flags.

Read by the llama.cpp build (:mod:`declinecraft.runtime.llama_build`, which turns the flags into
CMake options) and by the machine record (:mod:`declinecraft.core.environment`). Standard library
only: ``make setup`` runs the build before the package is installed.
"""

from __future__ import annotations

from pathlib import Path


def _cpuinfo(text: str | None) -> str:
    """``text``, or ``/proc/cpuinfo`` ("" where there is none)."""
    if text is not None:
        return text
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The feature flags of the first CPU in ``/proc/cpuinfo`` (or of the text given)."""
    for line in _cpuinfo(cpuinfo).splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def cpu_model(cpuinfo: str | None = None) -> str:
    """The CPU's model name from ``/proc/cpuinfo`` ("" when it does not say)."""
    for line in _cpuinfo(cpuinfo).splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return ""
