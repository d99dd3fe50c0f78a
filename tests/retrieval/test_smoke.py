"""Tests for declinecraft.retrieval.smoke: setup's check that the run's embedder and reranker load and work."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.retrieval import smoke


@pytest.mark.slow
class TestReal:
    def test_retrieval_models(self, root: Path) -> None:
        """The default run's embedder and reranker pass their check, each in its own process."""
        assert smoke.check(root / "params" / "default.yaml") == []
