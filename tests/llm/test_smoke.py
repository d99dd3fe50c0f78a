"""Tests for declinecraft.llm.smoke: setup's check that each local model loads and answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from declinecraft.core import registry
from declinecraft.llm import smoke


def fake_models(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """One model whose 'check' is ``script`` run as a child process."""
    spec = registry.ModelSpec(id="crashy-1b", backend="llamacpp", served_name="crashy")
    monkeypatch.setattr(smoke, "local_models", lambda params_file: [spec])
    monkeypatch.setattr(smoke, "child_command", lambda params_file, model_id: [sys.executable, "-c", script])


class TestLocalModels:
    def test_default_run(self, root: Path) -> None:
        """The default run's llama.cpp models: the generator/judge and both models under test."""
        ids = [spec.id for spec in smoke.local_models(root / "params" / "default.yaml")]
        assert {"qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"} <= set(ids) and ids == sorted(ids)


class TestCheck:
    def test_crash_named(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A child killed by SIGSEGV: one message with the model, the signal, llama.cpp's info and advice."""
        fake_models(
            monkeypatch,
            "import os, signal, sys; print('ggml_backend_amx_mul_mat', file=sys.stderr, flush=True); "
            "os.kill(os.getpid(), signal.SIGSEGV)",
        )
        (message,) = smoke.check("params/default.yaml")
        assert "model 'crashy-1b' killed by SIGSEGV (signal 11" in message
        assert "llama.cpp system info: " in message and "AVX" in message
        assert "ggml_backend_amx_mul_mat" in message and "What to do: " in message

    def test_empty_answer_fails(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A model that answers '' fails the check."""
        fake_models(monkeypatch, "import json; print(json.dumps({'model': 'crashy-1b', 'answer': '', 'seconds': 0}))")
        (message,) = smoke.check("params/default.yaml")
        assert "answered nothing" in message

    def test_answer_passes(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """A model that answers passes, and its answer is shown."""
        fake_models(
            monkeypatch, "import json; print(json.dumps({'model': 'crashy-1b', 'answer': 'Green', 'seconds': 1.5}))"
        )
        assert smoke.check("params/default.yaml") == []
        assert "crashy-1b: 'Green' in 1.5 s" in capsys.readouterr().out


@pytest.mark.slow
class TestReal:
    def test_smallest_model_answers(self, root: Path) -> None:
        """SmolLM2-135M, loaded by the installed llama.cpp build in its own process, answers."""
        from declinecraft.core.config import load

        cfg = load(root / "params" / "default.yaml")
        spec = registry.get_model(root / "params" / "models.yaml", "smollm2-135m")
        result = smoke.answer_once(spec, cfg.cache_dir)
        assert result["model"] == "smollm2-135m" and result["answer"]
