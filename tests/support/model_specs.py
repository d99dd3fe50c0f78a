"""A model registry entry for tests: a local 'vLLM' model served by the fake server, with changes."""

from __future__ import annotations

from declinecraft.core import registry


def spec(**changes: object) -> registry.ModelSpec:
    """A local 'vLLM' model (``fake``, served as ``fake-model``) with ``changes`` applied."""
    values: dict[str, object] = {"id": "fake", "backend": "vllm", "served_name": "fake-model", "max_concurrency": 8}
    values.update(changes)
    return registry.ModelSpec(**values)  # type: ignore[arg-type]
