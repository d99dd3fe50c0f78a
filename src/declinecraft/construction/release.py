"""Released benchmarks: one JSON Lines file per benchmark, read, checked against a corpus, written.

A release file holds one question per line, optionally after a first line
``{"_meta": {...}}`` that names the corpus run it was built on (:func:`release_meta`). Two
schemas are read; the first question line decides which one the whole file uses:

- **full**: the columns stage 04 writes (``04_verify/benchmark.jsonl``, :data:`verify.BENCHMARK_COLUMNS`),
  with ``target_chunk_id`` and ``scenario_chunk_ids``;
- **minimal**: ``id``, ``answerable``, ``scenario``, ``question`` (the asked question, without
  the scenario), ``fact`` and ``target_page``; ``target_chunk_id``, ``scenario_chunk_ids`` and
  ``target_url`` may be given. The target chunk, when not given, is the target page's chunk
  that shares the most words with the fact (:func:`match_chunk`).

Types, unknown fields and field lengths (:data:`MAX_CHARS`) are checked by JSON Schema
(``jsonschema``); empty texts, duplicate ids and targets outside the corpus by :func:`check_rows`;
the size of each question against the smallest context window of the run's models by
:func:`check_prompt_size`. Every error names the file and the line; each check can add its errors
to one list (``errors=``), so an import reports all of them in one pass.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
import polars as pl

from declinecraft.construction.verify import BENCHMARK_COLUMNS
from declinecraft.core import paths
from declinecraft.core.artifacts import read_benchmark, read_chunks, read_pages
from declinecraft.core.config import RunConfig, fingerprint

FORMAT = "declinecraft-benchmark"
VERSION = 1
Schema = Literal["full", "minimal"]
#: Errors listed in one message at most (the count of the rest is given).
MAX_ERRORS = 20
#: Longest text per field, in characters (the paper's scenarios and questions are under 30 words
#: each; model outputs kept in ``*_raw`` fields are the longest); any other text field: ``MAX_TEXT``.
MAX_CHARS = {
    "id": 200,
    "scenario": 2000,
    "question": 4000,
    "asked_question": 2000,
    "fact": 2000,
    "target_page": 300,
    "target_title": 300,
    "target_chunk_id": 400,
    "target_url": 2000,
}
MAX_TEXT = 20000
#: Most chunk ids in a list field.
MAX_IDS = 100
#: Characters per token assumed when sizing a question against a context window (English text
#: runs at about 4; 3 errs towards refusing).
CHARS_PER_TOKEN = 3
#: Share of the smallest context window one question's own text may take; the rest is left for
#: the prompt template, the retrieved chunks and the answer.
PROMPT_SHARE = 0.25

_TEXT = {"type": "string"}
_IDS = {"type": "array", "items": {"type": "string"}}
_OPTIONAL_TEXT = {"type": ["string", "null"]}
_FULL = {
    "id": _TEXT,
    "answerable": {"type": "boolean"},
    "scenario": _TEXT,
    "asked_question": _TEXT,
    "question": _TEXT,
    "fact": _TEXT,
    "target_chunk_id": _TEXT,
    "target_title": _TEXT,
    "target_url": _OPTIONAL_TEXT,
    "scenario_chunk_ids": _IDS,
    "comparison_chunk_ids": {"type": ["array", "null"], "items": {"type": "string"}},
    "generator": _OPTIONAL_TEXT,
    "verifier": _OPTIONAL_TEXT,
    "replacement": {"type": ["boolean", "null"]},
    **{c: _OPTIONAL_TEXT for c in BENCHMARK_COLUMNS if c.endswith(("_key", "_raw"))},
}
_MINIMAL = {
    "id": _TEXT,
    "answerable": {"type": "boolean"},
    "scenario": _TEXT,
    "question": _TEXT,
    "fact": _TEXT,
    "target_page": _TEXT,
    "target_chunk_id": _TEXT,
    "scenario_chunk_ids": _IDS,
    "target_url": _OPTIONAL_TEXT,
}
#: JSON Schema of one question line, per schema (unknown fields are errors).
SCHEMAS: dict[str, dict[str, Any]] = {
    "full": {
        "type": "object",
        "properties": _FULL,
        "additionalProperties": False,
        "required": [
            "id",
            "answerable",
            "scenario",
            "asked_question",
            "question",
            "fact",
            "target_chunk_id",
            "target_title",
            "scenario_chunk_ids",
        ],
    },
    "minimal": {
        "type": "object",
        "properties": _MINIMAL,
        "additionalProperties": False,
        "required": ["id", "answerable", "scenario", "question", "fact", "target_page"],
    },
}
#: Fields that must hold more than white space, per schema.
NONEMPTY = {
    "full": ("id", "asked_question", "question", "fact", "target_chunk_id", "target_title"),
    "minimal": ("id", "question", "fact", "target_page"),
}


def _limited(properties: dict[str, Any]) -> dict[str, Any]:
    """The properties with a ``maxLength`` on every text and a ``maxItems`` on every list."""
    out = {}
    for name, spec in properties.items():
        spec = dict(spec)
        if "string" in (spec["type"] if isinstance(spec["type"], list) else [spec["type"]]):
            spec["maxLength"] = MAX_CHARS.get(name, MAX_TEXT)
        if "items" in spec:
            spec["maxItems"] = MAX_IDS
            spec["items"] = {**spec["items"], "maxLength": MAX_CHARS["target_chunk_id"]}
        out[name] = spec
    return out


for _schema in SCHEMAS.values():
    _schema["properties"] = _limited(_schema["properties"])


class ReleaseError(ValueError):
    """A release file is invalid; the message names the file and each failing line."""


@dataclass(frozen=True)
class Release:
    """A release file as read: its metadata, its schema and its question lines."""

    path: Path
    meta: dict[str, Any]
    """The ``_meta`` record ({} when the file has none)."""
    schema: Schema
    rows: tuple[tuple[int, dict[str, Any]], ...] = field(repr=False)
    """(line number, record) per question, in file order."""
    invalid: frozenset[int] = frozenset()
    """Lines whose record failed the schema (already reported; later checks skip them)."""


@dataclass(frozen=True)
class Corpus:
    """What a release is checked against: the chunks and page titles of one corpus run."""

    chunks: pl.DataFrame
    """chunk_id, title, text, url, corpus ("pre" / "post")."""
    pages: Mapping[bool, frozenset[str]]
    """Page titles: {True: C_pre, False: C_post} (keyed by answerability)."""


def read_release(path: str | Path, *, errors: list[str] | None = None) -> Release:
    """Read a release file: the optional ``_meta`` line, then question records checked by JSON Schema.

    Args:
        errors: where to add the errors of the lines instead of raising them (an unreadable file
            still raises).

    Raises:
        ReleaseError: unreadable file, invalid JSON, a misplaced ``_meta`` line, no question, a
            wrong type, a missing or unknown field, a text too long — each naming ``<file>:<line>``.
    """
    found: list[str] = []
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path}: cannot read the benchmark file: {exc}") from exc
    meta: dict[str, Any] = {}
    rows: list[tuple[int, dict[str, Any]]] = []
    invalid: set[int] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            found.append(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            found.append(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        elif "_meta" in record:
            if rows or meta or len(record) != 1 or not isinstance(record["_meta"], dict):
                found.append(f'{path}:{number}: a {{"_meta": {{...}}}} record may only be the first line, alone')
            else:
                meta = record["_meta"]
        else:
            rows.append((number, record))
    if not rows and not found:
        found.append(f"{path}: no question in the file")
    schema: Schema = "full" if rows and "asked_question" in rows[0][1] else "minimal"
    validator = jsonschema.Draft202012Validator(SCHEMAS[schema])
    for number, record in rows:
        for error in sorted(validator.iter_errors(record), key=lambda e: list(map(str, e.absolute_path))):
            where = ".".join(map(str, error.absolute_path))
            message = error.message
            if error.validator in ("maxLength", "maxItems"):  # never echo a 5 MB value
                size = f"{len(error.instance):,} {'characters' if error.validator == 'maxLength' else 'items'}"
                message = f"{size}, more than the {error.validator_value:,} allowed"
            found.append(f"{path}:{number}: {where + ': ' if where else ''}{message} ({schema} schema)")
            invalid.add(number)
    _report(found, errors)
    return Release(path=path, meta=meta, schema=schema, rows=tuple(rows), invalid=frozenset(invalid))


def corpus_of(cfg: RunConfig) -> Corpus:
    """The chunks and page titles of ``cfg``'s corpus stage (read through :mod:`~declinecraft.core.artifacts`)."""
    pages = read_pages(cfg)
    chunks = read_chunks(cfg).select("chunk_id", "title", "text", "url", "corpus")
    return Corpus(chunks=chunks, pages={half: frozenset(titles) for half, titles in pages.items()})


def check_meta(release: Release, cfg: RunConfig, *, errors: list[str] | None = None) -> None:
    """Check that a release's metadata describes ``cfg``'s corpus (same corpus settings).

    Raises:
        ReleaseError: another format or version, or a corpus fingerprint or cut-off that differs.
    """
    meta, path = release.meta, release.path
    if not meta:
        return
    found: list[str] = []
    if meta.get("format", FORMAT) != FORMAT or str(meta.get("version", VERSION)) not in map(str, range(VERSION + 1)):
        found.append(
            f"{path}:1: _meta: format {meta.get('format')!r} version {meta.get('version')!r} "
            f"is not {FORMAT!r} version <= {VERSION}"
        )
    mine = {"corpus_fingerprint": fingerprint(cfg.block_dict("corpus")), "cutoff": cfg.corpus.cutoff}
    for key, value in mine.items():
        if key in meta and str(meta[key]) != str(value):
            found.append(
                f"{path}:1: _meta.{key} is {meta[key]!r} but corpus run {cfg.run!r} has {value!r}: "
                "the file was built on another corpus (name the right one with CORPUS=)"
            )
    _report(found, errors)


def check_rows(release: Release, corpus: Corpus, *, errors: list[str] | None = None) -> None:
    """Check every question against the rules and the corpus.

    Texts must hold more than white space; ids must be unique; an answerable question's target
    page must be a C_pre page and an unanswerable one's a C_post page; a given target chunk must
    be a chunk of that page, and scenario chunks must be C_pre chunks.

    Lines that failed the schema are checked for a repeated id only (their other errors are
    already reported).

    Raises:
        ReleaseError: listing each failing ``<file>:<line>`` and field (unless ``errors`` is given:
            then they are added to it).
    """
    path, schema = release.path, release.schema
    titles = dict(zip(corpus.chunks["chunk_id"], corpus.chunks["title"], strict=True))
    halves = dict(zip(corpus.chunks["chunk_id"], corpus.chunks["corpus"], strict=True))
    first_line: dict[str, int] = {}
    found: list[str] = []
    for number, r in release.rows:
        at = f"{path}:{number}"
        if isinstance(r.get("id"), str):
            qid = r["id"]
            if qid in first_line:
                found.append(f"{at}: id {qid!r} repeats line {first_line[qid]}")
            first_line.setdefault(qid, number)
        if number in release.invalid:
            continue
        found += [f"{at}: {name}: empty" for name in NONEMPTY[schema] if not str(r.get(name, "")).strip()]
        page = r["target_title"] if schema == "full" else r["target_page"]
        answerable = bool(r["answerable"])
        half, other = ("C_pre", "C_post") if answerable else ("C_post", "C_pre")
        if page not in corpus.pages[answerable]:
            kind = "answerable" if answerable else "unanswerable"
            if page in corpus.pages[not answerable]:
                found.append(
                    f"{at}: target page {page!r} is a {other} page, but the question is {kind} "
                    f"(its page must be in {half})"
                )
            else:
                near = difflib.get_close_matches(page, sorted(corpus.pages[answerable]), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                found.append(f"{at}: target page {page!r} is not a {half} page of the corpus{hint}")
            continue
        target = r.get("target_chunk_id")
        if target and (titles.get(target) != page or halves.get(target) != ("pre" if answerable else "post")):
            found.append(f"{at}: target_chunk_id {target!r} is not a chunk of {half} page {page!r}")
        unknown = [c for c in r.get("scenario_chunk_ids") or [] if halves.get(c) != "pre"]
        if unknown:
            found.append(f"{at}: scenario_chunk_ids: {unknown[0]!r} is not a C_pre chunk")
    _report(found, errors)


def check_prompt_size(
    release: Release, context_tokens: int, *, models: str = "", errors: list[str] | None = None
) -> None:
    """Check that each question's own text (scenario and question) takes at most
    :data:`PROMPT_SHARE` of ``context_tokens``, counting :data:`CHARS_PER_TOKEN` characters a token.

    Args:
        context_tokens: the smallest context window of the run's models, in tokens.
        models: the models that window belongs to, for the message.

    Raises:
        ReleaseError: naming each question too long (unless ``errors`` is given).
    """
    limit = int(context_tokens * PROMPT_SHARE)
    found = []
    for number, r in release.rows:
        if number in release.invalid:
            continue
        text = r["question"] if release.schema == "full" else f"{r['scenario']} {r['question']}"
        tokens = math.ceil(len(text) / CHARS_PER_TOKEN)
        if tokens > limit:
            found.append(
                f"{release.path}:{number}: scenario and question take about {tokens:,} tokens, more than "
                f"{PROMPT_SHARE:.0%} of the {context_tokens:,}-token context window of {models or 'the run'} "
                f"({limit:,}; the rest is for the retrieved chunks and the answer)"
            )
    _report(found, errors)


def match_chunk(fact: str, candidates: pl.DataFrame) -> str:
    """The id of the chunk among ``candidates`` (chunk_id, text; one page) that shares the most
    words with ``fact`` (the first on a tie), so a minimal release still names a target chunk."""
    words = set(re.findall(r"\w+", fact.lower()))
    scores = [len(words & set(re.findall(r"\w+", text.lower()))) for text in candidates["text"]]
    return str(candidates["chunk_id"][scores.index(max(scores))])


def to_benchmark(release: Release, corpus: Corpus) -> pl.DataFrame:
    """The release as a benchmark frame with every column of :data:`verify.BENCHMARK_COLUMNS`
    (columns a minimal release lacks are derived or null), answerable questions first."""
    if release.schema == "full":
        frame = pl.DataFrame([r for _, r in release.rows], infer_schema_length=None)
    else:
        pages = corpus.chunks.with_columns(answerable=pl.col("corpus") == "pre")
        out = []
        for _, r in release.rows:
            page = pages.filter(pl.col("title") == r["target_page"], pl.col("answerable") == r["answerable"])
            target = r.get("target_chunk_id") or match_chunk(r["fact"], page)
            url = r.get("target_url") or page.filter(pl.col("chunk_id") == target)["url"][0]
            scenario, asked = r["scenario"].strip(), r["question"].strip()
            out.append(
                {
                    "id": r["id"],
                    "answerable": r["answerable"],
                    "scenario": scenario,
                    "asked_question": asked,
                    "question": f"{scenario} {asked}".strip(),
                    "fact": r["fact"],
                    "target_chunk_id": target,
                    "target_title": r["target_page"],
                    "target_url": url,
                    "scenario_chunk_ids": list(r.get("scenario_chunk_ids") or []),
                }
            )
        frame = pl.DataFrame(out, schema_overrides={"scenario_chunk_ids": pl.List(pl.String)})
    lists = {"scenario_chunk_ids", "comparison_chunk_ids"}
    missing = [
        pl.lit(None, dtype=pl.List(pl.String) if c in lists else pl.Boolean if c == "replacement" else pl.String).alias(
            c
        )
        for c in BENCHMARK_COLUMNS
        if c not in frame.columns
    ]
    frame = frame.with_columns(missing).select(BENCHMARK_COLUMNS)
    frame = frame.with_columns(pl.col(c).cast(pl.List(pl.String)) for c in lists)
    return frame.with_row_index("_line").sort(pl.col("answerable").not_(), "_line").drop("_line")


def release_meta(cfg: RunConfig, bench: pl.DataFrame) -> dict[str, Any]:
    """The ``_meta`` record of a run's release: the corpus run and settings it needs, and counts."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_from": cfg.run,
        "corpus": cfg.owner("corpus"),
        "corpus_fingerprint": fingerprint(cfg.block_dict("corpus")),
        "cutoff": cfg.corpus.cutoff,
        "embedder": cfg.index.embedder,
        "n_answerable": int(bench["answerable"].sum()),
        "n_unanswerable": int((~bench["answerable"]).sum()),
    }


def write_release(target: str | Path, bench: pl.DataFrame, meta: Mapping[str, Any] | None = None) -> Path:
    """Write ``bench`` as a release file (the ``_meta`` line first when given), atomically."""
    body = bench.write_ndjson()
    head = json.dumps({"_meta": dict(meta)}, sort_keys=True) + "\n" if meta else ""
    return paths.write_text_atomic(target, head + body)


def export_benchmark(cfg: RunConfig, target: str | Path) -> Path:
    """Write ``cfg``'s benchmark (``04_verify/benchmark.parquet``) as a release file with its ``_meta`` line."""
    bench = read_benchmark(cfg, BENCHMARK_COLUMNS)
    return write_release(target, bench, release_meta(cfg, bench))


def _report(found: list[str], errors: list[str] | None) -> None:
    """Add ``found`` to ``errors`` when collecting, else raise them."""
    if errors is None:
        raise_errors(found)
    else:
        errors.extend(found)


def raise_errors(errors: Sequence[str]) -> None:
    """Raise one :class:`ReleaseError` listing ``errors`` (the first :data:`MAX_ERRORS`), if any."""
    if errors:
        more = f"\n... and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        raise ReleaseError("invalid benchmark file:\n" + "\n".join(errors[:MAX_ERRORS]) + more)
