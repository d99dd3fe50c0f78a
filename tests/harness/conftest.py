"""Fixtures of the harness tests: one llama.cpp server of the default run's smallest model for
both outside harnesses, and our own answers they must reproduce (skipped without the harness
extra or the default run's answers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from declinecraft.core import paths
from declinecraft.core.registry import get_model
from declinecraft.llm import serve
from tests.support import harness_runs, projects


@pytest.fixture(scope="session")
def base_url() -> Iterator[str]:
    """A llama.cpp server of the model, started and stopped by the project's own machinery."""
    harness_runs.skip_unless_ready()
    spec = get_model(projects.REPO / "params" / "models.yaml", harness_runs.MODEL)
    with serve.serve(spec, paths.cache_dir(projects.REPO), reuse=False) as server:
        yield server.base_url


@pytest.fixture(scope="session")
def ours() -> harness_runs.Ours:
    """Our responses, rule labels and CAR for the model without retrieval on the first questions."""
    harness_runs.skip_unless_ready()
    return harness_runs.ours()
