"""The files the stages hand each other: readers that check what they read.

A stage reads its upstream's outputs only through these functions, so a missing or malformed file
gets one clear error naming the file and the command that makes it, whichever stage reads it.

===========================  ====================  ==========================================
file (under outputs/<run>/)  written by            read by
===========================  ====================  ==========================================
01_corpus/chunks_*.parquet   01_corpus             index, generation, judging (:func:`read_chunks`)
01_corpus/pages_*.parquet    01_corpus             judging (:func:`read_pages`)
04_verify/benchmark.parquet  04_verify             answering, judging, views (:func:`read_benchmark`)
05_answer/responses.parquet  05_answer             judging, views (:func:`read_responses`)
05_answer/retrieved.parquet  05_answer             views (:func:`read_stage_file`)
06_judge/references.parquet  06_judge              views (:func:`read_stage_file`)
06_judge/judged.parquet      06_judge              views (:func:`read_stage_file`)
===========================  ====================  ==========================================
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from declinecraft.core.config import RunConfig

#: Columns the corpus stage writes (chunks_pre.parquet, chunks_post.parquet).
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
    """Read the corpus stage's ``chunks_pre.parquet`` and ``chunks_post.parquet``.

    Raises:
        FileNotFoundError: a file is missing; the message names it and says how to make it.
        ValueError: a file lacks a column of :data:`CHUNK_COLUMNS` or holds the wrong corpus.
    """
    folder = cfg.stage_dir("corpus")
    frames = []
    for corpus in CORPORA:
        path = folder / f"chunks_{corpus}.parquet"
        if not path.is_file():
            hint = (
                " (the corpus stage is not built yet: NOT_BUILT.md is there)"
                if (folder / "NOT_BUILT.md").exists()
                else ""
            )
            raise FileNotFoundError(
                f"missing upstream corpus output {path}{hint}: run 01_corpus first "
                f"(make nb NB=01 PARAMS={cfg.params_file.relative_to(cfg.root)})"
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
    """Read ``05_answer/responses.parquet`` (error naming the file when it is missing)."""
    path = cfg.stage_dir("answer") / "responses.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"missing upstream responses {path}: run 05_answer first")
    return pl.read_parquet(path)


def read_pages(cfg: RunConfig) -> dict[bool, dict[str, str]]:
    """Page texts by title: ``{True: C_pre pages, False: C_post pages}`` (keyed by answerability)."""
    folder = cfg.stage_dir("corpus")
    out = {}
    for answerable, name in ((True, "pages_pre"), (False, "pages_post")):
        path = folder / f"{name}.parquet"
        if not path.is_file():
            raise FileNotFoundError(f"missing upstream pages {path}: run 01_corpus first")
        frame = pl.read_parquet(path, columns=["title", "text"])
        out[answerable] = dict(zip(frame["title"], frame["text"], strict=True))
    return out


def read_benchmark(cfg: RunConfig, needed: Sequence[str] = BENCHMARK_COLUMNS) -> pl.DataFrame:
    """Read ``04_verify/benchmark.parquet``.

    Raises:
        FileNotFoundError: the file is missing (names it and the command that makes it).
        ValueError: a column this stage needs is missing.
    """
    path = cfg.stage_dir("verify") / "benchmark.parquet"
    if not path.is_file():
        raise FileNotFoundError(
            f"missing upstream benchmark {path}: run 04_verify first (make all PARAMS="
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


def read_stage_file(cfg: RunConfig, stage: str, name: str, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """Read ``<stage dir>/<name>`` (only ``columns``, when given), e.g. ``("judge", "references.parquet")``.

    Raises:
        FileNotFoundError: the file is missing; the message names it and the notebook that writes it.
    """
    path = cfg.stage_dir(stage) / name
    if not path.is_file():
        raise FileNotFoundError(f"missing upstream file {path}: run {path.parent.name} first")
    return pl.read_parquet(path, columns=list(columns) if columns is not None else None)
