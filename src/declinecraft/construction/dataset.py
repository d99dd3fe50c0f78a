"""A run's benchmark as a dataset folder in the Hugging Face layout (``make release RUN=<run>``).

``outputs/<run>/release/`` holds

- ``questions/test-00000-of-00001.parquet``: one row per question (:func:`questions_frame`);
- ``c_pre/corpus-00000-of-00001.parquet``: the retrievable C_pre chunks (:func:`chunks_frame`);
- ``README.md``: the dataset card, its YAML header naming both configs and their files (no
  loading script), then licence, cut-off, counts, how the benchmark was built and its limits;
- ``croissant.json``: the Croissant JSON-LD description, core and Responsible-AI fields
  (:mod:`declinecraft.construction.croissant`).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import jinja2
import polars as pl

from declinecraft.construction import croissant
from declinecraft.core import catalogue, paths
from declinecraft.core.artifacts import read_benchmark, read_chunks
from declinecraft.core.config import RunConfig, load

RELEASE_DIR = "release"
#: (config name, split, folder): the two configs of the dataset card's header.
CONFIGS = (("questions", "test", "questions"), ("c_pre", "corpus", "c_pre"))
#: Each released column with its meaning (the card's table and the Croissant fields).
QUESTION_FIELDS = {
    "id": "Question id (a… answerable, u… unanswerable).",
    "scenario": "The player's situation, written from a C_pre page.",
    "question": "The question asked after the scenario.",
    "answerable": "Whether the C_pre corpus holds the answer (false: it lies after the cut-off).",
    "target_page": "Title of the wiki page the question was written from.",
    "target_chunk_id": "Chunk of the target page holding the fact (C_pre for answerable, C_post otherwise).",
    "target_chunk": "Text of that chunk.",
    "facts": "The facts drafted from the target chunk.",
    "fact": "The fact the question asks about.",
    "reference": "The oracle's reference answer read from the target page (null where there is none).",
}
CHUNK_FIELDS = {
    "chunk_id": "Chunk id: page title and position.",
    "title": "Wiki page title.",
    "text": "Chunk text, headed by its page title.",
    "url": "Address of the page revision.",
    "revision_id": "Wiki revision the text comes from.",
    "timestamp": "Time of that revision (UTC).",
}
TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("declinecraft.construction", "templates"),
    autoescape=False,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


@dataclass(frozen=True)
class Release:
    """A written dataset folder and what it counts."""

    folder: Path
    questions: int
    answerable: int
    chunks: int


def _facts(cfg: RunConfig, bench: pl.DataFrame) -> pl.DataFrame:
    """Each question's drafted facts (from 04_verify's candidates), or its one fact where absent."""
    path = catalogue.VERIFY_CANDIDATES.path(cfg)
    if path.is_file() and "facts" in pl.read_parquet_schema(path):
        drafted = pl.read_parquet(path, columns=["id", "facts"]).with_columns(pl.col("id").cast(pl.String))
        bench = bench.join(drafted.unique("id", keep="first"), on="id", how="left")
    else:
        bench = bench.with_columns(pl.lit(None, pl.List(pl.String)).alias("facts"))
    return bench.with_columns(pl.coalesce("facts", pl.concat_list(pl.col("fact"))).alias("facts"))


def _references(cfg: RunConfig) -> pl.DataFrame:
    path = catalogue.JUDGE_REFERENCES.path(cfg)
    schema = {"id": pl.String, "reference": pl.String}
    if not path.is_file():
        return pl.DataFrame(schema=schema)
    frame = pl.read_parquet(path, columns=["question_id", "reference", "error"])
    return (
        frame.filter(pl.col("error").is_null() & (pl.col("reference").str.strip_chars() != ""))
        .select(pl.col("question_id").cast(pl.String).alias("id"), "reference")
        .unique("id", keep="first")
    )


def questions_frame(cfg: RunConfig) -> pl.DataFrame:
    """One row per benchmark question, the columns of :data:`QUESTION_FIELDS`, in benchmark order.

    Raises:
        FileNotFoundError: the benchmark (04_verify) or the corpus (01_corpus) is not built.
        ValueError: a question's target chunk is in neither corpus (names the question).
    """
    bench = _facts(
        cfg,
        read_benchmark(
            cfg, ("id", "answerable", "scenario", "asked_question", "fact", "target_chunk_id", "target_title")
        ),
    )
    chunks = read_chunks(cfg).select(pl.col("chunk_id").alias("target_chunk_id"), pl.col("text").alias("target_chunk"))
    frame = bench.join(chunks, on="target_chunk_id", how="left", maintain_order="left")
    if (lost := frame.filter(pl.col("target_chunk").is_null())).height:
        raise ValueError(
            f"question {lost['id'][0]!r}: target chunk {lost['target_chunk_id'][0]!r} is in neither corpus"
        )
    frame = frame.join(_references(cfg), on="id", how="left", maintain_order="left")
    return frame.select(
        "id",
        "scenario",
        pl.col("asked_question").alias("question"),
        "answerable",
        pl.col("target_title").alias("target_page"),
        "target_chunk_id",
        "target_chunk",
        "facts",
        "fact",
        "reference",
    )


def chunks_frame(cfg: RunConfig) -> pl.DataFrame:
    """The C_pre chunks (what retrieval searches), the columns of :data:`CHUNK_FIELDS`."""
    return read_chunks(cfg).filter(pl.col("corpus") == "pre").select(list(CHUNK_FIELDS))


def _licence(cfg: RunConfig) -> tuple[str, str]:
    """(Hugging Face licence id, sentence) of the released texts: the wiki's for a crawled corpus."""
    if cfg.corpus.source == "dump" and cfg.corpus.dump.startswith(("data/miniwiki/", "tests/data/")):
        return "apache-2.0", (
            "The mini wiki's pages are the project's own text (data/miniwiki/), released with the "
            "code under the Apache License 2.0."
        )
    return "cc-by-nc-sa-3.0", (
        "The texts come from the Minecraft Wiki (minecraft.wiki), whose content is licensed "
        "CC BY-NC-SA 3.0; the questions are derived from it under the same licence."
    )


def card(cfg: RunConfig, questions: pl.DataFrame, chunks: pl.DataFrame) -> str:
    """The dataset card: the YAML ``configs``/``data_files`` header, then the card's sections."""
    licence, licence_text = _licence(cfg)
    answerable = int(questions["answerable"].sum())
    return TEMPLATES.get_template("dataset_card.md").render(
        run=cfg.run,
        licence=licence,
        licence_text=licence_text,
        cutoff=cfg.corpus.cutoff,
        snapshot=cfg.corpus.snapshot,
        n=questions.height,
        answerable=answerable,
        unanswerable=questions.height - answerable,
        chunks=chunks.height,
        configs=CONFIGS,
        references=int(questions["reference"].is_not_null().sum()),
        generator=cfg.generate.generator,
        verifier=cfg.verify.verifier,
        source=cfg.corpus.dump if cfg.corpus.source == "dump" else cfg.corpus.api_url,
        question_fields=QUESTION_FIELDS,
        chunk_fields=CHUNK_FIELDS,
        seed=cfg.seed,
    )


def _write_parquet(frame: pl.DataFrame, target: Path) -> Path:
    with paths.atomic_path(target) as tmp:
        frame.write_parquet(tmp, compression="zstd", statistics=False)
    return target


def write(cfg: RunConfig, target: Path | None = None, *, published: date | None = None) -> Release:
    """Write the dataset folder of a run (replacing an earlier one); return what it holds.

    Raises:
        FileNotFoundError: a stage file it needs is missing (names it and the command that makes it).
    """
    folder = target or cfg.run_dir() / RELEASE_DIR
    questions, chunks = questions_frame(cfg), chunks_frame(cfg)
    shutil.rmtree(folder, ignore_errors=True)
    files = {}
    for (name, split, sub), frame in zip(CONFIGS, (questions, chunks), strict=True):
        files[name] = _write_parquet(frame, folder / sub / f"{split}-00000-of-00001.parquet")
    paths.write_text_atomic(folder / "README.md", card(cfg, questions, chunks))
    licence, _ = _licence(cfg)
    document = croissant.describe(
        cfg,
        folder,
        files,
        {"questions": QUESTION_FIELDS, "c_pre": CHUNK_FIELDS},
        {"questions": questions.schema, "c_pre": chunks.schema},
        licence=licence,
        published=published or date.today(),
        counts={
            "questions": questions.height,
            "answerable": int(questions["answerable"].sum()),
            "chunks": chunks.height,
        },
    )
    croissant.write(document, folder / croissant.FILE_NAME)
    return Release(folder, questions.height, int(questions["answerable"].sum()), chunks.height)


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.construction.dataset PARAMS``: write the run's dataset folder."""
    if len(argv) != 1:
        print("usage: python -m declinecraft.construction.dataset params/<run>.yaml", file=sys.stderr)
        return 2
    try:
        done = write(load(argv[0]))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f">> {done.folder}: {done.questions} questions ({done.answerable} answerable), {done.chunks} C_pre chunks")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
