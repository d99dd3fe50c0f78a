"""ESB's response classes from both labellers, the L5 flags and types, and their agreement.

Each response gets two ESB classes (§5.2: ANSWER, ABSTAIN, INVALID):

- ``esb_judge`` from our response judge (J.3): ABSTAIN stays ABSTAIN; ANSWER and DENY are
  answers (a premise denial is a claim about the game, not a statement that the evidence does not
  suffice); an empty final text or an exhausted budget is INVALID; a failed call or an
  unparsable judge output has no class (left out of every rate, counted).
- ``esb_rule`` from the rule labeller (``rule_label(..., scheme="esb")``); an exhausted budget is
  INVALID, a failed call has no class.

The metrics use ``esb_judge``; ``esb_rule`` is its cross-check (:func:`agreement`).

L5 answers are matched against the key value (:func:`values.contains`): ``known_wrong`` means the
answer states the altered value and not the original (it adopted the conflicting copy's value);
``gold_adopted`` means it states the original and not the altered value. Each L5 response has
one fine-grained type (:data:`L5_TYPES`, first that applies):

==================  =========================================================================
``invalid``         ESB's Invalid (empty, malformed, out of budget)
``abstain``         the response abstains
``conflict_aware``  an answer that says the passages disagree ("conflict", "contradict",
                    "inconsistent", "discrepancy", "sources differ", "another passage", "do not
                    agree") and still answers (ESB's Conflict-Aware Answering); a cue under a
                    negation ("there is no conflict", "do not contradict") does not count
                    (:func:`is_conflict_aware`)
``pick_gold``       evidence picking, gold side: an answer with the original value only
``pick_conflict``   evidence picking, conflict side: an answer with the altered value only
``both_values``     an answer stating both values without saying that they conflict
``other``           an answer stating neither value
==================  =========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from declinecraft.core.agreement import cohen_kappa
from declinecraft.evaluation.rule_labels import ESB_LABELS, rule_label
from declinecraft.views.evidence import values

L5_TYPES: tuple[str, ...] = (
    "abstain",
    "pick_gold",
    "pick_conflict",
    "conflict_aware",
    "both_values",
    "other",
    "invalid",
)
_CONFLICT = re.compile(
    r"\b(?:conflict\w*|contradict\w*|inconsisten\w*|discrepan\w*|disagree\w*|(?:passages|sources)\s+differ|"
    r"another\s+(?:passage|source|chunk)|other\s+(?:passage|source)\s+(?:says|states)|"
    r"two\s+(?:passages|sources|values))",
    re.I,
)
# A negated agreement word states a disagreement: "the passages do not agree", "are not consistent".
_NOT_AGREE = re.compile(r"(?:\bnot|n['’]t)\s+(?:\w+\s+){0,2}?(?:agree|consistent)\b", re.I)
_CLAUSE_END = re.compile(r"[.;:!?\n]|,\s*(?:but|however|yet|although|though)\b|\b(?:but|however|yet)\b", re.I)
_NEGATORS = frozenset({"no", "not", "never", "without", "neither", "nor", "none", "nothing"})
_NEGATION_WINDOW = 6  # words before a cue that can negate it: "don't seem to be in any conflict"


def _negated(text: str, start: int) -> bool:
    """Whether a negator stands within a few words before ``start`` in the same clause."""
    before = text[:start]
    ends = list(_CLAUSE_END.finditer(before))
    clause = before[ends[-1].end() :] if ends else before
    words = re.findall(r"[\w'’]+", clause.lower())[-_NEGATION_WINDOW:]
    return any(w in _NEGATORS or w.endswith(("n't", "n’t")) for w in words)


def is_conflict_aware(text: str) -> bool:
    """Whether ``text`` says that its passages disagree, reading negations.

    A conflict cue counts unless a negator ("no", "not", "n't", "never", "without", "neither",
    "nor", "none", "nothing") stands within six words before it in the same clause; a negated
    agreement word ("do not agree", "are not consistent") counts as a disagreement. So "the
    passages conflict" and "the passages do not agree" are True, "there is no conflict", "they do
    not contradict each other" and "no two passages differ" are False.
    """
    text = text or ""
    if _NOT_AGREE.search(text):
        return True
    return any(not _negated(text, m.start()) for m in _CONFLICT.finditer(text))


def judge_class(label: str | None, source: str | None, budget_exhausted: bool) -> str | None:
    """ESB class of the response judge's label (see the module docstring); None when unlabelled."""
    if source == "error":
        return None
    if budget_exhausted or source == "empty":
        return "INVALID"
    if label is None:
        return None
    return "ABSTAIN" if label == "ABSTAIN" else "ANSWER"


def rule_class(response: str | None, budget_exhausted: bool, error: str | None) -> str | None:
    """ESB class of the rule labeller; None for a failed call."""
    if error:
        return None
    if budget_exhausted:
        return "INVALID"
    return rule_label(response or "", scheme="esb")


def l5_type(cls: str | None, response: str, original: str, altered: str) -> str | None:
    """The fine-grained type of one L5 response (module docstring); None when unclassified."""
    if cls is None:
        return None
    if cls == "INVALID":
        return "invalid"
    if cls == "ABSTAIN":
        return "abstain"
    if is_conflict_aware(response):
        return "conflict_aware"
    gold, wrong = values.contains(response, original), values.contains(response, altered)
    if gold and wrong:
        return "both_values"
    return "pick_gold" if gold else ("pick_conflict" if wrong else "other")


def annotate(judged: pl.DataFrame, key_values: pl.DataFrame) -> pl.DataFrame:
    """Add both ESB classes, ``abstained``/``answered``, and on L5 the value flags and type.

    ``judged`` is :func:`~declinecraft.evaluation.judge.judged_frame`'s output over the view's responses; ``key_values``
    the rows of :func:`conflicts.find_values` (original and altered value per question).
    """
    kv: Mapping[str, Mapping[str, Any]] = {r["question_id"]: r for r in key_values.iter_rows(named=True)}
    extra: dict[str, list[Any]] = {
        k: []
        for k in (
            "esb_judge",
            "esb_rule",
            "mentions_gold",
            "mentions_conflict",
            "known_wrong",
            "gold_adopted",
            "l5_type",
        )
    }
    for r in judged.iter_rows(named=True):
        cls = judge_class(r["label"], r["label_source"], bool(r["budget_exhausted"]))
        extra["esb_judge"].append(cls)
        extra["esb_rule"].append(rule_class(r["response"], bool(r["budget_exhausted"]), r["error"]))
        value = kv.get(r["question_id"], {})
        if r["level"] != "L5" or not value.get("original"):
            for name in ("mentions_gold", "mentions_conflict", "known_wrong", "gold_adopted", "l5_type"):
                extra[name].append(None)
            continue
        gold = values.contains(r["response"], value["original"])
        wrong = values.contains(r["response"], value["altered"])
        extra["mentions_gold"].append(gold)
        extra["mentions_conflict"].append(wrong)
        extra["known_wrong"].append(None if cls is None else cls == "ANSWER" and wrong and not gold)
        extra["gold_adopted"].append(None if cls is None else cls == "ANSWER" and gold and not wrong)
        extra["l5_type"].append(l5_type(cls, r["response"], value["original"], value["altered"]))
    types = {
        "esb_judge": pl.String,
        "esb_rule": pl.String,
        "mentions_gold": pl.Boolean,
        "mentions_conflict": pl.Boolean,
        "known_wrong": pl.Boolean,
        "gold_adopted": pl.Boolean,
        "l5_type": pl.String,
    }
    frame = judged.with_columns(pl.Series(name, extra[name], dtype=types[name]) for name in types)
    return frame.with_columns(
        abstained=pl.when(pl.col("esb_judge").is_not_null()).then(pl.col("esb_judge") == "ABSTAIN"),
        answered=pl.when(pl.col("esb_judge").is_not_null()).then(pl.col("esb_judge") == "ANSWER"),
    )


AGREEMENT_SCHEMA: dict[str, Any] = {"scope": pl.String, "n": pl.Int64, "agreement": pl.Float64, "kappa": pl.Float64}


def agreement(frame: pl.DataFrame) -> pl.DataFrame:
    """Agreement and Cohen's kappa of ``esb_judge`` with ``esb_rule`` over responses both
    classified: overall, per level, per prompt and per model."""
    both = frame.filter(pl.col("esb_judge").is_not_null(), pl.col("esb_rule").is_not_null())
    scopes: list[tuple[str, pl.DataFrame]] = [("all", both)]
    for column in ("level", "prompt", "model"):
        for value in sorted(both[column].unique().to_list()):
            scopes.append((f"{column}={value}", both.filter(pl.col(column) == value)))
    rows = []
    for scope, part in scopes:
        a, b = part["esb_judge"].to_list(), part["esb_rule"].to_list()
        same = sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else float("nan")
        kappa = cohen_kappa(a, b, labels=list(ESB_LABELS)) if a else float("nan")
        rows.append({"scope": scope, "n": len(a), "agreement": same, "kappa": kappa})
    return pl.DataFrame(rows, schema=AGREEMENT_SCHEMA)
