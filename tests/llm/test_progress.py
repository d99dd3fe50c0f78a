"""Tests for declinecraft.llm.progress: the batch progress bar's counts."""

from __future__ import annotations

import pytest

from declinecraft.llm.progress import Progress


class TestProgress:
    def test_counts(self) -> None:
        """Cache hits and failures are counted apart; the bar starts at the hits already known and
        advances once per call."""
        bar = Progress(5, hits=1, failed=0, desc="m", enabled=True)
        bar.cached(failed=False)
        bar.cached(failed=True)
        bar.step(failed=True)
        bar.step(failed=False)
        assert (bar.hits, bar.failed, bar.bar.n) == (3, 2, 5)
        bar.close()

    def test_postfix_shown(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An enabled bar shows the cached and failed counts when it closes."""
        bar = Progress(2, hits=0, failed=0, desc="model-x", enabled=True)
        bar.cached(failed=False)
        bar.step(failed=True)
        bar.close()
        shown = capsys.readouterr().err
        assert "model-x" in shown and "cached=1 failed=1" in shown
