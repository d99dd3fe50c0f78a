"""The human-validation files of App. I: the shared sample out, the annotators' labels back in.

``write_sample`` draws the balanced 70 + 30 items (:func:`judges.annotation_sample`) and
writes ``outputs/<run>/07_analysis/annotation_sample.csv`` (every column, judge labels included:
for us) and ``annotation_sample.html`` (for annotators: question, answer and reference only, with a
form that downloads their labels as CSV). Annotators' files go to ``data/annotations/<run>/`` as
``<annotator>.csv`` with columns ``item_id``, ``label`` (ABSTAIN / DENY / ANSWER, Part 1) and
``score`` (0 / 0.5 / 1, Part 2); ``read_annotations`` reads them for Table 10.
"""

from __future__ import annotations

import html
from pathlib import Path

import polars as pl

from declinecraft.analysis import analyze, judges, results
from declinecraft.core import annotation_form, catalogue, paths
from declinecraft.core.config import RunConfig
from declinecraft.core.stage_writer import StageWriter

#: Candidate column names of the texts in the upstream stages' tables, first match wins.
TEXT_COLUMNS = {
    "question": ("question", "question_text", "full_question"),
    "response": ("response", "answer", "answer_text", "response_text", "text"),
    "reference": ("reference", "reference_answer", "ground_truth"),
}


def _pick(frame: pl.DataFrame, kind: str) -> str | None:
    return next((c for c in TEXT_COLUMNS[kind] if c in frame.columns), None)


def _texts(cfg: RunConfig, judged: pl.DataFrame) -> pl.DataFrame | None:
    """Question, response and reference texts: from the judged table itself where it carries
    them, else from stages 04–06, where they exist."""
    found: dict[str, pl.DataFrame] = {}
    keys = [k for k in judges.ANSWER_KEYS if k in judged.columns]
    if col := _pick(judged, "response"):
        found["response"] = judged.select(*keys, pl.col(col).cast(pl.String).alias("response"))
    if col := (_pick(judged, "question") or ("query" if "query" in judged.columns else None)):
        found["question"] = judged.select("question_id", pl.col(col).cast(pl.String).alias("question")).unique(
            "question_id", keep="first"
        )
    sources = {
        "response": catalogue.ANSWER_RESPONSES.path(cfg),
        "question": catalogue.VERIFY_BENCHMARK.path(cfg),
        "reference": catalogue.JUDGE_REFERENCES.path(cfg),
    }
    for kind, path in sources.items():
        if kind not in found and path.is_file():
            frame = pl.read_parquet(path)
            col = _pick(frame, kind)
            if col and "question_id" in frame.columns:
                keys = [k for k in judges.ANSWER_KEYS if k in frame.columns] if kind == "response" else ["question_id"]
                found[kind] = frame.select(*keys, pl.col(col).cast(pl.String).alias(kind)).unique(keys, keep="first")
    if not found:
        return None
    texts = None
    for frame in found.values():
        if texts is None:
            texts = frame
        else:
            on = [c for c in frame.columns if c in texts.columns and c not in TEXT_COLUMNS]
            texts = texts.join(frame, on=on, how="full", coalesce=True, nulls_equal=True) if on else texts
    return texts


def write_sample(cfg: RunConfig, judged: pl.DataFrame, folder: Path) -> pl.DataFrame:
    """Draw the shared annotation sample and write it as CSV and as the annotators' HTML page."""
    # The judged table is prepared like every analysis input, so the sample is of the main grid.
    design = analyze.design_from_config(cfg)
    frame = analyze.main_grid_rows(analyze.prepare(judged, design), design)
    sample = judges.annotation_sample(
        frame,
        part1=cfg.analysis.annotation_part1,
        part2=cfg.analysis.annotation_part2,
        seed=cfg.seed,
        texts=_texts(cfg, frame),
    )
    writer = StageWriter("analysis", folder, float_precision=results.FLOAT_PRECISION)
    writer.frame(catalogue.ANALYSIS_TABLE, sample, "annotation_sample")
    writer.text(catalogue.ANALYSIS_ANNOTATION_PAGE, sample_html(sample, cfg.run))
    return sample


def sample_html(sample: pl.DataFrame, run: str) -> str:
    """A self-contained page (:mod:`declinecraft.core.annotation_form`): one card per item (no
    model, no judge label) and a CSV download (``item_id``, ``label``, ``score``)."""
    cards = []
    for row in sample.iter_rows(named=True):
        item, part = html.escape(row["item_id"]), row["part"]
        text = lambda v: html.escape(v or "(text not available in this run)")  # noqa: E731
        ref = f"<p><b>Reference answer.</b> {text(row['reference'])}</p>" if part == 2 else ""
        question = ("label", ("ABSTAIN", "DENY", "ANSWER")) if part == 1 else ("score", ("0", "0.5", "1"))
        cards.append(
            f'<section class="item" data-item="{item}" data-part="{part}"><h3>{item}</h3>'
            f"<p><b>Question.</b> {text(row['question'])}</p><p><b>Response.</b> {text(row['response'])}</p>"
            f"{ref}{annotation_form.radios(row['item_id'], *question)}</section>"
        )
    intro = f"""<p>Part 1 (P1-…): label each response as ABSTAIN (says it does not know or the context lacks the
answer), DENY (states the asked-about thing does not exist) or ANSWER (answers, treating it as
real). Part 2 (P2-…): score each response against the reference answer: 1 correct, 0.5 partly
correct, 0 incorrect. When done, enter your name and download your labels; put the file into
<code>{paths.ANNOTATIONS}/{html.escape(run)}/</code>.</p>"""
    return annotation_form.page(
        title=f"DeclineCraft annotation ({run})",
        heading="DeclineCraft: shared annotation set",
        intro=intro,
        cards=cards,
        columns=["item_id", "label", "score"],
    )


def annotation_dir(cfg: RunConfig) -> Path:
    """``data/annotations/<run>/``: where annotators' CSV files for this run go."""
    return cfg.root / paths.ANNOTATIONS / cfg.run


def read_annotations(cfg: RunConfig) -> dict[str, pl.DataFrame]:
    """Every annotator's CSV in :func:`annotation_dir` (name: file stem); empty when none.

    Raises:
        ValueError: a file lacks ``item_id`` or has neither ``label`` nor ``score`` (names the file).
    """
    found = {}
    folder = annotation_dir(cfg)
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        frame = pl.read_csv(path, infer_schema_length=0)
        if "item_id" not in frame.columns or not {"label", "score"} & set(frame.columns):
            raise ValueError(f"{path}: annotator file needs item_id and label and/or score columns")
        if "score" in frame.columns:
            frame = frame.with_columns(
                pl.col("score").str.strip_chars().replace("", None).cast(pl.Float64, strict=False)
            )
        if "label" in frame.columns:
            frame = frame.with_columns(pl.col("label").str.strip_chars().replace("", None))
        found[path.stem] = frame
    return found
