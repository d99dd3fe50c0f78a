"""Tests for declinecraft.analysis.results: the result CSVs written and read back."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from declinecraft.analysis import results


class TestWriteCsv:
    def test_round_trip(self, tmp_path: Path) -> None:
        """NaN and booleans survive a write and read."""
        frame = pl.DataFrame({"x": [1.0, float("nan")], "b": [True, False]})
        results.write_csv(frame, tmp_path / "t.csv")
        back = results.read_tables(tmp_path)["t"]
        assert back["b"].to_list() == [True, False] and math.isnan(back["x"][1])


class TestReadTables:
    def test_empty_folder(self, tmp_path: Path) -> None:
        """A folder without CSVs gives no tables."""
        assert results.read_tables(tmp_path) == {}
