"""The analysis results on disk: one CSV per tidy table in ``outputs/<run>/07_analysis/``.

The paper stage reads the tables back from these files rather than from memory, so every figure,
table and number of the paper is drawn from exactly what the analysis stage wrote.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core.stage_writer import write_frame

#: Digits of every float in a result table.
FLOAT_PRECISION = 6


def write_csv(table: pl.DataFrame, target: Path) -> Path:
    """Write a table atomically as CSV (NaN as empty, nested columns as text) and return its path."""
    return write_frame(table, target, float_precision=FLOAT_PRECISION)


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """Read back every CSV an analysis stage wrote, keyed by file stem (empty when there is none)."""
    return {p.stem: pl.read_csv(p, infer_schema_length=10000) for p in sorted(folder.glob("*.csv"))}
