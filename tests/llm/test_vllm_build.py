"""Tests for declinecraft.llm.vllm_build: installing the vLLM engine, kept when already right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from declinecraft.llm import vllm_build, vllm_engine
from tests.support import engines


class TestInstall:
    def test_kept_when_pins_match(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A second `make vllm` keeps an engine built with the same pins and runs no pip."""
        engines.write_engine(tmp_path, engines.CPU)
        stamp = vllm_engine.stamp_path(tmp_path)
        stamp.write_text(
            json.dumps({**json.loads(stamp.read_text()), "requirements": list(vllm_engine.CPU_REQUIREMENTS)})
        )
        monkeypatch.setattr(vllm_build.subprocess, "run", lambda *a, **k: pytest.fail(f"ran {a}"))
        assert vllm_build.install(tmp_path, "cpu") == engines.CPU
