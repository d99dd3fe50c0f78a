"""Tests for declinecraft.construction.croissant: the Croissant data types."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.construction import croissant


class TestDataType:
    @pytest.mark.parametrize(
        ("dtype", "expected"),
        [
            (pl.String, ("sc:Text", False)),
            (pl.List(pl.String), ("sc:Text", True)),
            (pl.Boolean, ("sc:Boolean", False)),
            (pl.Int64, ("sc:Integer", False)),
        ],
    )
    def test_known(self, dtype: pl.DataType, expected: tuple[str, bool]) -> None:
        """Polars column types map to Croissant data types, lists as repeated fields."""
        assert croissant.data_type(dtype) == expected

    def test_unknown(self) -> None:
        """A column type with no Croissant counterpart is an error naming it."""
        with pytest.raises(ValueError, match="Binary"):
            croissant.data_type(pl.Binary)
