"""The files the stages hand each other: readers that check what they read.

A stage reads its upstream's outputs (:mod:`declinecraft.core.catalogue`) through these
functions, so a missing or malformed file gets one clear error naming the file and the command
that makes it, whichever stage reads it: the corpus chunks (:func:`read_chunks`) and pages
(:func:`read_pages`), the benchmark (:func:`read_benchmark`), the responses
(:func:`read_responses`) and any other stage file (:func:`read_stage_file`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.catalogue import Artifact
from declinecraft.core.config import RunConfig

#: Columns the corpus stage writes in its chunk tables.
CHUNK_COLUMNS = ("chunk_id", "title", "text", "url", "revision_id", "timestamp", "corpus")
REQUIRED_COLUMNS = ("chunk_id", "text", "corpus")
CORPORA = ("pre", "post")
#: Benchmark columns the evaluation stages read.
BENCHMARK_COLUMNS = ("id", "answerable", "asked_question", "question", "target_chunk_id", "scenario_chunk_ids")


def validate_chunks(chunks: pl.DataFrame, *, where: str = "chunks") -> pl.DataFrame:
    """Check a chunk frame and return it with every column of :data:`CHUNK_COLUMNS`, C_pre first.

    ``chunk_id``, ``text`` and ``corpus`` are required; missing metadata columns are added as
    nulls. Row order within each corpus is kept.

    Raises:
        ValueError: a required column is missing, a value is null, ``corpus`` is not pre/post, or a
            chunk_id repeats — naming ``where`` and the offending chunk.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in chunks.columns]
    if missing:
        raise ValueError(f"{where}: missing column {missing[0]!r} (have: {', '.join(chunks.columns)})")
    frame = chunks.with_columns(
        [pl.lit(None, dtype=pl.Utf8).alias(c) for c in CHUNK_COLUMNS if c not in chunks.columns]
    ).select(CHUNK_COLUMNS)
    frame = frame.with_columns(pl.col("chunk_id").cast(pl.Utf8), pl.col("text").cast(pl.Utf8))
    for column in REQUIRED_COLUMNS:
        nulls = frame.filter(pl.col(column).is_null())
        if nulls.height:
            row = frame.with_row_index().filter(pl.col(column).is_null())["index"][0]
            raise ValueError(f"{where}: row {row} has no {column}")
    bad = frame.filter(~pl.col("corpus").is_in(CORPORA))
    if bad.height:
        raise ValueError(
            f"{where}: chunk {bad['chunk_id'][0]!r} has corpus {bad['corpus'][0]!r} (expected 'pre' or 'post')"
        )
    dupes = frame.filter(pl.col("chunk_id").is_duplicated())
    if dupes.height:
        raise ValueError(f"{where}: chunk_id {dupes['chunk_id'][0]!r} occurs {dupes.height} times")
    return pl.concat([frame.filter(pl.col("corpus") == c) for c in CORPORA])


def read_chunks(cfg: RunConfig) -> pl.DataFrame:
    """Read the corpus stage's C_pre and C_post chunks.

    Raises:
        FileNotFoundError: a file is missing; the message names it and says how to make it.
        ValueError: a file lacks a column of :data:`CHUNK_COLUMNS` or holds the wrong corpus.
    """
    folder = cfg.stage_dir("corpus")
    frames = []
    for corpus in CORPORA:
        path = catalogue.CORPUS_CHUNKS[corpus].path(cfg)
        if not path.is_file():
            hint = (
                f" (the corpus stage is not built yet: {catalogue.NOT_BUILT} is there)"
                if (folder / catalogue.NOT_BUILT).exists()
                else ""
            )
            notebook = catalogue.notebook("corpus")
            raise FileNotFoundError(
                f"missing upstream corpus output {path}{hint}: run {notebook} first "
                f"(make nb NB={notebook[:2]} PARAMS={cfg.params_file.relative_to(cfg.root)})"
            )
        frame = pl.read_parquet(path)
        missing = [c for c in CHUNK_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"{path}: missing column {missing[0]!r} (have: {', '.join(frame.columns)})")
        wrong = frame.filter(pl.col("corpus") != corpus)
        if wrong.height:
            raise ValueError(f"{path}: chunk {wrong['chunk_id'][0]!r} has corpus {wrong['corpus'][0]!r}")
        frames.append(frame.select(CHUNK_COLUMNS))
    return validate_chunks(pl.concat(frames, how="vertical_relaxed"), where=str(folder))


def read_responses(cfg: RunConfig) -> pl.DataFrame:
    """Read the answer stage's responses (error naming the file when it is missing)."""
    path = catalogue.ANSWER_RESPONSES.path(cfg)
    if not path.is_file():
        raise FileNotFoundError(f"missing upstream responses {path}: run {catalogue.notebook('answer')} first")
    return pl.read_parquet(path)


def read_pages(cfg: RunConfig) -> dict[bool, dict[str, str]]:
    """Page texts by title: ``{True: C_pre pages, False: C_post pages}`` (keyed by answerability)."""
    out = {}
    for answerable, corpus in ((True, "pre"), (False, "post")):
        path = catalogue.CORPUS_PAGES[corpus].path(cfg)
        if not path.is_file():
            raise FileNotFoundError(f"missing upstream pages {path}: run {catalogue.notebook('corpus')} first")
        frame = pl.read_parquet(path, columns=["title", "text"])
        out[answerable] = dict(zip(frame["title"], frame["text"], strict=True))
    return out


def read_benchmark(cfg: RunConfig, needed: Sequence[str] = BENCHMARK_COLUMNS) -> pl.DataFrame:
    """Read the verify stage's benchmark.

    Raises:
        FileNotFoundError: the file is missing (names it and the command that makes it).
        ValueError: a column this stage needs is missing.
    """
    path = catalogue.VERIFY_BENCHMARK.path(cfg)
    if not path.is_file():
        raise FileNotFoundError(
            f"missing upstream benchmark {path}: run {catalogue.notebook('verify')} first (make all PARAMS="
            f"{cfg.params_file.relative_to(cfg.root)})"
        )
    frame = pl.read_parquet(path)
    if missing := [c for c in needed if c not in frame.columns]:
        raise ValueError(f"{path}: missing column {missing[0]!r} (have: {', '.join(frame.columns)})")
    return validate_benchmark(frame.with_columns(pl.col("id").cast(pl.String)), where=str(path))


def validate_benchmark(frame: pl.DataFrame, *, where: str = "benchmark") -> pl.DataFrame:
    """Check the records every evaluation stage relies on, and return the frame unchanged.

    Raises:
        ValueError: an id that is missing or repeats, or a question (or asked question) that is
            empty, naming ``where`` and the record.
    """
    if "id" in frame.columns:
        if frame["id"].null_count():
            row = frame.with_row_index().filter(pl.col("id").is_null())["index"][0]
            raise ValueError(f"{where}: row {row} has no id")
        dupes = frame.filter(pl.col("id").is_duplicated())
        if dupes.height:
            raise ValueError(f"{where}: id {dupes['id'][0]!r} occurs {dupes.height} times (ids must be unique)")
    for column in ("question", "asked_question"):
        if column not in frame.columns:
            continue
        empty = frame.filter(pl.col(column).cast(pl.String).fill_null("").str.strip_chars() == "")
        if empty.height:
            which = f"id {empty['id'][0]!r}" if "id" in empty.columns else "a record"
            raise ValueError(f"{where}: {which} has an empty {column} ({empty.height} such records)")
    return frame


def read_stage_file(cfg: RunConfig, artifact: Artifact, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """Read a stage's Parquet artifact (only ``columns``, when given), e.g. ``catalogue.JUDGE_REFERENCES``.

    Raises:
        FileNotFoundError: the file is missing; the message names it and the notebook that writes it.
    """
    path = artifact.path(cfg)
    if not path.is_file():
        raise FileNotFoundError(f"missing upstream file {path}: run {path.parent.name} first")
    return pl.read_parquet(path, columns=list(columns) if columns is not None else None)
