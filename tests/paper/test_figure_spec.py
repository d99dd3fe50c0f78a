"""Tests for declinecraft.paper.figure_spec: what each figure needs."""

from __future__ import annotations

import polars as pl

from declinecraft.paper import figure_spec


class TestNeeds:
    def test_reason(self, tables: dict[str, pl.DataFrame]) -> None:
        """A check returns its reason when the table lacks rows or distinct values."""
        assert figure_spec.needs("main_grid", "why", condition="nope")(tables) == "why"
        assert figure_spec.needs("main_grid", "why", distinct="thinking")(tables) == ""
        assert figure_spec.needs("absent", "why")(tables) == "why"


class TestAlways:
    def test_empty(self) -> None:
        """The pipeline diagram needs nothing."""
        assert figure_spec.always({}) == ""
