"""The default run's config, read once for the stage declarations' tests."""

from __future__ import annotations

import pytest

from declinecraft.core import config
from tests.support import projects


@pytest.fixture(scope="module")
def cfg() -> config.RunConfig:
    """``params/default.yaml`` of the repository."""
    return config.load(projects.REPO / "params" / "default.yaml")
