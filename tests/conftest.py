"""Shared fixtures: the project root, a throwaway project tree for run-isolation tests, a fake
OpenAI-compatible server for the LLM-client tests, and one whole scripted run for the session.

The scripted run (every role on hosted models that the fake server answers, tests/support/faults.py)
is a cold ``make all`` of about 2.5 minutes; the replay-bundle test and the fault suite's whole-run
tests share it instead of each making their own."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.llm import serve
from tests.support import fake_openai, faults, projects


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository root."""
    return projects.REPO


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A minimal project tree (pyproject, params, the judges' check set) in a temporary folder."""
    (tmp_path / "params").mkdir()
    shutil.copy(projects.REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(projects.REPO / "params" / "default.yaml", tmp_path / "params" / "default.yaml")
    shutil.copytree(projects.REPO / "data" / "judge_check", tmp_path / "data" / "judge_check")  # judge.check_file
    return tmp_path


@pytest.fixture(scope="module")
def server() -> Iterator[fake_openai.FakeServer]:
    """A fake OpenAI-compatible server with no added latency, one per test module."""
    handle = fake_openai.start(latency=0.0)
    yield handle
    handle.stop()


@pytest.fixture(scope="session")
def scripted_api() -> Iterator[fake_openai.FakeServer]:
    """The fake hosted API of the scripted runs, on one port for the session (the port is in the
    cache keys, so runs against it can be compared byte for byte)."""
    handle = fake_openai.start(latency=0.02, respond="tests.support.fake_model:reply", port=serve.free_port())
    yield handle
    handle.stop()


@pytest.fixture(scope="session")
def scripted_run(tmp_path_factory: pytest.TempPathFactory, scripted_api: fake_openai.FakeServer) -> faults.ScriptedRun:
    """One uninterrupted cold scripted run, made at its first use. Tests that use it may add
    files to it (a bundle) or rerun a stage, but must leave its compared files as they were."""
    return faults.scripted_run(tmp_path_factory.mktemp("scripted"), scripted_api)
