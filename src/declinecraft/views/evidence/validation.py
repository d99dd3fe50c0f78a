"""ESB's human-validation sample (§7.7): 40 responses per evidence level, as an annotation sheet.

ESB's authors reviewed 200 stratified samples, 40 per level, checking that each evidence item is
valid for its level and that the automatic response class is right (its Table 6). We draw the
same: per level L1-L5 (and T, ours) up to ``per_level`` classified responses, seeded, and write
them with the context the model read and two empty columns for the annotator, like the sheet of
App. I (``analysis.annotation``):

- ``level_valid``: yes / no, whether the context is what its level says (:data:`LEVEL_MEANINGS`);
- ``human_class``: ANSWER / ABSTAIN / INVALID, ESB's class of the response.

The stage writes the sample as ``validation_sample.csv`` (every column, our class included) and
as ``validation_sample.html`` (:func:`sample_html`: a self-contained form for annotators, blind to
the model and our class, whose labels download as ``<annotator>.csv`` with columns ``item_id``,
``level_valid``, ``human_class``). Annotators' files go to ``data/evidence_annotations/<run>/``
(:func:`labels_dir`); :func:`read_labels` reads them back and :func:`annotator_agreement` gives
ESB's Table 6: per level, the share of evidence judged valid and the agreement of ``human_class``
with ``esb_judge``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import polars as pl

from declinecraft.core import annotation_form, paths
from declinecraft.core.agreement import cohen_kappa
from declinecraft.core.config import RunConfig
from declinecraft.evaluation.rule_labels import ESB_LABELS
from declinecraft.views.evidence.calibration import LEVELS

#: ESB §7.7: 40 per level.
PER_LEVEL = 40
COLUMNS = (
    "item_id",
    "level",
    "order",
    "model",
    "prompt",
    "question_id",
    "query",
    "context",
    "response",
    "esb_judge",
    "l5_type",
    "level_valid",
    "human_class",
)
#: The annotator's questions: column -> the answers the form offers (ESB §5.2's classes).
QUESTIONS: dict[str, tuple[str, ...]] = {"level_valid": ("yes", "no"), "human_class": ESB_LABELS}
#: What the context of each level must be for ``level_valid`` (ESB Table 1, our construction).
LEVEL_MEANINGS = {
    "L1": "full support: the question's target passage alone; it states the answer.",
    "L2": "partial support: the target passage with the sentences stating the answer cut, among "
    "retrieved passages; none states the answer.",
    "L3": "irrelevant evidence: passages from pages unrelated to the question; none states the answer.",
    "L4": "no context: the model was given no passage.",
    "L5": "conflicting evidence: the target passage and a copy with its key value altered, so the "
    "two disagree on the answer.",
    "T": "(ours) a question about something added after the wiki's cut-off, with the passages the "
    "retriever found: on topic, but none can state the answer.",
}


def validation_sample(
    judged: pl.DataFrame, instances: pl.DataFrame, *, per_level: int = PER_LEVEL, seed: int = 0
) -> pl.DataFrame:
    """Up to ``per_level`` classified responses of each level (seeded, without replacement), with
    their contexts and the annotator's empty columns (:data:`COLUMNS`), levels in order."""
    schema = {c: pl.String for c in COLUMNS}
    ok = judged.filter(pl.col("esb_judge").is_not_null())
    if ok.is_empty():
        return pl.DataFrame(schema=schema)
    ok = ok.join(instances.select("instance_id", "context"), on="instance_id", how="left")
    rng = np.random.default_rng(seed)
    parts = []
    for level in LEVELS:
        at = ok.filter(pl.col("level") == level).sort("response_id")
        if at.height:
            picked = np.sort(rng.permutation(at.height)[:per_level])
            parts.append(at[picked.tolist()])
    if not parts:
        return pl.DataFrame(schema=schema)
    sample = pl.concat(parts, how="diagonal_relaxed")
    return sample.select(
        pl.col("response_id").alias("item_id"),
        "level",
        "order",
        "model",
        "prompt",
        "question_id",
        "query",
        pl.col("context").fill_null(""),
        "response",
        "esb_judge",
        pl.col("l5_type").cast(pl.String),
        level_valid=pl.lit("", pl.String),
        human_class=pl.lit("", pl.String),
    ).cast(schema)


def labels_dir(cfg: RunConfig) -> Path:
    """``data/evidence_annotations/<run>/``: where annotators' label files of this run's sheet go."""
    return cfg.root / paths.EVIDENCE_ANNOTATIONS / cfg.run


def sample_html(sheet: pl.DataFrame, run: str, *, per_level: int = PER_LEVEL) -> str:
    """A self-contained form of the sheet for annotators, like App. I's (:mod:`declinecraft.core.annotation_form`):
    one card per response (level, question, evidence, response; no model, prompt or class of ours),
    the two questions as radio buttons, and a button that downloads the labels as CSV (``item_id``,
    ``level_valid``, ``human_class``: :func:`read_labels` reads it)."""
    esc = html.escape
    meanings = "".join(f"<dt>{level}</dt><dd>{esc(text)}</dd>" for level, text in LEVEL_MEANINGS.items())
    cards = []
    for row in sheet.iter_rows(named=True):
        item, level = esc(row["item_id"]), esc(row["level"])
        order = f" ({esc(row['order'].replace('_', ' '))})" if row["order"] else ""
        groups = "".join(
            annotation_form.radios(row["item_id"], column, choices, column.replace("_", " "))
            for column, choices in QUESTIONS.items()
        )
        cards.append(
            f'<section class="item" data-item="{item}" data-level="{level}"><h3>{item}</h3>'
            f'<p class="level">{level}{order}: {esc(LEVEL_MEANINGS.get(row["level"], ""))}</p>'
            f"<p><b>Question.</b> {esc(row['query'] or '')}</p>"
            f"<p><b>Evidence.</b></p><pre>{esc(row['context'] or '(no passage)')}</pre>"
            f"<p><b>Response.</b></p><pre>{esc(row['response'] or '(empty)')}</pre>{groups}</section>"
        )
    folder = esc(f"{paths.EVIDENCE_ANNOTATIONS}/{run}/")
    intro = f"""<p>Each card is one response of a model to a question and the evidence it was given, at one of the
evidence levels below ({len(cards)} responses, up to {per_level} a level). For each, answer two
questions: is the evidence what its level says it is (<b>level valid</b>: yes or no), and which class
is the response (<b>human class</b>: ANSWER, a concrete answer; ABSTAIN, it says the evidence is
insufficient or it does not know; INVALID, empty or malformed). When done, enter your name and
download your labels; put the file into <code>{folder}</code>.</p>
<dl>{meanings}</dl>"""
    return annotation_form.page(
        title=f"DeclineCraft evidence validation ({run})",
        heading="DeclineCraft: evidence-level validation",
        intro=intro,
        cards=cards,
        columns=["item_id", *QUESTIONS],
    )


def read_labels(folder: Path) -> dict[str, pl.DataFrame]:
    """Every annotator's CSV in ``folder`` (name: file stem), with ``item_id`` and the two answer
    columns as strings ('' unanswered); empty when there are none.

    Raises:
        ValueError: a file lacks a column, labels an item twice, or gives an answer the form does
            not offer (names the file, the item and the answer).
    """
    found = {}
    for path in sorted(Path(folder).glob("*.csv")) if Path(folder).is_dir() else []:
        frame = pl.read_csv(path, infer_schema_length=0)
        missing = [c for c in ("item_id", *QUESTIONS) if c not in frame.columns]
        if missing:
            raise ValueError(
                f"{path}: annotator file needs the columns item_id, level_valid, human_class; lacks {missing}"
            )
        frame = frame.select("item_id", *(pl.col(c).fill_null("").str.strip_chars() for c in QUESTIONS))
        twice = frame.filter(pl.col("item_id").is_duplicated())["item_id"]
        if twice.len():
            raise ValueError(f"{path}: item {twice[0]} is labelled twice")
        for column, choices in QUESTIONS.items():
            bad = frame.filter(~pl.col(column).is_in(["", *choices]))
            if bad.height:
                item, value = bad.row(0)[0], bad[column][0]
                raise ValueError(f"{path}: item {item} has {column} {value!r}; the form offers {', '.join(choices)}")
        found[path.stem] = frame
    return found


#: ESB Table 6's columns: per annotator and level.
AGREEMENT_SCHEMA = {
    "annotator": pl.String,
    "level": pl.String,
    "n_checked": pl.Int64,
    "valid": pl.Float64,
    "n_classified": pl.Int64,
    "agreement": pl.Float64,
    "kappa": pl.Float64,
}


def annotator_agreement(sheet: pl.DataFrame, labels: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """ESB's Table 6 from annotators' labels of the sheet: per annotator, per level and over all
    levels (``all``), how many items had their evidence checked and the share judged valid, how
    many were classified and the share whose class equals ``esb_judge``, with Cohen's kappa
    (unanswered items are left out; items not on the sheet are ignored)."""
    rows = []
    for name in sorted(labels):
        joined = sheet.select("item_id", "level", "esb_judge").join(labels[name], on="item_id", how="inner")
        for level in ["all", *(lv for lv in LEVELS if lv in set(joined["level"]))]:
            part = joined if level == "all" else joined.filter(pl.col("level") == level)
            checked = part.filter(pl.col("level_valid") != "")["level_valid"].to_list()
            classed = part.filter(pl.col("human_class") != "")
            human, ours = classed["human_class"].to_list(), classed["esb_judge"].to_list()
            rows.append(
                {
                    "annotator": name,
                    "level": level,
                    "n_checked": len(checked),
                    "valid": checked.count("yes") / len(checked) if checked else math.nan,
                    "n_classified": len(human),
                    "agreement": sum(a == b for a, b in zip(human, ours, strict=True)) / len(human)
                    if human
                    else math.nan,
                    "kappa": cohen_kappa(human, ours, labels=list(ESB_LABELS)) if human else math.nan,
                }
            )
    return pl.DataFrame(rows, schema=AGREEMENT_SCHEMA)
