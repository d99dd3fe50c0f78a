"""How llama.cpp is compiled here: one set of flags for the binding's wheel and ``llama-server``.

llama-cpp-python compiles llama.cpp on install, by default with ``-march=native``. On a CPU with
AMX (Intel Sapphire Rapids and later) that turns on llama.cpp's AMX backend, which repacks Q4_K
weights into an "AMX model buffer" and crashes (SIGSEGV in ``ggml_backend_amx_mul_mat``) at the
first matrix product with the project's GGUF models. So the project never builds natively on
x86-64: it reads the CPU's features from ``/proc/cpuinfo`` and names every SIMD extension that
the CPU has and llama.cpp can use (SSE4.2 up to AVX-512 VNNI/BF16/VBMI) explicitly, with AMX
always off. Any x86-64 CPU gets its widest SIMD, none gets AMX. Other architectures keep
llama.cpp's native build (AMX is x86-only).

The wheel is built by this module, never taken from pip's wheel cache: pip keys that cache by the
source archive and ignores ``CMAKE_ARGS``, so it would hand back a wheel compiled with other flags
(or for another CPU). :func:`wheel` builds with ``--no-cache-dir`` into
``.make/wheels/<key>/``, where the key hashes the version, the flags and the compiler, and reuses
a wheel only when the key matches. ``build.json`` beside the wheel (and copied into the venv,
:data:`declinecraft.core.environment.LLAMA_BUILD_RECORD`) records what was built, for every run's
``environment.json``. The CPU's flags come from :mod:`declinecraft.core.cpu`.

Standard library only (``core.cpu`` is too): ``make setup`` runs it before the package is installed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict

from declinecraft.core import cpu

#: The pinned binding (pyproject.toml pins the same version; a test checks they agree).
LLAMA_CPP_PYTHON = "0.3.36"

#: llama.cpp's CMake option for each x86-64 feature, with the ``/proc/cpuinfo`` flags it needs.
X86_OPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GGML_SSE42", ("sse4_2",)),
    ("GGML_AVX", ("avx",)),
    ("GGML_AVX2", ("avx2",)),
    ("GGML_FMA", ("fma",)),
    ("GGML_F16C", ("f16c",)),
    ("GGML_BMI2", ("bmi2",)),
    ("GGML_AVX_VNNI", ("avx_vnni",)),
    ("GGML_AVX512", ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw")),
    ("GGML_AVX512_VBMI", ("avx512f", "avx512vbmi")),
    ("GGML_AVX512_VNNI", ("avx512f", "avx512_vnni")),
    ("GGML_AVX512_BF16", ("avx512f", "avx512_bf16")),
)
#: Off on every CPU: llama.cpp's AMX backend crashes with Q4_K weights (module docstring).
ALWAYS_OFF = ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")
#: Options of every build: no multimodal library, no ccache (its hits would hide the flags).
COMMON = ("-DLLAVA_BUILD=OFF", "-DGGML_CCACHE=OFF")


def ggml_options(flags: frozenset[str], machine: str | None = None) -> dict[str, bool]:
    """llama.cpp's CMake options for a CPU with ``flags``: each SIMD option on when the CPU has it.

    On x86-64 ``GGML_NATIVE`` is off and every option is named; elsewhere only ``GGML_NATIVE`` is.
    """
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return {"GGML_NATIVE": True}
    options = {"GGML_NATIVE": False}
    for option, needs in X86_OPTIONS:
        options[option] = all(flag in flags for flag in needs)
    options.update(dict.fromkeys(ALWAYS_OFF, False))
    return options


def cmake_args(options: Mapping[str, bool]) -> list[str]:
    """``-DNAME=ON|OFF`` for each option, after the options every build shares."""
    return [*COMMON, *(f"-D{name}={'ON' if on else 'OFF'}" for name, on in options.items())]


@functools.cache
def compiler_version() -> str:
    """The first line of ``c++ --version`` ("" without a compiler)."""
    exe = shutil.which("c++") or shutil.which("g++")
    if exe is None:
        return ""
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0].strip() if out else ""


def build_key(version: str, args: Sequence[str], compiler: str) -> str:
    """The wheel folder's name: 16 hex digits of the version, the CMake arguments and the compiler."""
    text = json.dumps({"version": version, "cmake_args": list(args), "compiler": compiler}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Build(TypedDict):
    """One machine's llama-cpp-python build (:func:`describe`)."""

    llama_cpp_python: str
    cpu_model: str
    machine: str
    options: dict[str, bool]
    cmake_args: list[str]
    compiler: str
    key: str


def describe(cpuinfo: str | None = None, machine: str | None = None) -> Build:
    """What this machine's build is: version, CPU, options, CMake arguments, compiler and key."""
    options = ggml_options(cpu.cpu_flags(cpuinfo), machine)
    args = cmake_args(options)
    compiler = compiler_version()
    return {
        "llama_cpp_python": LLAMA_CPP_PYTHON,
        "cpu_model": cpu.cpu_model(cpuinfo),
        "machine": machine or platform.machine(),
        "options": options,
        "cmake_args": args,
        "compiler": compiler,
        "key": build_key(LLAMA_CPP_PYTHON, args, compiler),
    }


def wheel(python: str, wheel_root: Path, *, requirement: str | None = None, pip_args: Sequence[str] = ()) -> Path:
    """Return the llama-cpp-python wheel built for this machine, building it when absent.

    The build runs ``python -m pip wheel --no-cache-dir --no-binary llama-cpp-python`` with this
    machine's ``CMAKE_ARGS``, so neither pip's wheel cache nor a binary from the index can stand
    in for it. A wheel is reused only from the folder named by :func:`build_key`.

    Args:
        python: the interpreter whose pip builds the wheel (the project's venv).
        wheel_root: the folder of built wheels (``.make/wheels``).
        requirement: what to build (default ``llama-cpp-python==LLAMA_CPP_PYTHON``).
        pip_args: extra pip arguments (e.g. ``--find-links`` for a local source archive).

    Raises:
        RuntimeError: the build failed; the message names the build log.
    """
    info = describe()
    folder = wheel_root / str(info["key"])
    found = sorted(folder.glob("llama_cpp_python-*.whl")) if folder.is_dir() else []
    if found and (folder / "build.json").is_file():
        return found[-1]
    wheel_root.mkdir(parents=True, exist_ok=True)
    requirement = requirement or f"llama-cpp-python=={LLAMA_CPP_PYTHON}"
    env = {**os.environ, "CMAKE_ARGS": " ".join(info["cmake_args"]), "FORCE_CMAKE": "1"}
    log = wheel_root / f"{info['key']}.log"
    tmp = Path(tempfile.mkdtemp(dir=wheel_root, prefix=".build-"))
    try:
        command = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir"]
        command += ["--no-binary", "llama-cpp-python", *pip_args, "-w", str(tmp), requirement]
        with open(log, "wb") as out:
            done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        built = sorted(tmp.glob("llama_cpp_python-*.whl"))
        if done.returncode != 0 or not built:
            raise RuntimeError(f"building {requirement} with CMAKE_ARGS={env['CMAKE_ARGS']!r} failed; see {log}")
        (tmp / "build.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder / built[-1].name


def main(argv: Sequence[str] | None = None) -> int:
    """``wheel PYTHON WHEEL_ROOT`` (prints the wheel's path), ``cmake-args`` or ``describe``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["wheel"] and len(args) >= 3:
        try:
            path = wheel(args[1], Path(args[2]), pip_args=args[3:])
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(path)
        return 0
    if args == ["cmake-args"]:
        print(" ".join(describe()["cmake_args"]))
        return 0
    if args == ["describe"]:
        print(json.dumps(describe(), indent=2))
        return 0
    usage = "wheel PYTHON WHEEL_ROOT [PIP_ARGS...] | cmake-args | describe"
    print(f"usage: python -m declinecraft.runtime.llama_build {usage}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
