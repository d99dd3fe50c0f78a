"""Shared fixtures: the project root, a throwaway project tree for run-isolation tests, and a
fake OpenAI-compatible server for the LLM-client tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import fake_openai

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository root."""
    return ROOT


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A minimal project tree (pyproject + params) in a temporary folder."""
    (tmp_path / "params").mkdir()
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "params" / "default.yaml", tmp_path / "params" / "default.yaml")
    return tmp_path


@pytest.fixture(scope="module")
def server() -> Iterator[fake_openai.FakeServer]:
    """A fake OpenAI-compatible server with no added latency, one per test module."""
    handle = fake_openai.start(latency=0.0)
    yield handle
    handle.stop()
