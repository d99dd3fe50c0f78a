"""Tests for declinecraft.llm.hf_convert: the script the vLLM engine's interpreter runs. The conversion
itself needs that interpreter and a GGUF file (``make vllm``); tests/llm/test_vllm_engine.py checks
how the converted folder is kept and reused."""

from __future__ import annotations

import ast
import runpy

import pytest

from declinecraft.llm import hf_convert


class TestConvert:
    def test_imports_nothing_of_the_project(self) -> None:
        """The script stands alone: it runs under another interpreter without the package installed."""
        tree = ast.parse(open(hf_convert.__file__, encoding="utf-8").read())
        modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(m.startswith("declinecraft") for m in modules)

    def test_usage(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """Run without its two paths, the script prints its usage and exits with status 2."""
        monkeypatch.setattr("sys.argv", ["hf_convert.py", "only-one"])
        with pytest.raises(SystemExit) as exit_:
            runpy.run_path(hf_convert.__file__, run_name="__main__")
        assert exit_.value.code == 2 and "usage: python hf_convert.py MODEL.gguf OUT_DIR" in capsys.readouterr().err
