"""One question's evidence contexts with every response to them, read from the view's files.

Pure reading of ``outputs/<run>/10_evidence/`` (``instances.parquet``, ``judged.parquet``): what
an explorer page needs to show the six contexts of a question (L1-L5, L5 in two orders; T for an
unanswerable question) and what each model answered under each prompt.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

#: Columns of :func:`question_contexts`, in order.
COLUMNS = (
    "question_id", "level", "order", "query", "chunk_ids", "target_position", "context", "answer_string",
    "altered_string", "model", "thinking", "prompt", "response", "label", "esb_judge", "esb_rule", "accuracy",
    "known_wrong", "l5_type",
)  # fmt: skip
_LEVEL_ORDER = {"L1": 0, "L2": 1, "L3": 2, "L4": 3, "L5": 4, "T": 5}


def _read(folder: Path, name: str) -> pl.DataFrame:
    path = Path(folder) / name
    if not path.is_file():
        raise FileNotFoundError(f"missing evidence output {path}: run 10_evidence first")
    return pl.read_parquet(path)


def question_ids(folder: Path) -> list[str]:
    """The questions that have evidence instances, sorted."""
    return sorted(_read(folder, "instances.parquet")["question_id"].unique().to_list())


def question_contexts(folder: Path, question_id: str) -> pl.DataFrame:
    """One row per (context, response) of a question, levels in order L1-L5, T (see :data:`COLUMNS`).

    A context nobody answered (no model in the run) keeps one row with null response columns; an
    unknown question gives an empty frame.
    """
    instances = _read(folder, "instances.parquet").filter(pl.col("question_id") == question_id)
    judged = _read(folder, "judged.parquet").filter(pl.col("question_id") == question_id)
    wanted = ["instance_id", "model", "thinking", "prompt", "response", "label", "esb_judge", "esb_rule",
              "accuracy", "known_wrong", "l5_type"]  # fmt: skip
    for name in wanted:
        if name not in judged.columns:
            judged = judged.with_columns(pl.lit(None).alias(name))
    frame = instances.join(judged.select(wanted), on="instance_id", how="left")
    frame = frame.with_columns(
        _level=pl.col("level").replace_strict(_LEVEL_ORDER, default=9, return_dtype=pl.Int64),
        _order=(pl.col("order") == "conflict_first").cast(pl.Int64),  # gold first, as built
    )
    return frame.sort("_level", "_order", "model", "thinking", "prompt", nulls_last=True).select(COLUMNS)
