"""Run health of the two views (Know2Guess's decisions, the evidence view's responses): their calls,
cut replies, parser issues and protocol compliance, counted from their stage folders in
:mod:`~declinecraft.analysis.run_health`'s long table (its measures ``k2g_format_issues``,
``esb_invalid`` and ``protocol_*``); and :func:`whole`, the run's whole health, which is what the
paper draws: the verifier's, the analysis stage's ``run_health.csv`` and the views' (the views run
after the analysis stage, which therefore reads neither).
"""

from __future__ import annotations

import polars as pl

from declinecraft.analysis.run_health import (
    ANALYSIS_STAGE,
    EVIDENCE_STAGE,
    K2G_STAGE,
    SCHEMA,
    answer_calls,
    empty,
    finish,
    judge_calls,
    merge_calls,
    missing,
    read_artifact,
    truncation,
    verifier_health,
)
from declinecraft.core import catalogue
from declinecraft.core.config import RunConfig


def know2guess_format(decisions: pl.DataFrame) -> pl.DataFrame:
    """``k2g_format_issues`` per model and thinking setting: replies (strict parser, one row per
    call) with any parser issue; ``detail`` names the most frequent issue."""
    strict = decisions.filter(pl.col("parser") == "strict").with_columns(
        issue=pl.col("issues").fill_null("").str.split(";").list.eval(pl.element().filter(pl.element() != ""))
    )
    counted = strict.group_by("model", "thinking").agg(
        numerator=(pl.col("issue").list.len() > 0).sum(), denominator=pl.len()
    )
    top = (
        strict.explode("issue")
        .drop_nulls("issue")
        .group_by("model", "thinking", "issue")
        .len()
        .sort("len", "issue", descending=[True, False])
        .group_by("model", "thinking", maintain_order=True)
        .first()
        .select("model", "thinking", detail=pl.col("issue"))
    )
    counted = counted.join(top, on=["model", "thinking"], how="left").with_columns(pl.col("detail").fill_null(""))
    return finish(counted, "k2g_format_issues", K2G_STAGE)


#: Know2Guess parser issues (:mod:`declinecraft.views.know2guess.decisions`) that leave a reply
#: without a decision it states and keeps: none, an unknown or conflicting one, only a thinking
#: trace, nothing at all, or a final answer given beside an abstention or a refusal.
K2G_NO_DECISION = (
    "empty",
    "thinking_only",
    "no_decision",
    "unknown_decision",
    "conflicting_decisions",
    "answer_with_abstain",
    "answer_with_refusal",
)
#: Know2Guess parser issues that leave a reply without a stated confidence (it counts as 50).
K2G_NO_CONFIDENCE = ("missing_confidence", "confidence_over_100", "confidence_negative", "confidence_non_numeric")


def protocol(replies: pl.DataFrame, stage: str, decision: pl.Expr, confidence: pl.Expr | None) -> pl.DataFrame:
    """``protocol_decision``, ``protocol_confidence`` (when the protocol asks for one) and
    ``protocol_followed`` per model and thinking setting, of the replies returned (failed calls
    are ``failed_calls``); ``decision`` and ``confidence`` are true per reply that has one."""
    replied = replies.filter(pl.col("error").is_null()).with_columns(
        _decision=decision,
        _confidence=confidence if confidence is not None else pl.lit(True),
        _cut=pl.col("finish_reason").fill_null("") == "length",
    )
    keys = ["model", "thinking"]
    counted = replied.group_by(keys).agg(
        d=pl.col("_decision").sum(),
        c=pl.col("_confidence").sum(),
        f=(pl.col("_decision") & pl.col("_confidence") & ~pl.col("_cut")).sum(),
        denominator=pl.len(),
    )
    parts = [("protocol_decision", "d"), *([("protocol_confidence", "c")] if confidence is not None else [])]
    parts.append(("protocol_followed", "f"))
    return pl.concat(
        [finish(counted.select(*keys, "denominator", numerator=col), measure, stage) for measure, col in parts]
    )


def know2guess_protocol(decisions: pl.DataFrame) -> pl.DataFrame:
    """:func:`protocol` of the Know2Guess replies (strict parser, every prompt)."""
    issues = pl.col("issues").fill_null("").str.split(";")
    has = lambda names: issues.list.eval(pl.element().is_in(list(names))).list.any()  # noqa: E731
    strict = decisions.filter(pl.col("parser") == "strict")
    return protocol(strict, K2G_STAGE, ~has(K2G_NO_DECISION), ~has(K2G_NO_CONFIDENCE))


def evidence_protocol(responses: pl.DataFrame) -> pl.DataFrame:
    """:func:`protocol` of the evidence view's answers: a decision is a nonempty final text left
    after thinking (ESB asks for no confidence)."""
    text = pl.col("response").fill_null("").str.strip_chars() != ""
    exhausted = pl.col("budget_exhausted").fill_null(False) if "budget_exhausted" in responses.columns else False
    return protocol(responses, EVIDENCE_STAGE, text & ~exhausted, None)


def evidence_invalid(summary: pl.DataFrame) -> pl.DataFrame:
    """``esb_invalid`` per model and thinking setting from the view's ``summary.csv`` (summed over
    prompts): responses ESB classes INVALID of all responses."""
    counted = summary.group_by("model", "thinking").agg(
        numerator=pl.col("n_invalid").sum(), denominator=pl.col("n_responses").sum()
    )
    return finish(counted.with_columns(pl.col("thinking").cast(pl.String)), "esb_invalid", EVIDENCE_STAGE)


def collect_views(cfg: RunConfig) -> pl.DataFrame:
    """The two views' health (calls, truncation, Know2Guess format issues, ESB invalid responses),
    with a ``missing`` row for a view that is switched off or has not run."""
    parts = []
    for block, stage in (("know2guess", K2G_STAGE), ("evidence", EVIDENCE_STAGE)):
        if not cfg.block(block).enabled:
            parts.append(missing(stage, f"the {block} view is switched off in this run ({block}.enabled: false)"))
    if cfg.know2guess.enabled:
        decisions, why = read_artifact(catalogue.K2G_DECISIONS, cfg)
        if decisions is None:
            parts.append(missing(K2G_STAGE, why))
        else:
            calls = decisions.filter(pl.col("parser") == "strict").with_columns(pl.col("thinking").cast(pl.String))
            parts += [
                answer_calls(calls, K2G_STAGE),
                truncation(calls, K2G_STAGE, ("model", "thinking")),
                know2guess_format(calls.with_columns(parser=pl.lit("strict"))),
                know2guess_protocol(calls),
            ]
    if cfg.evidence.enabled:
        found = {
            artifact: read_artifact(artifact, cfg)
            for artifact in (
                catalogue.EVIDENCE_RESPONSES,
                catalogue.EVIDENCE_LABELS,
                catalogue.EVIDENCE_SCORES,
                catalogue.EVIDENCE_SUMMARY,
            )
        }
        parts += [missing(EVIDENCE_STAGE, why) for frame, why in found.values() if frame is None]
        if (responses := found[catalogue.EVIDENCE_RESPONSES][0]) is not None:
            parts += [
                answer_calls(responses, EVIDENCE_STAGE),
                truncation(responses, EVIDENCE_STAGE, ("model", "thinking")),
                evidence_protocol(responses.with_columns(pl.col("thinking").cast(pl.String))),
            ]
        judged = [
            (frame, "judge")
            for artifact, (frame, _) in found.items()
            if artifact in (catalogue.EVIDENCE_LABELS, catalogue.EVIDENCE_SCORES) and frame is not None
        ]
        parts.append(judge_calls(judged, EVIDENCE_STAGE))
        if (summary := found[catalogue.EVIDENCE_SUMMARY][0]) is not None and summary.height:
            parts.append(evidence_invalid(summary))
    return merge_calls(pl.concat(parts)) if parts else empty()


def counted(cfg: RunConfig) -> pl.DataFrame:
    """The analysis stage's run health (``run_health.csv``), or a ``missing`` row saying why."""
    source = catalogue.ANALYSIS_TABLE.path(cfg, "run_health")
    if source.is_file():
        return pl.read_csv(source, schema_overrides=SCHEMA).with_columns(
            pl.col("model", "thinking", "condition", "detail").fill_null("")
        )
    return missing(ANALYSIS_STAGE, f"{source.relative_to(cfg.root)} is missing (the analysis stage has not run)")


def whole(cfg: RunConfig) -> pl.DataFrame:
    """The run's whole health, in stage order: the verifier's, the analysis stage's and the views'."""
    return pl.concat([verifier_health(cfg), counted(cfg), collect_views(cfg)])
