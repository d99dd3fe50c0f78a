"""Judging (Appendix I, J.3): response labels, oracle references, accuracy scores, leakage audit.

- The response judge labels every response ABSTAIN / DENY / ANSWER from the question the model
  saw and its final text (thinking removed, cut to ``truncate_chars``). An output that is not
  exactly one label is re-asked once (a follow-up turn, so it is a new call, not the cached one;
  :mod:`declinecraft.evaluation.verdict`, constrained to the labels with ``judge.constrain_reask``);
  if still unparsable, the label stays null and is counted: never dropped, never guessed.
- :func:`rule_label` (deterministic, ESB-style phrases, :mod:`declinecraft.evaluation.rule_labels`) labels
  the same responses as a cross-check; :func:`agreement` reports agreement and Cohen's kappa.
- The oracle writes one reference answer per question from the full source page(s) and the
  scenario chunks (no web search): as of the cut-off for answerable questions, about the current
  game for unanswerable ones (leakage audit).
- Each accuracy judge scores 0 / 0.5 / 1 against the reference (re-asked once when unparsable).
  Answer Accuracy is the mean over the whole panel; a response with a missing (unparsable) score
  gets a null accuracy and is counted, so a panel never silently shrinks.

Responses without a final answer get defined outcomes without any judge call:
budget exhausted -> no label (left out of the rates), score 0; empty final text (after removing
thinking) -> ANSWER (it never declines, App. I) and score 0; a failed answer call -> no label, no
score, counted as an error. Abstentions and premise denials score 0 without a call (App. I): a
denial of an answerable question counts as an attempted, incorrect answer (every item asked about
exists), and on the leakage audit it declines.

Models are injected as batch callables (:data:`~declinecraft.llm.calls.Ask`);
:mod:`declinecraft.evaluation.judge_stage` wires them to the model servers and writes
``outputs/<run>/06_judge/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from declinecraft.core import stats
from declinecraft.core.agreement import cohen_kappa
from declinecraft.evaluation import metrics
from declinecraft.evaluation.context import Lookup, format_context
from declinecraft.evaluation.rule_labels import LABELS, SCORES, parse_label, parse_score, rule_label
from declinecraft.evaluation.verdict import LABEL_CHOICES, REASK_LABEL, REASK_SCORE, SCORE_CHOICES, ask_parsed
from declinecraft.llm.calls import Ask, Call

__all__ = [
    "LABELS",
    "SCORES",
    "LABEL_CHOICES",
    "SCORE_CHOICES",
    "REASK_LABEL",
    "REASK_SCORE",
    "rule_label",
    "parse_label",
    "parse_score",
    "truncate",
    "ask_parsed",
    "label_responses",
    "score_responses",
    "judged_frame",
    "of_record",
    "results",
    "leakage",
    "agreement",
]

RESPONSE_PROMPT = "judge_response"
ACCURACY_PROMPT = "judge_accuracy"
ORACLE_PROMPTS = {True: "oracle_answerable", False: "oracle_unanswerable"}
#: The conditions of the leakage audit: no retrieval, scenario on, the paper's prompt (App. I).
LEAKAGE = {"condition": "no_rag", "scenario": True, "prompt_variant": "default"}


def truncate(text: str, limit: int) -> str:
    """Cut a response to ``limit`` characters for the judge (App. I: 12,000); 0 = no limit."""
    return text if limit <= 0 or len(text) <= limit else text[:limit]


def outcome(row: Mapping[str, Any]) -> str:
    """How a response is labelled: "llm", or the defined outcome without a judge call."""
    if row.get("error"):
        return "error"
    if row["budget_exhausted"]:
        return "budget_exhausted"
    if not (row.get("response") or "").strip():
        return "empty"
    return "llm"


LABEL_SCHEMA: dict[str, Any] = {
    "response_id": pl.String,
    "judge": pl.String,
    "role": pl.String,
    "source": pl.String,
    "raw_output": pl.String,
    "label": pl.String,
    "unparsable": pl.Boolean,
    "reasked": pl.Boolean,
    "raw_reask": pl.String,
    "cache_key": pl.String,
    "error": pl.String,
    "rule_label": pl.String,
}


def label_responses(
    responses: pl.DataFrame,
    ask: Ask,
    *,
    judge: str,
    truncate_chars: int = 12000,
    role: str = "response_judge",
    constrain: bool = False,
) -> pl.DataFrame:
    """Label responses with one judge; one row per response (see :data:`LABEL_SCHEMA`); with
    ``constrain``, a re-ask may only answer one of :data:`LABEL_CHOICES`.

    ``responses`` needs response_id, query, response, budget_exhausted and error.
    """
    rows = responses.to_dicts()
    sources = [outcome(r) for r in rows]
    todo = [i for i, s in enumerate(sources) if s == "llm"]
    calls = [
        Call(RESPONSE_PROMPT, {"question": rows[i]["query"], "answer": truncate(rows[i]["response"], truncate_chars)})
        for i in todo
    ]
    verdicts = dict(
        zip(
            todo,
            ask_parsed(calls, ask, parse_label, REASK_LABEL, choices=LABEL_CHOICES if constrain else ()),
            strict=True,
        )
    )
    out = []
    for i, (row, source) in enumerate(zip(rows, sources, strict=True)):
        v = verdicts.get(i)
        label = v.value if v else ("ANSWER" if source == "empty" else None)
        out.append(
            {
                "response_id": row["response_id"],
                "judge": judge,
                "role": role,
                "source": source,
                "raw_output": v.raw if v else None,
                "label": label,
                "unparsable": bool(v and v.unparsable),
                "reasked": bool(v and v.reasked),
                "raw_reask": v.raw_reask if v else None,
                "cache_key": v.cache_key if v else None,
                "error": v.error if v else None,
                "rule_label": None if source in ("error", "budget_exhausted") else rule_label(row["response"] or ""),
            }
        )
    return pl.DataFrame(out, schema=LABEL_SCHEMA)


def second_judge_sample(labels: pl.DataFrame, responses: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """Responses for the second-opinion judges: up to ``n``, equally across the response judge's
    labels and the retrieval conditions (App. I: 1,008 answers), or all when ``n`` is 0."""
    frame = responses.join(labels.select("response_id", "label"), on="response_id", maintain_order="left")
    frame = frame.filter(pl.col("label").is_not_null())
    if n <= 0 or n >= frame.height:
        return frame
    cells = frame.group_by(["label", "condition"], maintain_order=True).agg(pl.col("response_id"))
    per_cell = max(1, n // max(1, cells.height))
    rng = np.random.default_rng(seed)
    keep = []
    for ids in cells["response_id"].to_list():
        keep += [ids[j] for j in sorted(rng.permutation(len(ids))[:per_cell])]
    return frame.filter(pl.col("response_id").is_in(keep))


# --- oracle references -----------------------------------------------------------------------------

REFERENCE_SCHEMA: dict[str, Any] = {
    "question_id": pl.String,
    "answerable": pl.Boolean,
    "oracle": pl.String,
    "prompt": pl.String,
    "source_titles": pl.List(pl.String),
    "context_chars": pl.Int64,
    "reference": pl.String,
    "finish_reason": pl.String,
    "budget_exhausted": pl.Boolean,
    "cache_key": pl.String,
    "error": pl.String,
}


def reference_context(
    question: Mapping[str, Any], pages: Mapping[str, str], lookup: Lookup, *, page_chars: int = 0, chunk_chars: int = 0
) -> str:
    """The oracle's context (App. I): the full source page, then the scenario chunks.

    ``pages`` maps titles of the question's corpus (C_pre for answerable, C_post for
    unanswerable questions) to page text. ``page_chars``/``chunk_chars`` > 0 cut the page and each
    scenario chunk (``judge.oracle_page_chars``/``oracle_chunk_chars``: a context-window deviation
    of small offline models).

    Raises:
        ValueError: the source page or a scenario chunk is missing (names the question).
    """
    qid, title = question["id"], question["target_title"]
    if title not in pages:
        half = "C_pre" if question["answerable"] else "C_post"
        raise ValueError(f"question {qid!r}: source page {title!r} is not in the {half} pages")
    try:
        scenario = format_context(lookup(list(question["scenario_chunk_ids"] or [])), chunk_chars)
    except KeyError as exc:
        raise ValueError(f"question {qid!r}: scenario {exc.args[0]}") from exc
    page = pages[title].strip()
    page = page[:page_chars].rstrip() if page_chars > 0 else page
    tail = f"\n\n[Scenario chunks]\n{scenario}" if scenario else ""
    return f"[Source page] {title} ({question.get('target_url') or ''})\n{page}{tail}"


def write_references(questions: pl.DataFrame, contexts: Mapping[str, str], ask: Ask, *, oracle: str) -> pl.DataFrame:
    """Ask the oracle for one reference answer per question (see :data:`REFERENCE_SCHEMA`).

    A reference that failed, exhausted its budget or is empty stays null: the accuracy judges
    then give that question's responses no score (counted as ``no_reference``).
    """
    rows = questions.to_dicts()
    calls = [
        Call(ORACLE_PROMPTS[bool(r["answerable"])], {"context": contexts[r["id"]], "question": r["question"]})
        for r in rows
    ]
    replies = ask(calls)
    out = []
    for r, call, reply in zip(rows, calls, replies, strict=True):
        usable = not reply.error and not reply.budget_exhausted and (reply.text or "").strip()
        out.append(
            {
                "question_id": r["id"],
                "answerable": bool(r["answerable"]),
                "oracle": oracle,
                "prompt": call.prompt,
                "source_titles": [r["target_title"]],
                "context_chars": len(contexts[r["id"]]),
                "reference": reply.text.strip() if usable else None,
                "finish_reason": reply.finish_reason,
                "budget_exhausted": reply.budget_exhausted,
                "cache_key": reply.cache_key,
                "error": reply.error,
            }
        )
    return pl.DataFrame(out, schema=REFERENCE_SCHEMA)


# --- accuracy --------------------------------------------------------------------------------------

SCORE_SCHEMA: dict[str, Any] = {
    "response_id": pl.String,
    "judge": pl.String,
    "source": pl.String,
    "raw_output": pl.String,
    "score": pl.Float64,
    "unparsable": pl.Boolean,
    "reasked": pl.Boolean,
    "raw_reask": pl.String,
    "cache_key": pl.String,
    "error": pl.String,
}


def scoring_source(row: Mapping[str, Any]) -> str:
    """Why a response gets its score: "llm", or the rule that fixes it without a call."""
    first = outcome(row)
    if first != "llm":
        return first
    if row.get("label") == "ABSTAIN":
        return "abstain"
    if row.get("label") == "DENY":
        return "deny"  # App. I: an attempted, incorrect answer (answerable) or a decline (leakage)
    if not row.get("reference"):
        return "no_reference"
    return "llm"


FIXED = {"budget_exhausted": 0.0, "empty": 0.0, "abstain": 0.0, "deny": 0.0}


def score_responses(items: pl.DataFrame, ask: Ask, *, judge: str, constrain: bool = False) -> pl.DataFrame:
    """Score responses with one accuracy judge; one row per response (see :data:`SCORE_SCHEMA`);
    with ``constrain``, a re-ask may only answer one of :data:`SCORE_CHOICES`.

    ``items`` needs response_id, query, response, reference, label, answerable,
    budget_exhausted and error. Errors and missing references get a null score (counted).
    """
    rows = items.to_dicts()
    sources = [scoring_source(r) for r in rows]
    todo = [i for i, s in enumerate(sources) if s == "llm"]
    calls = [
        Call(
            ACCURACY_PROMPT,
            {"question": rows[i]["query"], "ground_truth": rows[i]["reference"], "candidate": rows[i]["response"]},
        )
        for i in todo
    ]
    verdicts = dict(
        zip(
            todo,
            ask_parsed(calls, ask, parse_score, REASK_SCORE, choices=SCORE_CHOICES if constrain else ()),
            strict=True,
        )
    )
    out = []
    for i, (row, source) in enumerate(zip(rows, sources, strict=True)):
        v = verdicts.get(i)
        out.append(
            {
                "response_id": row["response_id"],
                "judge": judge,
                "source": source,
                "raw_output": v.raw if v else None,
                "score": v.value if v else FIXED.get(source),
                "unparsable": bool(v and v.unparsable),
                "reasked": bool(v and v.reasked),
                "raw_reask": v.raw_reask if v else None,
                "cache_key": v.cache_key if v else None,
                "error": v.error if v else None,
            }
        )
    return pl.DataFrame(out, schema=SCORE_SCHEMA)


def of_record(labels: pl.DataFrame, by_rule: bool) -> pl.DataFrame:
    """``labels`` with each label of record: the judges' own, or with ``by_rule``
    (``judge.labels_by_rule``) the rule classifier's for every response the response judge was
    asked about (empty, failed and exhausted responses keep their defined outcome). What the
    judge said stays in ``labels.parquet``, in the agreement with the rules and in ``judge_label``."""
    labels = labels.with_columns(judge_label=pl.col("label"))
    if not by_rule:
        return labels
    asked = (pl.col("role") == "response_judge") & (pl.col("source") == "llm") & pl.col("rule_label").is_not_null()
    return labels.with_columns(label=pl.when(asked).then(pl.col("rule_label")).otherwise(pl.col("label")))


def scoring_items(responses: pl.DataFrame, labels: pl.DataFrame, references: pl.DataFrame) -> pl.DataFrame:
    """The responses the accuracy judges score: every answerable one, and the leakage audit's
    no-retrieval answers to unanswerable questions; each with its label and reference."""
    leak = pl.all_horizontal([pl.col(c) == v for c, v in LEAKAGE.items()]) & ~pl.col("answerable")
    chosen = responses.filter(pl.col("answerable") | leak)
    primary = labels.filter(pl.col("role") == "response_judge").select("response_id", "label")
    refs = references.select("question_id", "reference")
    return chosen.join(primary, on="response_id", how="left", maintain_order="left").join(
        refs, on="question_id", how="left", maintain_order="left"
    )


def judged_frame(
    responses: pl.DataFrame, labels: pl.DataFrame, scores: pl.DataFrame, judges: Sequence[str]
) -> pl.DataFrame:
    """Responses joined with the response judge's label and the accuracy panel's scores; ``labels``
    may carry the labels of record (:func:`of_record`), and ``judge_label`` is then what the judge said.

    ``accuracy`` is the mean over all ``judges`` (0 for abstentions and exhausted budgets), null
    when any judge's score is missing (``accuracy_complete`` False) or the response is not in the
    scoring set (unanswerable outside the leakage audit).
    """
    primary = labels.filter(pl.col("role") == "response_judge").select(
        "response_id",
        "label",
        pl.col("unparsable").alias("label_unparsable"),
        pl.col("source").alias("label_source"),
        pl.col("error").alias("label_error"),
        "rule_label",
        pl.col("judge_label" if "judge_label" in labels.columns else "label").alias("judge_label"),
    )
    frame = responses.join(primary, on="response_id", how="left", maintain_order="left")
    if scores.height and judges:
        wide = scores.pivot(on="judge", index="response_id", values="score", aggregate_function="first")
        wide = wide.rename({j: f"score_{j}" for j in judges if j in wide.columns})
        for j in judges:
            if f"score_{j}" not in wide.columns:
                wide = wide.with_columns(pl.lit(None, pl.Float64).alias(f"score_{j}"))
        cols = [f"score_{j}" for j in judges]
        wide = wide.select("response_id", *cols).with_columns(
            accuracy=pl.when(pl.all_horizontal(pl.col(c).is_not_null() for c in cols)).then(pl.mean_horizontal(cols)),
            accuracy_complete=pl.all_horizontal(pl.col(c).is_not_null() for c in cols),
        )
        frame = frame.join(wide, on="response_id", how="left", maintain_order="left")
    else:
        frame = frame.with_columns(accuracy=pl.lit(None, pl.Float64), accuracy_complete=pl.lit(None, pl.Boolean))
    return frame


# --- tables ----------------------------------------------------------------------------------------

GROUP = ("model", "thinking", "condition", "pipeline", "k", "scenario", "prompt_variant")


def results(judged: pl.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> pl.DataFrame:
    """One tidy row per configuration and setting (``metrics.summarize``) plus what was left out.

    Responses without a label that did not exhaust the budget (failed calls, unparsable labels)
    cannot enter the rates; they are left out of ``metrics.summarize`` and counted here in
    ``n_error`` (answer call failed), ``n_label_error`` (judge call failed) and
    ``n_label_unparsable``; ``n_accuracy_incomplete`` counts answerable responses whose accuracy
    panel lacks a score.
    """
    keys = list(GROUP)
    usable = judged.filter(pl.col("label").is_not_null() | pl.col("budget_exhausted"))
    table = metrics.summarize(usable, by=keys, n_resamples=n_resamples, confidence=confidence, seed=seed)
    counts = judged.group_by(keys).agg(
        n_responses=pl.len(),
        n_error=pl.col("error").is_not_null().sum(),
        n_label_error=pl.col("label_error").is_not_null().sum(),
        n_label_unparsable=(pl.col("label_unparsable").fill_null(False)).sum(),
        n_empty=(pl.col("label_source") == "empty").sum(),
        n_accuracy_incomplete=(pl.col("answerable") & (pl.col("accuracy_complete") == False)).sum(),  # noqa: E712
    )
    return counts.join(table, on=keys, how="left", nulls_equal=True).sort(keys)


def leakage(judged: pl.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> pl.DataFrame:
    """Leakage audit (App. A, Table 4): no-retrieval answers to unanswerable questions scored
    against current-game references; abstentions and premise denials score 0."""
    audit = judged.filter(~pl.col("answerable"), *[pl.col(c) == v for c, v in LEAKAGE.items()])
    rows = []
    for (model, thinking), group in audit.group_by(["model", "thinking"], maintain_order=True):
        scores = group.with_columns(score=pl.when(pl.col("budget_exhausted")).then(0.0).otherwise(pl.col("accuracy")))
        values = scores["score"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        low, high = stats.bootstrap_mean_ci(values, n_resamples, confidence, seed)
        rows.append(
            {
                "model": model,
                "thinking": thinking,
                "n": group.height,
                "n_answer": int((group["label"] == "ANSWER").sum()),
                "n_scored": int(np.isfinite(values).sum()),
                "n_incomplete": int(np.isnan(values).sum()),
                "leakage_accuracy": float(np.nanmean(values)) if np.isfinite(values).any() else float("nan"),
                "low": low,
                "high": high,
            }
        )
    schema = {
        "model": pl.String,
        "thinking": pl.String,
        "n": pl.Int64,
        "n_answer": pl.Int64,
        "n_scored": pl.Int64,
        "n_incomplete": pl.Int64,
        "leakage_accuracy": pl.Float64,
        "low": pl.Float64,
        "high": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


def _agree(a: Sequence[str], b: Sequence[str]) -> tuple[int, float, float]:
    n = len(a)
    if n == 0:
        return 0, float("nan"), float("nan")
    same = sum(x == y for x, y in zip(a, b, strict=True)) / n
    return n, same, cohen_kappa(list(a), list(b), labels=list(LABELS))


def agreement(labels: pl.DataFrame, responses: pl.DataFrame) -> pl.DataFrame:
    """Agreement and Cohen's kappa of the response judge with rule_label and with each second
    judge, over the responses both labelled: overall, per answerability and per condition."""
    meta = responses.select("response_id", "answerable", "condition")
    primary = labels.filter(pl.col("role") == "response_judge", pl.col("label").is_not_null())
    primary = primary.join(meta, on="response_id")
    pairs = [
        (
            "rule_label",
            primary.select(
                "response_id", "answerable", "condition", "label", pl.col("rule_label").alias("other")
            ).filter(pl.col("other").is_not_null()),
        )
    ]
    for judge in labels.filter(pl.col("role") == "second_judge")["judge"].unique(maintain_order=True).to_list():
        other = labels.filter(pl.col("judge") == judge, pl.col("role") == "second_judge", pl.col("label").is_not_null())
        pairs.append(
            (
                judge,
                primary.select("response_id", "answerable", "condition", "label").join(
                    other.select("response_id", pl.col("label").alias("other")), on="response_id"
                ),
            )
        )
    rows = []
    for name, frame in pairs:
        scopes = [("all", frame)]
        scopes += [(f"answerable={v}", frame.filter(pl.col("answerable") == v)) for v in (True, False)]
        scopes += [
            (f"condition={c}", frame.filter(pl.col("condition") == c))
            for c in frame["condition"].unique(maintain_order=True).to_list()
        ]
        for scope, part in scopes:
            n, agree, kappa = _agree(part["label"].to_list(), part["other"].to_list())
            rows.append({"comparison": name, "scope": scope, "n": n, "agreement": agree, "kappa": kappa})
    schema = {"comparison": pl.String, "scope": pl.String, "n": pl.Int64, "agreement": pl.Float64, "kappa": pl.Float64}
    return pl.DataFrame(rows, schema=schema)
