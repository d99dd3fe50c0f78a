"""Tests for declinecraft.paper.quoted: the table of quoted numbers, and the same macros as the
hand-written blocks it replaces."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.paper import numbers, quoted
from declinecraft.paper.quoted import ablations, associations, benchmark, checks, headline, thinking

OLD = [*benchmark.NUMBERS, *headline.NUMBERS, *associations.NUMBERS, *thinking.NUMBERS, *ablations.NUMBERS]
OLD += checks.NUMBERS


class TestSameAsTheBlocks:
    def test_records(self) -> None:
        """Every number keeps its macro, meaning, format, reported key and unit, in the same order."""
        fields = [(n.macro, n.what, n.fmt, n.reported, n.unit, n.n is None) for n in quoted.NUMBERS]
        assert fields == [(n.macro, n.what, n.fmt, n.reported, n.unit, n.n is None) for n in OLD]

    @pytest.mark.parametrize("min_n", [0, 6, 10_000])
    def test_macros(self, results: dict[str, pl.DataFrame], min_n: int, monkeypatch: pytest.MonkeyPatch) -> None:
        """On a synthetic run's tables, the table prints numbers.tex byte for byte as the blocks did."""
        new = numbers.numbers_tex(numbers.compute(results, min_n=min_n))
        monkeypatch.setattr(numbers, "NUMBERS", OLD)
        old = numbers.numbers_tex(numbers.compute(results, min_n=min_n))
        assert new == old and new.count("\\newcommand") == len(OLD)

    @pytest.mark.parametrize("drop", ["thinking_transitions", "paired_tests", "main_grid", "summary", "frontier"])
    def test_reasons(self, results: dict[str, pl.DataFrame], drop: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without one table, the same numbers are n/a for the same reasons."""
        tables = {k: v for k, v in results.items() if k != drop}
        new = numbers.numbers_tex(numbers.compute(tables))
        monkeypatch.setattr(numbers, "NUMBERS", OLD)
        assert new == numbers.numbers_tex(numbers.compute(tables))


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
