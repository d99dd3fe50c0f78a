"""The machine a run ran on: CPU, memory, OS, Python, packages, the llama.cpp build, model files.

Two uses. :func:`current` identifies the machine of this process (an id hashed from its record);
the LLM call store keeps that id beside every call it stores (not in the call's key, so a store
moved to another machine still answers from cache), and the record itself once per id. The paper
stage writes ``outputs/<run>/environment.json`` (:func:`record` plus the sha256 of every model
file the run used) and prints its essentials in the reproduction notes.

The id covers what can change an answer: CPU model and flags, the llama.cpp build, the OS,
Python and every installed package version. Memory and core count are recorded but not hashed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from declinecraft.core import cpu, paths

#: The fields of :func:`record` that the environment id hashes.
ID_FIELDS = ("cpu_model", "cpu_flags", "machine", "os", "python", "packages", "llama_build", "llama_system_info")
#: The file in the venv's root that records the installed llama.cpp build (``make setup`` copies
#: :mod:`declinecraft.runtime.llama_build`'s ``build.json`` there).
LLAMA_BUILD_RECORD = "llama-build.json"


def memory_bytes() -> int | None:
    """Physical memory in bytes (None where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def os_name() -> str:
    """The distribution's PRETTY_NAME and the kernel, e.g. "Debian GNU/Linux 12 (bookworm), Linux 6.1"."""
    pretty = ""
    try:
        for line in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.partition("=")[2].strip().strip('"')
    except OSError:
        pass
    kernel = f"{platform.system()} {platform.release()}"
    return f"{pretty}, {kernel}" if pretty else kernel


def packages() -> dict[str, str]:
    """Every installed distribution's version, by normalised name (PEP 503: ``llama-cpp-python``), sorted."""
    found = {}
    for dist in importlib.metadata.distributions():
        name = dist.name
        if name:
            found[re.sub(r"[-_.]+", "-", name).lower()] = dist.version
    return dict(sorted(found.items()))


def llama_build_record(prefix: str | Path | None = None) -> dict[str, object]:
    """The build record that ``make setup`` copied into the venv ({} when there is none)."""
    path = Path(prefix or sys.prefix) / LLAMA_BUILD_RECORD
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def llama_system_info() -> str:
    """llama.cpp's system-info line (the CPU features the library uses); "" without the binding."""
    try:
        import llama_cpp
    except Exception:  # noqa: BLE001 - any failure to load the native library means "no binding"
        return ""
    return str(llama_cpp.llama_print_system_info().decode(errors="replace")).strip()


def record() -> dict[str, Any]:
    """This machine and environment as plain data (see the module docstring)."""
    return {
        "cpu_model": cpu.cpu_model(),
        "cpu_flags": sorted(cpu.cpu_flags()),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "memory_bytes": memory_bytes(),
        "os": os_name(),
        "python": sys.version.split()[0],
        "packages": packages(),
        "llama_build": llama_build_record(),
        "llama_system_info": llama_system_info(),
    }


def environment_id(data: dict[str, Any]) -> str:
    """16 hex digits of the sha256 of the fields in :data:`ID_FIELDS`."""
    blob = json.dumps({k: data.get(k) for k in ID_FIELDS}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@functools.cache
def current() -> tuple[str, str]:
    """``(id, record as JSON)`` of this process's environment, computed once per process."""
    data = record()
    return environment_id(data), json.dumps(data, sort_keys=True)


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """The hex sha256 of a file, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(files: Iterable[Path], memo_file: Path, *, remember: bool = True) -> dict[str, str]:
    """The sha256 of each file, by path; hashes are remembered by (size, mtime) in ``memo_file``
    (read only, when not ``remember``)."""
    try:
        memo = json.loads(memo_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    out, changed = {}, False
    for path in sorted({Path(f).resolve() for f in files}):
        stat = path.stat()
        stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
        entry = memo.get(str(path))
        if not entry or entry.get("stamp") != stamp:
            entry = {"stamp": stamp, "sha256": sha256_file(path)}
            memo[str(path)], changed = entry, True
        out[str(path)] = entry["sha256"]
    if changed and remember:
        paths.write_text_atomic(memo_file, json.dumps(memo, indent=1, sort_keys=True))
    return out
