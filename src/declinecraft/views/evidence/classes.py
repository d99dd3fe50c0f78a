"""ESB's response classes from both labellers, the L5 flags and types, and their agreement.

Each response gets two ESB classes (§5.2: ANSWER, ABSTAIN, INVALID):

- ``esb_judge`` from our response judge (J.3; ESB has its own classifier, whose text we do not
  have): ABSTAIN stays ABSTAIN; ANSWER and DENY are answers (a premise denial is a claim about the
  game, not a statement that the evidence does not suffice); an empty final text (labelled ANSWER
  without a judge call by :func:`declinecraft.evaluation.judge.outcome`) or an exhausted budget is
  INVALID; a failed call or an unparsable judge output has no class (left out of every rate,
  counted).
- ``esb_rule`` from the rule labeller (``rule_label(..., scheme="esb")``); an exhausted budget is
  INVALID, a failed call has no class.

The metrics use ``esb_judge``; ``esb_rule`` is its cross-check (:func:`agreement`).

L5 answers are matched against the key value. ``mentions_gold`` / ``mentions_conflict`` say that
the response names a value at all (:func:`values.contains`); adoption reads negation by scope
(:func:`values.states`, :mod:`.negation`): "it does not drop X; it drops Y" states Y only.
``known_wrong`` means the answer states the altered value and not the original (it adopted the
conflicting copy's value); ``gold_adopted`` means it states the original and not the altered
value. Each L5 response has one fine-grained type (:data:`L5_TYPES`, first that applies):

==================  =========================================================================
``invalid``         ESB's Invalid (empty, malformed, out of budget)
``abstain``         the response abstains
``conflict_aware``  an answer that says the passages disagree ("conflict", "contradict",
                    "inconsistent", "discrepancy", "sources differ", "another passage", "do not
                    agree") and still answers (ESB's Conflict-Aware Answering); a cue inside a
                    negation scope ("there is no conflict", "cannot be in conflict") does not
                    count, plain agreement ("the two passages agree") neither
                    (:func:`is_conflict_aware`)
``pick_gold``       evidence picking, gold side: an answer stating the original value only
``pick_conflict``   evidence picking, conflict side: an answer stating the altered value only
``both_values``     an answer stating both values without saying that they conflict
``other``           an answer stating neither value (a negated value is not stated)
==================  =========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from declinecraft.core.agreement import cohen_kappa
from declinecraft.evaluation.rule_labels import ESB_LABELS, rule_label
from declinecraft.views.evidence import negation, values

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
    r"\b(?:conflict\w*|contradict\w*|inconsisten\w*|discrepan\w*|disagree\w*|mismatch\w*|at\s+odds|"
    r"differ(?:s|ed|ing)?\b|different\s+(?:values?|numbers?|answers?|figures?|amounts?|times?|durations?|claims?)|"
    r"another\s+(?:passage|source|chunk)|(?:the\s+)?other\s+(?:passage|source)\s+(?:says|states|gives|claims))",
    re.I,
)
# Agreement words: under a negation they state a disagreement ("the passages do not agree").
_AGREE = re.compile(
    r"\b(?:agree(?:s|d)?|consistent|match(?:es|ed)?|compatible|reconcil\w*|(?:say|state|give)s?\s+the\s+same|"
    r"both\s+be\s+(?:right|true|correct))\b",
    re.I,
)
# A cue denied after it in its clause: "a conflict ... does not exist", "... is absent".
_DENIED_AFTER = re.compile(
    r"(?:\bnot|n['’]t|\bnever)\s+(?:\w+\s+){0,2}?(?:exists?|present|found|apparent|evident|detected)\b|"
    r"\b(?:is|are|was|were)\s+absent\b",
    re.I,
)


def is_conflict_aware(text: str) -> bool:
    """Whether ``text`` says that its passages disagree, reading negation by scope.

    True when a conflict cue ("conflict", "contradict", "inconsistent", "discrepancy", "disagree",
    "differ", "different values", "mismatch", "another passage") stands outside every negation
    scope (:mod:`.negation`) and is not denied later in its clause ("a conflict ... does not
    exist"), or when an agreement word ("agree", "consistent", "match", "the same", "both be
    right") stands inside one ("the passages do not agree", "cannot both be right"). A hedged
    conflict ("the passages may conflict", "I am not sure whether they conflict") counts; plain
    agreement ("the two passages agree"), a negated cue ("no conflict", "cannot be in conflict",
    "do not contradict") and a pseudo-negation ("Not surprisingly, the passages contradict each
    other" is True) are read by their meaning.
    """
    text = text or ""
    spans = negation.scopes(text)
    for m in _AGREE.finditer(text):
        if negation.is_negated(text, m.start(), spans):
            return True
    for m in _CONFLICT.finditer(text):
        if negation.is_negated(text, m.start(), spans):
            continue
        if _DENIED_AFTER.search(negation.clause_after(text, m.end())):
            continue
        return True
    return False


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
    gold, wrong = values.states(response, original), values.states(response, altered)
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
        extra["mentions_gold"].append(values.contains(r["response"], value["original"]))
        extra["mentions_conflict"].append(values.contains(r["response"], value["altered"]))
        gold = values.states(r["response"], value["original"])
        wrong = values.states(r["response"], value["altered"])
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
