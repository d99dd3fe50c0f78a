"""Table 1: two benchmark questions and real responses to the unanswerable one.

The paper's Table 1 shows an answerable question with its reference answer and an unanswerable
question with three responses: an abstention, a premise denial and a confabulation (an answer).
:func:`example_rows` picks them from the run by a fixed rule, so the table shows this run's own
responses and says which label the run lacks instead of borrowing one:

1. Unanswerable question: among the unanswerable questions of the main grid, those whose
   labelled responses carry the most of the three labels; among them one drawn with the run's
   seed (a permutation of the sorted question ids).
2. For each label, the first response with it in the order single-shot RAG, no RAG, iterative
   RAG, then model id and thinking setting (the paper's examples are mostly single-shot).
3. Answerable question: one drawn with the same seed among those with a reference answer.

A label the chosen question has no response for gets a row saying so and how many responses to
any unanswerable question carry it in the run.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from declinecraft.core.stats import LABELS

#: The row name of each label's example, in the paper's order.
LABEL_ROWS = {"ABSTAIN": "Abstention", "DENY": "Premise denial", "ANSWER": "Confabulation"}
#: Condition order in which a label's example response is looked for.
CONDITION_ORDER = ("single", "no_rag", "iterative")
CONDITION_NAMES = {"single": "single-shot RAG", "no_rag": "no retrieval", "iterative": "iterative RAG"}
SCHEMA = {"part": pl.String, "source": pl.String, "text": pl.String, "question_id": pl.String}


def clip(text: str | None, limit: int) -> str:
    """One line of at most ``limit`` characters (whitespace runs collapsed, cut at a word, "…")."""
    flat = re.sub(r"\s+", " ", text or "").strip()
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"


def _draw(ids: list[str], seed: int) -> str:
    """One of ``ids`` drawn with ``seed`` (the same id for the same set and seed)."""
    ordered = sorted(ids)
    return ordered[int(np.random.default_rng(seed).permutation(len(ordered))[0])]


def _who(row: dict, names: dict[str, str]) -> str:
    name = names.get(row["model"], row["model"])
    thinking = " (thinking)" if row.get("thinking") == "on" else ""
    return f"{name}{thinking}, {CONDITION_NAMES.get(row['condition'], row['condition'])}"


def example_rows(
    main: pl.DataFrame, facts: pl.DataFrame | None = None, *, seed: int = 0, limit: int = 400
) -> pl.DataFrame:
    """Table 1's rows (see the module docstring): ``part``, ``source``, ``text``, ``question_id``.

    ``main`` holds the main grid's judged rows with ``question`` and ``response`` text (and
    ``reference`` for the answerable example); without question text the table is empty.
    """
    if main.height == 0 or "question" not in main.columns or "response" not in main.columns:
        return pl.DataFrame(schema=SCHEMA)
    names = (
        dict(zip(facts["model"], facts["display_name"].fill_null(facts["model"]), strict=True))
        if facts is not None
        else {}
    )
    rows = []
    answerable = main.filter(pl.col("answerable"))
    if "reference" in main.columns:
        answerable = answerable.filter(pl.col("reference").is_not_null())
    if answerable.height:
        qid = _draw(answerable["question_id"].unique().to_list(), seed)
        first = answerable.filter(pl.col("question_id") == qid).row(0, named=True)
        rows.append(dict(part="Answerable", source="question", text=clip(first["question"], limit), question_id=qid))
        rows.append(dict(part="", source="reference answer", text=clip(first.get("reference"), limit), question_id=qid))
    labelled = main.filter(~pl.col("answerable") & pl.col("label").is_not_null() & ~pl.col("budget_exhausted"))
    if labelled.height == 0:
        return pl.DataFrame(rows, schema=SCHEMA)
    spread = labelled.group_by("question_id").agg(pl.col("label").n_unique().alias("n"))
    best = spread.filter(pl.col("n") == spread["n"].max())["question_id"].to_list()
    qid = _draw(best, seed)
    mine = labelled.filter(pl.col("question_id") == qid)
    rank = pl.col("condition").replace_strict(
        list(CONDITION_ORDER), list(range(len(CONDITION_ORDER))), default=len(CONDITION_ORDER)
    )
    mine = mine.with_columns(_rank=rank).sort("_rank", "model", "thinking")
    rows.append(dict(part="Unanswerable", source="question", text=clip(mine["question"][0], limit), question_id=qid))
    for label in LABELS:
        hit = mine.filter(pl.col("label") == label)
        if hit.height:
            row = hit.row(0, named=True)
            rows.append(
                dict(
                    part=LABEL_ROWS[label], source=_who(row, names), text=clip(row["response"], limit), question_id=qid
                )
            )
        else:
            total = int((labelled["label"] == label).sum())
            why = (
                f"missing: no response to this question is labelled {label}; the run gives that label to "
                f"{total} of its {labelled.height} labelled responses to unanswerable questions"
            )
            rows.append(dict(part=LABEL_ROWS[label], source="(missing)", text=why, question_id=qid))
    return pl.DataFrame(rows, schema=SCHEMA)
