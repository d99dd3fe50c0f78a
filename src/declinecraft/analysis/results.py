"""The analysis results on disk: one CSV per tidy table in ``outputs/<run>/07_analysis/``.

The paper stage reads the tables back from these files rather than from memory, so every figure,
table and number of the paper is drawn from exactly what the analysis stage wrote.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core import paths


def write_csv(table: pl.DataFrame, target: Path) -> Path:
    """Write a table atomically as CSV (NaN as empty, nested columns as text) and return its path."""
    flat = table.with_columns(pl.col(c).cast(pl.String) for c, t in table.schema.items() if t.is_nested())
    with paths.atomic_path(target) as tmp:
        flat.write_csv(tmp, float_precision=6)
    return target


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """Read back every CSV an analysis stage wrote, keyed by file stem (empty when there is none)."""
    return {p.stem: pl.read_csv(p, infer_schema_length=10000) for p in sorted(folder.glob("*.csv"))}
