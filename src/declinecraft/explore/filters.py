"""Filters over the explorer's frame (:func:`declinecraft.explore.frame.load`): each answers one of
the paper's questions with a small frame of question ids and context.

Label transitions between settings (App. A.9's Sulfur Cube: abstained single-shot, answered
iterative), thinking off -> on (App. A.5), questions every model failed, the LLM judge against
``judge.rule_label``, disagreeing accuracy judges, exhausted budgets, and a text search.

Label codes (filters, the HTML page's ``#transition=A-X``): A = ABSTAIN, D = DENY, X = ANSWER,
``-`` = no label (exhausted budget or failed call); ``*`` or None = any.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from declinecraft.explore.frame import failed_expr

#: The retrieval conditions of the main grid, in display order.
CONDITIONS = ("no_rag", "single", "iterative")
#: The label of each code (``-``: no label).
LABEL_CODES: dict[str, str | None] = {"A": "ABSTAIN", "D": "DENY", "X": "ANSWER", "-": None}
#: The code of each label.
CODE_OF = {"ABSTAIN": "A", "DENY": "D", "ANSWER": "X"}
#: Context columns each filter's rows carry.
CONTEXT = ("answerable", "asked_question")
#: What :func:`search` (and the report's search box) looks in.
SEARCH_FIELDS = ("question_id", "scenario_text", "asked_question", "fact", "target_title", "reference", "response")


def _label(value: str | None) -> tuple[bool, str | None]:
    """(is a condition, label) from a code, a label name, '-' (no label), or None/'*' (any)."""
    if value is None or value == "*":
        return False, None
    if value in LABEL_CODES:
        return True, LABEL_CODES[value]
    if value.upper() in CODE_OF:
        return True, value.upper()
    raise ValueError(f"unknown label {value!r}: use ABSTAIN, DENY, ANSWER, a code A/D/X, '-' or '*'")


def _is(column: str, value: str | None) -> pl.Expr:
    active, label = _label(value)
    if not active:
        return pl.lit(True)
    return pl.col(column).is_null() if label is None else pl.col(column) == label


def _pairs(
    frame: pl.DataFrame,
    key: str,
    before: str,
    after: str,
    on: Sequence[str],
    from_label: str | None,
    to_label: str | None,
) -> pl.DataFrame:
    cols = ("label", "accuracy", "response")
    side = [
        frame.filter(pl.col(key) == v).select(*on, *CONTEXT, *[pl.col(c).alias(f"{c}_{n}") for c in cols])
        for v, n in ((before, "from"), (after, "to"))
    ]
    joined = side[0].join(side[1].drop(CONTEXT), on=list(on), how="inner")
    return joined.filter(_is("label_from", from_label), _is("label_to", to_label)).sort(*on)


def transitions(
    frame: pl.DataFrame,
    before: str = "single",
    after: str = "iterative",
    *,
    from_label: str | None = "ABSTAIN",
    to_label: str | None = "ANSWER",
) -> pl.DataFrame:
    """Responses whose label goes from ``from_label`` in setting ``before`` to ``to_label`` in
    ``after`` for the same question, model and thinking (default: the Sulfur Cube of App. A.9).

    Returns question_id, model, thinking, answerable, asked_question and label/accuracy/response
    ``_from`` and ``_to``.
    """
    return _pairs(frame, "setting", before, after, ("question_id", "model", "thinking"), from_label, to_label)


def thinking_changes(
    frame: pl.DataFrame, setting: str = "no_rag", *, from_label: str | None = "ABSTAIN", to_label: str | None = "DENY"
) -> pl.DataFrame:
    """Responses whose label goes from ``from_label`` with thinking off to ``to_label`` with it on,
    for the same question, model and setting (default: A -> D without retrieval, App. A.5)."""
    rows = frame.filter(pl.col("setting") == setting)
    return _pairs(rows, "thinking", "off", "on", ("question_id", "model", "setting"), from_label, to_label)


def all_failed(frame: pl.DataFrame, *, strict: bool = False, threshold: float = 0.5) -> pl.DataFrame:
    """Questions that every response with a known outcome failed, per setting (see ``failed_expr``).

    Returns question_id, setting, n_responses, answerable, asked_question.
    """
    scored = frame.with_columns(_failed=failed_expr(strict=strict, threshold=threshold)).drop_nulls("_failed")
    grouped = scored.group_by("question_id", "setting").agg(
        pl.col("_failed").all().alias("_all"), pl.len().alias("n_responses"), *[pl.col(c).first() for c in CONTEXT]
    )
    return _sorted(grouped.filter("_all").drop("_all"), ("question_id", "setting"))


def _sorted(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Sort by ``keys``, settings in display order (:func:`setting_order`)."""
    order = {s: i for i, s in enumerate(setting_order(frame["setting"].unique().to_list()))}
    rank = pl.col("setting").replace_strict(order, default=None, return_dtype=pl.Int64).alias("_order")
    return frame.sort(*[rank if k == "setting" else pl.col(k) for k in keys])


def _rows(frame: pl.DataFrame, keep: pl.Expr, extra: Sequence[str]) -> pl.DataFrame:
    keys = ("question_id", "setting", "model", "thinking")
    return _sorted(frame.filter(keep).select(*keys, *CONTEXT, *extra), keys)


def judge_rule_disagreements(frame: pl.DataFrame) -> pl.DataFrame:
    """Responses whose LLM label (``judge_label``, the judge's own where the rules' label is of
    record) differs from ``judge.rule_label`` (both present)."""
    said = pl.coalesce("judge_label", "label")
    keep = said.is_not_null() & pl.col("rule_label").is_not_null() & (said != pl.col("rule_label"))
    return _rows(frame, keep, ("label", "judge_label", "rule_label", "response"))


def score_columns(frame: pl.DataFrame) -> list[str]:
    """The per-judge accuracy columns (``score_<judge>``) of a frame."""
    return [c for c in frame.columns if c.startswith("score_")]


def judge_disagreements(frame: pl.DataFrame, *, min_spread: float = 0.5) -> pl.DataFrame:
    """Responses whose accuracy judges' scores differ by at least ``min_spread`` (adds ``spread``)."""
    cols = score_columns(frame)
    if len(cols) < 2:
        return _rows(frame.with_columns(spread=pl.lit(None, pl.Float64)), pl.lit(False), ("spread",))
    spread = (pl.max_horizontal(cols) - pl.min_horizontal(cols)).alias("spread")
    return _rows(frame.with_columns(spread), pl.col("spread") >= min_spread - 1e-9, ("label", *cols, "spread"))


def budget_exhausted(frame: pl.DataFrame) -> pl.DataFrame:
    """Responses whose output budget ran out before a final answer."""
    return _rows(frame, pl.col("budget_exhausted"), ("finish_reason", "thinking_trace"))


def search(frame: pl.DataFrame, text: str) -> pl.DataFrame:
    """Questions whose id, scenario, question, fact, target page, reference or any response contains
    ``text`` (case-insensitive); returns question_id, answerable, asked_question."""
    hay = pl.concat_str([pl.col(c).fill_null("") for c in SEARCH_FIELDS], separator="\n").str.to_lowercase()
    hits = frame.filter(hay.str.contains(text.lower(), literal=True))
    return hits.group_by("question_id").agg(*[pl.col(c).first() for c in CONTEXT]).sort("question_id")


#: Filters without parameters, by the name the HTML page uses: (title, function).
FLAGS = {
    "all_failed": ("every model failed", all_failed),
    "judge_rule": ("LLM judge ≠ rule label", judge_rule_disagreements),
    "judges": ("accuracy judges disagree", judge_disagreements),
    "exhausted": ("budget exhausted", budget_exhausted),
}


def setting_order(settings: Sequence[str]) -> list[str]:
    """Settings in display order: no_rag, single, iterative, then ablations alphabetically."""
    rank = {c: i for i, c in enumerate(CONDITIONS)}
    return sorted(dict.fromkeys(settings), key=lambda s: (rank.get(s, len(rank)), s))


def flag_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """One row: how many rows each :data:`FLAGS` filter finds (an overview before opening them)."""
    return pl.DataFrame({name: [fn(frame).height] for name, (_, fn) in FLAGS.items()})


def label_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Responses per setting, answerability and label: the run at a glance."""
    return frame.group_by("setting", "answerable", "label").len().sort("setting", "answerable", "label")
