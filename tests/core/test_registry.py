"""Tests for declinecraft.core.registry: the entries of params/models.yaml."""

from __future__ import annotations

from pathlib import Path

from declinecraft.core import registry


class TestRegistryEntries:
    def test_converted_entries_share_the_llamacpp_weights(self, root: Path) -> None:
        """Each GGUF-backed vLLM entry names its folder hash and the same GGUF as a llama.cpp entry."""
        models = registry.load_models(root / "params" / "models.yaml")
        converted = [s for s in models.values() if s.backend == "vllm" and not s.hf_repo]
        assert converted
        gguf = {s.gguf.get("sha256") for s in models.values() if s.backend == "llamacpp"}
        for spec in converted:
            assert len(str(spec.extra.get("hf_folder_sha256"))) == 64 and spec.gguf["sha256"] in gguf, spec.id
            assert spec.extra.get("max_model_len"), spec.id

    def test_switchable_qwen3_has_a_reasoning_parser(self, root: Path) -> None:
        """The Qwen3 entries with a thinking switch are served with vLLM's qwen3 reasoning parser."""
        models = registry.load_models(root / "params" / "models.yaml")
        qwen3 = [s for s in models.values() if s.family == "Qwen3" and s.thinking == "switchable"]
        assert qwen3 and all(s.extra.get("reasoning_parser") == "qwen3" for s in qwen3)
