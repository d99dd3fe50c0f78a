"""The run's machine record: ``outputs/<run>/environment.json`` and the notes' ``environment.tex``.

Written by the paper stage each time it runs: the environment of
:func:`declinecraft.core.environment.record` (CPU, memory, OS, Python, packages, the llama.cpp
build and its system-info line) plus the sha256 of every model file the run names (the GGUF chat
models, the embedder's and the reranker's weights), which recorded environments stored the
run's model calls (:meth:`declinecraft.llm.cache.Cache.environment_counts`, counted by the caller),
and what the run's sent calls cost per model, batch or not (``spend``: :func:`run_spend`).
``environment.tex`` is kept apart from ``numbers.tex`` so the numbers stay byte-identical across
machines while the notes still say which machine produced them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import catalogue, environment, paths, registry
from declinecraft.core.config import RunConfig, referenced_models
from declinecraft.core.model_files import package_dir
from declinecraft.core.stage_writer import json_text
from declinecraft.llm import spend
from declinecraft.llm.cache import open_cache
from declinecraft.llm.serve import gguf_path
from declinecraft.paper.latex import escape, macro_file
from declinecraft.retrieval.embed import EMBEDDERS
from declinecraft.retrieval.rerank import RERANKERS
from declinecraft.runtime import bundle

#: File endings of model weights inside an embedder's or reranker's folder.
WEIGHT_SUFFIXES = (".onnx", ".safetensors", ".bin", ".gguf", ".pt")


def model_files(cfg: RunConfig) -> dict[str, list[Path]]:
    """The weight files of every model the run names, by model id (local models only)."""
    specs = registry.load_models(cfg.resolve(cfg.models_file))
    found: dict[str, list[Path]] = {}
    for model in sorted(m for m in referenced_models(cfg) if m):
        spec = specs.get(model)
        if spec is not None and spec.backend == "llamacpp":
            found[model] = [gguf_path(spec, cfg.cache_dir)]
    for name, path, table in (
        (cfg.index.embedder, cfg.index.embedder_path, EMBEDDERS),
        (cfg.index.reranker, cfg.index.reranker_path, RERANKERS),
    ):
        folder: Path | None = cfg.resolve(path) if path else None
        if folder is None and name in table and getattr(table[name], "package", None):
            folder = package_dir(table[name].package, table[name].subdir)
        if folder is not None and folder.is_file():
            found[name] = [folder]
        elif folder is not None and folder.is_dir():
            found[name] = sorted(p for p in folder.rglob("*") if p.suffix in WEIGHT_SUFFIXES and p.is_file())
    return found


def call_environments(cfg: RunConfig) -> dict[str, int]:
    """How many of the run's model calls (every ``cache_key`` in its stage files) each environment stored."""
    keys: set[str] = set()
    for folder in sorted({cfg.stage_dir(stage) for stage in catalogue.STAGES}):
        for file in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
            if "cache_key" in pl.read_parquet_schema(file):
                keys.update(k for k in pl.read_parquet(file, columns=["cache_key"])["cache_key"] if k)
    if not keys:
        return {}
    with open_cache(cfg.cache_dir) as store:
        return store.environment_counts(keys)


def run_spend(cache_dir: Path, run: str) -> dict[str, Any]:
    """What the run's sent calls cost: calls, prompt and output tokens and dollars, in total and per
    model and batch or not (:mod:`declinecraft.llm.spend`; cached calls cost nothing and are not in it)."""
    with open_cache(cache_dir) as store:
        return spend.summary(store.spend_totals(run))


def build(cfg: RunConfig, call_environments: dict[str, int] | None = None) -> dict[str, Any]:
    """The run's environment record: this machine, the model files' sha256 and the calls' machines.

    A replay (:mod:`declinecraft.runtime.bundle`) runs no model, so it takes the model files' record
    from the bundle's machine record instead of reading (or assembling) the weights.
    """
    recorded = bundle.recorded_environment(cfg.cache_dir)
    if recorded is not None:
        weights = recorded.get("model_files") or {}
    else:
        files = model_files(cfg)
        hashes = environment.file_hashes(
            [p for group in files.values() for p in group], cfg.cache_dir / "models" / "sha256.json"
        )
        weights = {
            model: [{"file": p.name, "sha256": hashes[str(p.resolve())], "bytes": p.stat().st_size} for p in group]
            for model, group in files.items()
        }
    env_id, _ = environment.current()
    return {
        "environment_id": env_id,
        **environment.record(),
        "model_files": weights,
        "call_environments": dict(sorted((call_environments or {}).items())),
        "spend": run_spend(cfg.cache_dir, cfg.run),
        **({"replayed_from": recorded.get("environment_id", "")} if recorded is not None else {}),
    }


def essentials_tex(data: dict[str, Any]) -> str:
    """Macros for the reproduction notes: CPU, cores, memory, OS, Python, llama.cpp build and info."""
    build_record = data.get("llama_build") or {}
    options = build_record.get("options") or {}
    simd = [name.removeprefix("GGML_") for name, on in options.items() if on and name != "GGML_NATIVE"]
    if options.get("GGML_NATIVE"):
        simd = ["native"]
    memory = data.get("memory_bytes")
    calls = data.get("call_environments") or {}
    values = {
        "EnvCPU": data.get("cpu_model") or "unknown CPU",
        "EnvCores": str(data.get("cores") or "?"),
        "EnvMemory": f"{memory / 2**30:.0f}" if memory else "?",
        "EnvOS": data.get("os") or "",
        "EnvPython": data.get("python") or "",
        "EnvLlamaBuild": (
            f"llama-cpp-python {build_record.get('llama_cpp_python', '?')}, "
            + (", ".join(simd) or "no SIMD")
            + ", AMX off"
            if build_record
            else "not recorded (built before the build record existed)"
        ),
        "EnvLlamaInfo": "; ".join(
            part.strip() for part in (data.get("llama_system_info") or "not available").split("|") if part.strip()
        ),
        "EnvId": data.get("environment_id", ""),
        "EnvCallMachines": str(len(calls)),
        "EnvModelFiles": str(sum(len(v) for v in (data.get("model_files") or {}).values())),
    }
    return macro_file("declinecraft.paper.machine", ((n, escape(v), None) for n, v in values.items()))


def write(cfg: RunConfig, paper_dir: Path) -> Path:
    """Write ``outputs/<run>/environment.json`` and ``<paper_dir>/environment.tex``; return the JSON's path."""
    data = build(cfg, call_environments(cfg))
    target = catalogue.PAPER_ENVIRONMENT.path(cfg)
    paths.write_text_atomic(target, json_text(data, sort_keys=True))
    paths.write_text_atomic(paper_dir / catalogue.PAPER_ENVIRONMENT_TEX.name, essentials_tex(data))
    return target
