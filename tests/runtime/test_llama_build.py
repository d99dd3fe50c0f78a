"""Tests for declinecraft.runtime.llama_build: llama.cpp's flags per CPU, and a wheel never taken stale."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from declinecraft.core import cpu
from declinecraft.runtime import llama_build

#: /proc/cpuinfo flags of a Sapphire Rapids Xeon (AVX-512 and AMX), trimmed to what matters.
SAPPHIRE_RAPIDS = (
    "fpu sse4_2 avx avx2 fma f16c bmi2 avx_vnni avx512f avx512dq avx512cd avx512bw avx512vl avx512vbmi "
    "avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8"
)


#: An AMD EPYC (Zen 2): AVX2, no AVX-512.
ZEN2 = "fpu sse4_2 avx avx2 fma f16c bmi2"


def cpuinfo(flags: str) -> str:
    return f"processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: fpu\n"


class TestGgmlOptions:
    def test_amx_cpu_gets_avx512_never_amx(self) -> None:
        """On an AMX Xeon every AVX-512 option is on and every AMX option off, GGML_NATIVE off."""
        options = llama_build.ggml_options(cpu.cpu_flags(cpuinfo(SAPPHIRE_RAPIDS)), "x86_64")
        assert options["GGML_NATIVE"] is False
        assert all(options[k] for k in ("GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI", "GGML_AVX512_BF16"))
        assert not any(options[k] for k in llama_build.ALWAYS_OFF)

    def test_avx2_cpu(self) -> None:
        """An AVX2 CPU without AVX-512 gets AVX2/FMA/F16C and no AVX-512 option."""
        options = llama_build.ggml_options(frozenset(ZEN2.split()), "x86_64")
        assert options["GGML_AVX2"] and options["GGML_FMA"] and options["GGML_F16C"]
        assert not options["GGML_AVX512"] and not options["GGML_AVX512_VNNI"]

    def test_partial_avx512_is_off(self) -> None:
        """AVX-512F alone (without BW, DQ, VL, CD) does not turn GGML_AVX512 on."""
        assert not llama_build.ggml_options(frozenset({"avx2", "avx512f"}), "x86_64")["GGML_AVX512"]

    def test_other_architectures_build_natively(self) -> None:
        """AMX is x86-only: elsewhere llama.cpp's native detection stays."""
        assert llama_build.ggml_options(frozenset(), "aarch64") == {"GGML_NATIVE": True}

    def test_cmake_args(self) -> None:
        """Every option named explicitly, ON or OFF."""
        args = llama_build.cmake_args({"GGML_NATIVE": False, "GGML_AMX_INT8": False, "GGML_AVX2": True})
        assert args[-3:] == ["-DGGML_NATIVE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AVX2=ON"]


class TestBuildKey:
    def test_follows_flags_version_and_compiler(self) -> None:
        """Another flag, version or compiler gives another key."""
        base = llama_build.build_key("0.3.36", ["-DGGML_AVX2=ON"], "gcc 12")
        assert base != llama_build.build_key("0.3.36", ["-DGGML_AVX2=OFF"], "gcc 12")
        assert base != llama_build.build_key("0.3.37", ["-DGGML_AVX2=ON"], "gcc 12")
        assert base != llama_build.build_key("0.3.36", ["-DGGML_AVX2=ON"], "gcc 13")

    def test_pin_matches_pyproject(self, root: Path) -> None:
        """The version built is the one pyproject.toml pins."""
        assert f'"llama-cpp-python[server]=={llama_build.LLAMA_CPP_PYTHON}"' in (root / "pyproject.toml").read_text()


def fake_sdist(folder: Path) -> Path:
    """A source archive named llama-cpp-python 0.3.36 whose build records its CMAKE_ARGS."""
    setup = (
        "import os, pathlib\n"
        "from setuptools import setup\n"
        "pathlib.Path('llama_cpp_flags').mkdir(exist_ok=True)\n"
        "pathlib.Path('llama_cpp_flags/__init__.py').write_text('CMAKE_ARGS = %r\\n' % "
        "os.environ.get('CMAKE_ARGS', ''))\n"
        "setup(name='llama-cpp-python', version='0.3.36', packages=['llama_cpp_flags'])\n"
    )
    files = {
        "setup.py": setup,
        "PKG-INFO": "Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: 0.3.36\n",
    }
    archive = folder / "llama_cpp_python-0.3.36.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"llama_cpp_python-0.3.36/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


def flags_in(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("llama_cpp_flags/__init__.py").decode()
    return text.split("=", 1)[1].strip().strip("'\"")


class TestWheel:
    def test_rebuilds_over_a_stale_cached_wheel(self, tmp_path: Path) -> None:
        """pip's cache holds a wheel built with AMX on; setup's build ignores it and builds with this CPU's flags."""
        index = tmp_path / "index"
        index.mkdir()
        fake_sdist(index)
        pip_args = ["--no-index", "--find-links", str(index), "--no-build-isolation"]
        # pip's own cache on, in a folder of its own, even where the caller turned it off
        # (PIP_NO_CACHE_DIR): the failure mode below needs it.
        base = {k: v for k, v in os.environ.items() if k != "PIP_NO_CACHE_DIR"}
        env = {**base, "PIP_CACHE_DIR": str(tmp_path / "pip-cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        stale_env = {**env, "CMAKE_ARGS": "-DGGML_NATIVE=ON -DGGML_AMX_INT8=ON"}
        first, again = tmp_path / "first", tmp_path / "again"
        for target, args in ((first, stale_env), (again, {**env, "CMAKE_ARGS": "-DGGML_AMX_INT8=OFF"})):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "--no-deps",
                    *pip_args,
                    "-w",
                    str(target),
                    "llama-cpp-python==0.3.36",
                ],
                env=args,
                check=True,
                capture_output=True,
            )
        # The failure mode: pip's cache hands back the first build whatever CMAKE_ARGS says now.
        assert flags_in(next(again.glob("*.whl"))) == stale_env["CMAKE_ARGS"]
        os.environ["PIP_CACHE_DIR"] = env["PIP_CACHE_DIR"]
        try:
            wheel = llama_build.wheel(sys.executable, tmp_path / "wheels", pip_args=pip_args)
        finally:
            del os.environ["PIP_CACHE_DIR"]
        expected = " ".join(llama_build.describe()["cmake_args"])
        assert flags_in(wheel) == expected and "-DGGML_AMX_INT8=OFF" in expected
        assert wheel.parent.name == llama_build.describe()["key"]
        assert (wheel.parent / "build.json").is_file()

    def test_reused_only_for_the_same_key(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A wheel in the folder of this machine's key is reused without a build."""
        key = str(llama_build.describe()["key"])
        folder = tmp_path / key
        folder.mkdir()
        (folder / "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl").write_bytes(b"")
        (folder / "build.json").write_text("{}")
        monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("built again"))
        assert llama_build.wheel(sys.executable, tmp_path).parent == folder

    def test_failed_build_names_its_log(self, tmp_path: Path) -> None:
        """A build that fails raises, naming the log file; no wheel folder is left."""
        with pytest.raises(RuntimeError, match=r"failed; see .*\.log"):
            llama_build.wheel(sys.executable, tmp_path, requirement="no-such-package-xyz==1", pip_args=["--no-index"])
        assert not (tmp_path / str(llama_build.describe()["key"])).exists()
