"""Fixtures of the explorer's tests: the hand-built run of tests/support/explorer_run.py, written and
loaded once per session."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft import explore
from declinecraft.core import config
from tests.support import explorer_run


@pytest.fixture(scope="session")
def run(tmp_path_factory: pytest.TempPathFactory) -> config.RunConfig:
    """The hand-built run written into a throwaway project."""
    return explorer_run.write_project(tmp_path_factory.mktemp("explore"))


@pytest.fixture(scope="session")
def frame(run: config.RunConfig) -> pl.DataFrame:
    """The hand-built run, loaded."""
    return explore.load(run)
