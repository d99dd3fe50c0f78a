"""Shared fixtures: the project root and a throwaway project tree for run-isolation tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
