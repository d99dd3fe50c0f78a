"""The explorer's static report page ``outputs/<run>/explorer/index.html`` (``make report``).

The report is one self-contained file (``templates/report.html.j2``): inline CSS and JavaScript, no
network. Its data is JSON in a ``<script type="application/json">`` element: per question a search
text, the label of every (configuration, setting), the settings and configurations where each
:data:`~declinecraft.explore.filters.FLAGS` filter holds, and the question's section as HTML
rendered by :func:`~declinecraft.explore.question.question_html` (the same view as ``show``). The page
reads ``location.hash`` on load (``#q=copper&transition=A-X&from=single&to=iterative``) and writes it
back as the controls change, so a filtered view is a link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import paths
from declinecraft.core.config import RunConfig
from declinecraft.explore import markup
from declinecraft.explore.filters import CODE_OF, FLAGS, SEARCH_FIELDS, score_columns, setting_order
from declinecraft.explore.frame import load, load_chunks
from declinecraft.explore.question import TRACE_CHARS, question_html, show


def _labels(frame: pl.DataFrame) -> dict[str, dict[str, dict[str, str]]]:
    """Label code per question, configuration (model|thinking) and setting."""
    code = pl.col("label").replace_strict(CODE_OF, default="-", return_dtype=pl.String)
    labels: dict[str, dict[str, dict[str, str]]] = {}
    rows = frame.select("question_id", pl.format("{}|{}", "model", "thinking"), "setting", code)
    for qid, config, setting, c in rows.iter_rows():
        labels.setdefault(qid, {}).setdefault(config, {})[setting] = c
    return labels


def _flags(frame: pl.DataFrame) -> dict[str, dict[str, list[list[str | None]]]]:
    """Per question and flag, the [setting, configuration] pairs where it holds (configuration
    None for filters of whole questions)."""
    flags: dict[str, dict[str, list[list[str | None]]]] = {}
    for name, (_, fn) in FLAGS.items():
        rows = fn(frame)
        per_row = "model" in rows.columns
        for r in rows.iter_rows(named=True):
            entry = [r["setting"], f"{r['model']}|{r['thinking']}" if per_row else None]
            flags.setdefault(r["question_id"], {}).setdefault(name, []).append(entry)
    return flags


def report_data(frame: pl.DataFrame, chunks: pl.DataFrame | None, *, run: str = "") -> dict[str, Any]:
    """The JSON the report embeds: run facts, settings, configurations, flags and one entry per question."""
    labels, flags = _labels(frame), _flags(frame)
    hay = pl.concat_str([pl.col(c).fill_null("") for c in SEARCH_FIELDS], separator="\n")
    text = dict(frame.group_by("question_id").agg(hay.str.join("\n").str.to_lowercase().alias("t")).iter_rows())
    lists = [frame.select(pl.col(c).explode().alias("id")) for c in ("retrieved_chunk_ids", "scenario_chunk_ids")]
    used = pl.concat([*lists, frame.select(pl.col("target_chunk_id").alias("id"))])["id"].drop_nulls().unique()
    # Sections carry chunk titles only; texts travel once, in the chunk table, filled in when opened.
    meta = pl.DataFrame(schema={"chunk_id": pl.String, "title": pl.String, "url": pl.String, "corpus": pl.String})
    texts: dict[str, str] = {}
    if chunks is not None:
        chunks = chunks.filter(pl.col("chunk_id").is_in(used.implode()))
        meta, texts = chunks.select(meta.columns), dict(chunks.select("chunk_id", "text").iter_rows())
    questions = []
    for qid in frame["question_id"].unique(maintain_order=True).to_list():
        view = show(qid, frame, chunks=meta)
        questions.append(
            {
                "id": qid,
                "answerable": bool(view.question.get("answerable")),
                "text": text[qid],
                "labels": labels.get(qid, {}),
                "flags": flags.get(qid, {}),
                "html": question_html(view, trace_chars=TRACE_CHARS),
            }
        )
    return {
        "run": run,
        "n_responses": frame.height,
        "settings": setting_order(frame["setting"].unique().to_list()),
        "models": sorted(frame["model"].unique().to_list()),
        "judges": [c.removeprefix("score_") for c in score_columns(frame)],
        "flags": {name: title for name, (title, _) in FLAGS.items()},
        "questions": questions,
        "chunks": texts,
    }


def report_html(frame: pl.DataFrame, chunks: pl.DataFrame | None, *, run: str = "") -> str:
    """The whole self-contained page."""
    title = f"DeclineCraft explorer · {run}" if run else "DeclineCraft explorer"
    return markup.render("report.html.j2", title=title, data=report_data(frame, chunks, run=run))


def write_report(cfg: RunConfig, *, out: Path | None = None) -> Path:
    """Write ``outputs/<run>/explorer/index.html`` (or ``out``) for a run and return its path."""
    frame = load(cfg)
    try:
        chunks = load_chunks(cfg)
    except FileNotFoundError:
        chunks = None
    target = out or cfg.run_dir() / "explorer" / "index.html"
    return paths.write_text_atomic(target, report_html(frame, chunks, run=cfg.run))
