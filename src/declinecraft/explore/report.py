"""The explorer's static report ``outputs/<run>/explorer/``: ``index.html`` and one file per question
(``make report``).

At the paper's size (1,000 questions x 40 configurations, a few MB of text per question) one page
holding every response would be gigabytes, past what a browser parses. So the first page
(``templates/report.html.j2``) holds only what lists and filters the questions: per question its id,
search text, question, target page, the label code of every (configuration, setting) as one string
and the [setting, configuration] cells where each :data:`~declinecraft.explore.filters.FLAGS` filter
holds; every filter runs over all questions and configurations in the browser. A question's
responses (its section from :func:`~declinecraft.explore.question.question_html`, the same view as
``show``, and the texts of the chunks it lists) are in ``questions/<id hash>.js``, loaded when the
question is opened. Shards are scripts (``dcShard(id, {...})``), not JSON fetched with ``fetch``:
Chromium refuses ``fetch`` of ``file://`` URLs, and the page must open from disk, with no server
and no network.

The search box looks in the question's own texts (:data:`PAGE_SEARCH_FIELDS`: id, scenario,
question, fact, target page, reference), not in the responses, which the first page does not
hold; ``explore.search`` in the notebook searches responses too.

The page reads ``location.hash`` on load (``#q=copper&transition=A-X&from=single&to=iterative``,
``&open=<question id>`` for each question shown with its responses) and writes it back as the
controls change, so a filtered view is a link.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import paths
from declinecraft.core.config import RunConfig
from declinecraft.explore import markup
from declinecraft.explore.filters import CODE_OF, FLAGS, score_columns, setting_order
from declinecraft.explore.frame import load, load_chunks
from declinecraft.explore.question import TRACE_CHARS, question_html, show

#: What the first page's search box looks in (the responses are in the question files only).
PAGE_SEARCH_FIELDS = ("question_id", "scenario_text", "asked_question", "fact", "target_title", "reference")
#: The folder of per-question files, beside the first page.
SHARDS = "questions"
#: The label code of a (configuration, setting) without a response.
NO_RESPONSE = "."


def shard_name(question_id: str) -> str:
    """The file of a question's responses under :data:`SHARDS`: named by a hash of its id (ids may
    hold any character; a page left open finds a question's file even after a rebuild)."""
    return hashlib.sha256(question_id.encode()).hexdigest()[:16] + ".js"


def _configs(frame: pl.DataFrame) -> list[str]:
    """Configurations (model|thinking), sorted by model then thinking."""
    pairs = frame.select("model", "thinking").unique().sort("model", "thinking").iter_rows()
    return [f"{m}|{t}" for m, t in pairs]


def _labels(frame: pl.DataFrame, configs: list[str], settings: list[str]) -> dict[str, str]:
    """Per question, one label code per (configuration, setting): ``labels[c * len(settings) + s]``."""
    code = pl.col("label").replace_strict(CODE_OF, default="-", return_dtype=pl.String)
    cell = {c: i for i, c in enumerate(configs)}
    where = {s: i for i, s in enumerate(settings)}
    width = len(configs) * len(settings)
    labels: dict[str, list[str]] = {}
    rows = frame.select("question_id", pl.format("{}|{}", "model", "thinking"), "setting", code)
    for qid, config, setting, c in rows.iter_rows():
        line = labels.setdefault(qid, [NO_RESPONSE] * width)
        line[cell[config] * len(settings) + where[setting]] = c
    return {qid: "".join(line) for qid, line in labels.items()}


def _flags(frame: pl.DataFrame, configs: list[str], settings: list[str]) -> dict[str, dict[str, list[list[int]]]]:
    """Per question and flag, the [setting, configuration] index pairs where it holds (configuration
    -1 for filters of whole questions)."""
    cell = {c: i for i, c in enumerate(configs)}
    where = {s: i for i, s in enumerate(settings)}
    flags: dict[str, dict[str, list[list[int]]]] = {}
    for name, (_, fn) in FLAGS.items():
        rows = fn(frame)
        per_row = "model" in rows.columns
        for r in rows.iter_rows(named=True):
            config = cell[f"{r['model']}|{r['thinking']}"] if per_row else -1
            flags.setdefault(r["question_id"], {}).setdefault(name, []).append([where[r["setting"]], config])
    return flags


def report_data(frame: pl.DataFrame, *, run: str = "") -> dict[str, Any]:
    """The first page's data: run facts, settings, configurations, flags and one small entry per
    question (no responses: those are in the question files, :func:`question_shards`)."""
    settings = setting_order(frame["setting"].unique().to_list())
    configs = _configs(frame)
    labels, flags = _labels(frame, configs, settings), _flags(frame, configs, settings)
    hay = pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in PAGE_SEARCH_FIELDS], separator="\n")
    heads = frame.unique("question_id", keep="first", maintain_order=True).select(
        "question_id", "answerable", "asked_question", "target_title", hay.str.to_lowercase().alias("text")
    )
    questions = [
        {
            "id": qid,
            "answerable": bool(answerable),
            "question": asked or "",
            "page": page or "",
            "text": text,
            "file": shard_name(qid),
            "labels": labels[qid],
            "flags": flags.get(qid, {}),
        }
        for qid, answerable, asked, page, text in heads.iter_rows()
    ]
    return {
        "run": run,
        "n_responses": frame.height,
        "settings": settings,
        "configs": configs,
        "models": sorted(frame["model"].unique().to_list()),
        "judges": [c.removeprefix("score_") for c in score_columns(frame)],
        "flags": {name: title for name, (title, _) in FLAGS.items()},
        "shards": SHARDS,
        "questions": questions,
    }


def _used_chunks(frame: pl.DataFrame, chunks: pl.DataFrame | None) -> pl.DataFrame | None:
    """The chunks any question lists (target, scenario, retrieved), with their texts."""
    if chunks is None:
        return None
    lists = [frame.select(pl.col(c).explode().alias("id")) for c in ("retrieved_chunk_ids", "scenario_chunk_ids")]
    used = pl.concat([*lists, frame.select(pl.col("target_chunk_id").alias("id"))])["id"].drop_nulls().unique()
    return chunks.filter(pl.col("chunk_id").is_in(used.implode()))


def question_shards(frame: pl.DataFrame, chunks: pl.DataFrame | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(question id, its file's data) per question: the question's section as HTML and the texts of
    the chunks it lists (filled in when a chunk is opened, so each travels once per question)."""
    used = _used_chunks(frame, chunks)
    meta = pl.DataFrame(schema={"chunk_id": pl.String, "title": pl.String, "url": pl.String, "corpus": pl.String})
    texts: dict[str, str] = {}
    if used is not None:
        meta, texts = used.select(meta.columns), dict(used.select("chunk_id", "text").iter_rows())
    for qid, rows in frame.group_by("question_id", maintain_order=True):
        question_id = str(qid[0])
        view = show(question_id, rows, chunks=meta)
        listed = sorted(c for c in view.chunks if c in texts)
        yield (
            question_id,
            {"html": question_html(view, trace_chars=TRACE_CHARS), "chunks": {c: texts[c] for c in listed}},
        )


def shard_script(question_id: str, data: dict[str, Any]) -> str:
    """A question file: one call of the page's ``dcShard`` with the question's data (ASCII JSON, so
    the file reads the same whatever encoding the browser assumes)."""
    return f"dcShard({json.dumps(question_id)},{json.dumps(data, separators=(',', ':'))});\n"


def report_html(frame: pl.DataFrame, *, run: str = "", simulated: bool = False) -> str:
    """The first page: question list, summary and filters, with the page's script inline; a
    ``simulated`` run's page is titled and bannered SIMULATED."""
    title = f"DeclineCraft explorer · {run}" if run else "DeclineCraft explorer"
    title = f"SIMULATED · {title}" if simulated else title
    return markup.render("report.html.j2", title=title, data=report_data(frame, run=run), simulated=simulated)


def write_explorer(
    frame: pl.DataFrame, chunks: pl.DataFrame | None, index: Path, *, run: str = "", simulated: bool = False
) -> Path:
    """Write the first page to ``index`` and every question's file under ``index.parent/questions/``
    (files of questions no longer in the run are removed); return ``index``.

    The question files are written first, so the page never lists a question whose file is missing.
    """
    folder = index.parent / SHARDS
    folder.mkdir(parents=True, exist_ok=True)
    written = set()
    for qid, data in question_shards(frame, chunks):
        name = shard_name(qid)
        paths.write_text_atomic(folder / name, shard_script(qid, data))
        written.add(name)
    page = paths.write_text_atomic(index, report_html(frame, run=run, simulated=simulated))
    for stale in folder.glob("*.js"):
        if stale.name not in written:
            stale.unlink()
    return page


def write_report(cfg: RunConfig, *, out: Path | None = None) -> Path:
    """Write ``outputs/<run>/explorer/index.html`` (or ``out``) and its ``questions/`` folder for a
    run; return the page's path."""
    frame = load(cfg)
    try:
        chunks = load_chunks(cfg)
    except FileNotFoundError:
        chunks = None
    index = out or cfg.run_dir() / "explorer" / "index.html"
    return write_explorer(frame, chunks, index, run=cfg.run, simulated=cfg.simulated)
