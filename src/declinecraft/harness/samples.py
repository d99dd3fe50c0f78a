"""Benchmark questions for outside harnesses: read from a run or a release file, as prompts.

A source is a run folder (``outputs/<run>``: its ``04_verify/benchmark.parquet``), a release file
(``.jsonl``, full or minimal schema, :mod:`declinecraft.construction.release`) or a benchmark
parquet. Each question becomes a :class:`Question` whose ``query`` is what the answer stage shows
the model (scenario and question), and :func:`prompt` renders the answer stage's own template
(``params/prompts/``), so a harness sends the same user message as ``05_answer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from declinecraft.construction.release import read_release
from declinecraft.core import catalogue, paths, prompts
from declinecraft.core.artifacts import validate_benchmark
from declinecraft.evaluation.answer import Setting, answer_call, query_of

#: Benchmark file of a run folder.
RUN_BENCHMARK = Path(catalogue.VERIFY_BENCHMARK.relative())


@dataclass(frozen=True)
class Question:
    """One benchmark question as a harness sample."""

    id: str
    answerable: bool
    query: str
    """Scenario and question: the model's question and the retrieval query (``answer.query_of``)."""


def read_questions(source: str | Path, *, ids: Sequence[str] = (), limit: int = 0) -> list[Question]:
    """Read the questions of a run folder, a release ``.jsonl`` or a benchmark ``.parquet``, by id.

    Args:
        ids: keep these question ids only (in id order); empty keeps all.
        limit: keep the first ``limit`` questions by id; 0 keeps all.

    Raises:
        FileNotFoundError: the source (or a run's benchmark) does not exist.
        ValueError: an unknown file kind, an id not in the benchmark, or a bad record.
    """
    path = Path(source)
    if path.is_dir():
        path = path / RUN_BENCHMARK
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no benchmark here (a run folder needs {RUN_BENCHMARK})")
    if path.suffix == ".parquet":
        frame = validate_benchmark(pl.read_parquet(path).with_columns(pl.col("id").cast(pl.String)), where=str(path))
        rows = frame.to_dicts()
    elif path.suffix == ".jsonl":
        release = read_release(path)
        rows = [_full(r) if release.schema == "minimal" else r for _, r in release.rows]
    else:
        raise ValueError(f"{path}: a benchmark is a run folder, a .jsonl release or a .parquet file")
    questions = sorted(
        (Question(str(r["id"]), bool(r["answerable"]), query_of(r, True)) for r in rows), key=lambda q: q.id
    )
    if ids:
        known = {q.id for q in questions}
        if missing := [i for i in ids if i not in known]:
            raise ValueError(f"{path}: no question {missing[0]!r} in the benchmark")
        questions = [q for q in questions if q.id in set(ids)]
    return questions[:limit] if limit > 0 else questions


def _full(row: dict[str, object]) -> dict[str, object]:
    """A minimal-schema release record with the full schema's ``question`` (scenario + question)."""
    scenario, asked = str(row["scenario"]).strip(), str(row["question"]).strip()
    return {**row, "asked_question": asked, "question": f"{scenario} {asked}".strip()}


def prompt(query: str, condition: str, context: str | None = None, *, root: Path | None = None) -> str:
    """The answer stage's user message for a question: no retrieval, or single-shot RAG with ``context``.

    ``root`` is the project whose ``params/prompts/`` is read (default: the one this package is in).

    Raises:
        ValueError: an unknown condition, or single-shot RAG without a context.
    """
    if condition not in ("no_rag", "single"):
        raise ValueError(f"condition must be 'no_rag' or 'single', got {condition!r}")
    call = answer_call(Setting(condition), query, context)
    return prompts.load(call.prompt, root or paths.find_root(Path(__file__))).render(**call.fields)
