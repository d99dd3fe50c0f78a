"""The two views' outputs beside the judged responses: Know2Guess decisions, evidence contexts.

Pure reading of the views' stage files. :func:`with_know2guess` adds each response's declared
Know2Guess decision (``08_know2guess/know2guess_decisions.csv``: standard prompt, strict parser,
the same model, thinking setting, condition and question); :func:`question_contexts` lists the
six evidence contexts of a question (``09_evidence/``: L1-L5, L5 in two orders; T for an
unanswerable question) with what each model answered under each prompt.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.catalogue import Artifact

#: Columns of :func:`question_contexts`, in order.
COLUMNS = (
    "question_id",
    "level",
    "order",
    "query",
    "chunk_ids",
    "target_position",
    "context",
    "answer_string",
    "altered_string",
    "model",
    "thinking",
    "prompt",
    "response",
    "label",
    "esb_judge",
    "esb_rule",
    "accuracy",
    "known_wrong",
    "l5_type",
)
_LEVEL_ORDER = {"L1": 0, "L2": 1, "L3": 2, "L4": 3, "L5": 4, "T": 5}


def _read(folder: Path, artifact: Artifact) -> pl.DataFrame:
    path = Path(folder) / artifact.name
    if not path.is_file():
        raise FileNotFoundError(f"missing evidence output {path}: run {catalogue.notebook(artifact.stage)} first")
    return pl.read_parquet(path)


def question_ids(folder: Path) -> list[str]:
    """The questions that have evidence instances, sorted."""
    return sorted(_read(folder, catalogue.EVIDENCE_INSTANCES)["question_id"].unique().to_list())


def question_contexts(folder: Path, question_id: str) -> pl.DataFrame:
    """One row per (context, response) of a question, levels in order L1-L5, T (see :data:`COLUMNS`).

    A context nobody answered (no model in the run) keeps one row with null response columns; an
    unknown question gives an empty frame.
    """
    instances = _read(folder, catalogue.EVIDENCE_INSTANCES).filter(pl.col("question_id") == question_id)
    judged = _read(folder, catalogue.EVIDENCE_JUDGED).filter(pl.col("question_id") == question_id)
    wanted = [
        "instance_id",
        "model",
        "thinking",
        "prompt",
        "response",
        "label",
        "esb_judge",
        "esb_rule",
        "accuracy",
        "known_wrong",
        "l5_type",
    ]
    for name in wanted:
        if name not in judged.columns:
            judged = judged.with_columns(pl.lit(None).alias(name))
    frame = instances.join(judged.select(wanted), on="instance_id", how="left")
    frame = frame.with_columns(
        _level=pl.col("level").replace_strict(_LEVEL_ORDER, default=9, return_dtype=pl.Int64),
        _order=(pl.col("order") == "conflict_first").cast(pl.Int64),  # gold first, as built
    )
    return frame.sort("_level", "_order", "model", "thinking", "prompt", nulls_last=True).select(COLUMNS)


#: Columns :func:`with_know2guess` adds (null where the view has no decision for the response).
KNOW2GUESS_COLUMNS = {"k2g_state": pl.String, "k2g_confidence": pl.Float64, "k2g_answer": pl.String}


def with_know2guess(
    frame: pl.DataFrame, folder: Path, *, prompt: str = "standard", parser: str = "strict"
) -> pl.DataFrame:
    """Add the Know2Guess decision of each no-RAG and main single-shot response (``setting``
    ``no_rag`` / ``single``); columns :data:`KNOW2GUESS_COLUMNS`, null where there is none."""
    path = Path(folder) / catalogue.K2G_DECISIONS.name
    if path.is_file():
        decisions = pl.read_csv(path, infer_schema_length=10_000, schema_overrides={"question_id": pl.String})
        decisions = decisions.filter(pl.col("prompt") == prompt, pl.col("parser") == parser).select(
            "model",
            "thinking",
            pl.col("condition").alias("setting"),
            "question_id",
            pl.col("state").alias("k2g_state"),
            pl.col("confidence").cast(pl.Float64).alias("k2g_confidence"),
            pl.col("answer").cast(pl.String).alias("k2g_answer"),
        )
        keys = ["model", "thinking", "setting", "question_id"]
        if all(k in frame.columns for k in keys):
            return frame.join(decisions, on=keys, how="left", maintain_order="left")
    return frame.with_columns(*(pl.lit(None, dtype=d).alias(c) for c, d in KNOW2GUESS_COLUMNS.items()))
