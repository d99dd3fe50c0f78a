"""Tests for declinecraft.paper.quoted: the table of quoted numbers.

The table replaced hand-written ``Number(...)`` blocks; before they were deleted, a test printed
``numbers.tex`` from both on a synthetic run and found them byte for byte the same."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.paper import numbers, quoted


class TestTable:
    def test_every_line_is_a_number(self) -> None:
        """Every line of the table that is not a comment or the header is one number, in order."""
        lines = [line for line in quoted.TABLE.read_text(encoding="utf-8").splitlines() if line and line[0] != "#"]
        assert [n.macro for n in quoted.NUMBERS] == [line.split("\t")[0] for line in lines[1:]]

    def test_computes(self, results: dict[str, pl.DataFrame]) -> None:
        """On a synthetic run's tables every number prints one macro, most of them with a value."""
        computed = numbers.compute(results)
        assert computed.height == len(quoted.NUMBERS)
        assert computed.filter(pl.col("reason") == "").height > len(quoted.NUMBERS) // 2


class TestLoad:
    def test_bad_getter(self, tmp_path: Path) -> None:
        """A getter that does not exist is an error naming the line."""
        table = tmp_path / "numbers.tsv"
        table.write_text("\t".join(quoted.COLUMNS) + "\nX\tint\tno_such_getter\t\t\t\tx\n", encoding="utf-8")
        with pytest.raises(ValueError, match="numbers.tsv:2: 'no_such_getter'"):
            quoted.load(table)

    def test_arguments(self) -> None:
        """Words become strings, integers and booleans; key=value a keyword argument."""
        assert [quoted._argument(w) for w in ("single", "3", "true", "false")] == ["single", 3, True, False]
