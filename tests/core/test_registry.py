"""Tests for declinecraft.core.registry: the entries of params/models.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from declinecraft.core import config, registry


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


class TestCheckSettings:
    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("price_in", -1),
            ("price_out", "two dollars"),
            ("batch_discount", 1.5),
            ("tensor_parallel_size", 0),
            ("tensor_parallel_size", 2.5),
            ("gpu_memory_utilization", 0),
            ("max_model_len", True),
            ("start_timeout_s", -60),
            ("batch", "yes"),
        ],
    )
    def test_refused(self, tmp_path: Path, key: str, value: object) -> None:
        """A price, limit or GPU setting of the wrong type or sign is refused naming file, model and key."""
        path = tmp_path / "models.yaml"
        entry = {"backend": "vllm", "hf_repo": "org/m", key: value}
        path.write_text(yaml.safe_dump({"models": {"m": entry}}))
        with pytest.raises(registry.RegistryError, match=rf"models\.yaml: model 'm': {key}\b"):
            registry.load_models(path)

    def test_check_params_names_file_and_key(self, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`make check-params` (config check) refuses a negative price with the models file and key."""
        models = yaml.safe_load((Path(__file__).parents[2] / "params" / "models.yaml").read_text())
        models["models"]["qwen2.5-coder-0.5b"]["price_out"] = -0.5
        (project / "params" / "models.yaml").write_text(yaml.safe_dump(models))
        assert config._main(["check", str(project / "params" / "default.yaml")]) == 1
        assert "model 'qwen2.5-coder-0.5b': price_out: -0.5 is out of range (needs >= 0)" in capsys.readouterr().err

    def test_paper_entries_have_gpu_settings(self, root: Path) -> None:
        """Every self-hosted paper entry (vLLM from hf_repo) carries its GPU settings."""
        models = registry.load_models(root / "params" / "models.yaml")
        gpu = [s for s in models.values() if s.backend == "vllm" and s.hf_repo]
        keys = ("tensor_parallel_size", "gpu_memory_utilization", "max_model_len")
        assert gpu and all(all(s.extra.get(k) for k in keys) for s in gpu)
