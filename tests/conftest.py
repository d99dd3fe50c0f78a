"""Shared fixtures: the project root, a throwaway project tree for run-isolation tests, and a
fake OpenAI-compatible server for the LLM-client tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import fake_openai, projects


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository root."""
    return projects.REPO


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A minimal project tree (pyproject + params) in a temporary folder."""
    (tmp_path / "params").mkdir()
    shutil.copy(projects.REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(projects.REPO / "params" / "default.yaml", tmp_path / "params" / "default.yaml")
    return tmp_path


@pytest.fixture(scope="module")
def server() -> Iterator[fake_openai.FakeServer]:
    """A fake OpenAI-compatible server with no added latency, one per test module."""
    handle = fake_openai.start(latency=0.0)
    yield handle
    handle.stop()
