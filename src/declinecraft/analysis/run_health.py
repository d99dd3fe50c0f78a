"""Run health: how the run's own model calls, judges and parsers fared, counted from its outputs.

Every measure is a count out of a count, one row each in a long table (:data:`SCHEMA`):

========================  ===================================================================
measure                   numerator of denominator
========================  ===================================================================
verifier_no_answerable    the verifier's "Answers" checks that said NO (the older wiki text does
                          not answer the question), of those it answered, per verifier, for the
                          benchmark generator's answerable drafts: each NO rejected one
verifier_no_unanswerable  the same for its unanswerable drafts, where each NO kept one
failed_calls              calls that returned an error, of the calls a model or judge made in a
                          stage (answers and iterative reflections in 05; labels with their
                          re-asks, oracle references and scores in 06; decisions in 08; answers,
                          labels and scores in 09)
truncated                 replies *cut*: stopped at the output budget (finish reason ``length``),
                          of the replies returned, per model and condition
exhausted                 answers that *exhausted* the budget: cut with no final answer left
                          after thinking (a subset of the cut ones; left out of the rates)
reflection_unusable       iterative reflections lost to format, out of budget or failed
reflection_outcome        iterative reflections by outcome (``detail``): sufficient, insufficient
                          (follow-ups searched), no_follow_ups (insufficient, but no usable
                          question; ``echoed_template`` when it copied the prompt's placeholder
                          back), lost_to_format, budget_exhausted, error
further_rounds            iterative answers that used ``detail`` retrieval rounds after round 0
label_reasked             response-judge outputs that were not one label and were re-asked
label_unparsable          ... still not one label after the re-ask (no label)
score_reasked             accuracy-judge outputs that were not a score and were re-asked
score_unparsable          ... still not a score after the re-ask (no accuracy for the response)
label_rule_disagree       labels that differ from the phrase rule's, of those both gave; ``detail``
                          names the first few (where to look for the judge's mislabels)
judge_check_agree         the judges' check set (``judge.check_file``): items each accuracy judge
                          scored as labelled, of the items; ``detail`` is ``passed`` or ``failed``
                          (below ``judge.check_min_agreement``)
accuracy_questions        answerable questions with a complete accuracy panel, of those asked,
                          per configuration and condition (the main grid)
k2g_format_issues         Know2Guess replies with a parser issue (strict parser; ``detail``: the
                          most frequent issue)
esb_invalid               evidence-view responses ESB classes INVALID (empty or out of budget)
protocol_decision         view replies with a decision the protocol can read and the reply keeps
                          (Know2Guess: one decision line, no answer beside an abstention; evidence
                          view: a nonempty final text), per model and thinking setting
protocol_confidence       Know2Guess replies that state a readable confidence (0-100)
protocol_followed         view replies that follow the protocol in full: a decision, a confidence
                          where the protocol asks for one, and not cut at the output budget
missing                   a part that could not be counted; ``detail`` says why
========================  ===================================================================

:func:`collect` counts the answer and judge stages (the analysis stage's ``run_health.csv``);
:func:`verifier_health` counts the verify stage's audit and
:func:`declinecraft.analysis.view_health.collect_views` the two views from their folders (the
paper stage adds them, since the analysis stage reads neither). A missing file leaves a
``missing`` row, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

from declinecraft.core import catalogue, paths
from declinecraft.core.catalogue import Artifact
from declinecraft.core.check_agreement import check_agreement
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import iterative

#: The ``stage`` a row counts: the stage's notebook (``05_answer``).
VERIFY_STAGE = catalogue.notebook("verify")
ANSWER_STAGE = catalogue.notebook("answer")
JUDGE_STAGE = catalogue.notebook("judge")
ANALYSIS_STAGE = catalogue.notebook("analysis")
K2G_STAGE = catalogue.notebook("know2guess")
EVIDENCE_STAGE = catalogue.notebook("evidence")
#: The verifier's NO per half (key: answerable).
VERIFIER_NO = {True: "verifier_no_answerable", False: "verifier_no_unanswerable"}

#: Columns of the long table (``run_health.csv``).
SCHEMA: dict[str, type[pl.DataType]] = {
    "measure": pl.String,
    "stage": pl.String,
    "model": pl.String,
    "thinking": pl.String,
    "condition": pl.String,
    "detail": pl.String,
    "numerator": pl.Int64,
    "denominator": pl.Int64,
    "rate": pl.Float64,
}
#: Reflection outcomes that gave the iterative loop nothing to act on (:data:`iterative.Status`).
UNUSABLE_REFLECTION = ("lost_to_format", "budget_exhausted", "error")


def total(frame: pl.DataFrame, measure: str, stage: str | None = None) -> tuple[int, int]:
    """Summed (numerator, denominator) of one measure of a run-health table, in one stage or all."""
    part = frame.filter(pl.col("measure") == measure)
    if stage:
        part = part.filter(pl.col("stage") == stage)
    return int(part["numerator"].sum()), int(part["denominator"].sum())


def empty() -> pl.DataFrame:
    """A run-health table without rows."""
    return pl.DataFrame(schema=SCHEMA)


def finish(frame: pl.DataFrame, measure: str, stage: str) -> pl.DataFrame:
    """Rows of ``measure`` from a frame with model, numerator and denominator (others optional;
    a ``stage`` column overrides ``stage``)."""
    if frame.height == 0:
        return empty()
    fill = {c: pl.lit("") for c in ("thinking", "condition", "detail") if c not in frame.columns}
    if "stage" not in frame.columns:
        fill["stage"] = pl.lit(stage)
    return (
        frame.with_columns(measure=pl.lit(measure), **fill)
        .with_columns(pl.col("numerator", "denominator").cast(pl.Int64))
        .with_columns(rate=pl.when(pl.col("denominator") > 0).then(pl.col("numerator") / pl.col("denominator")))
        .select(list(SCHEMA))
        .cast(pl.Schema(SCHEMA))
        .sort("model", "thinking", "condition", "detail")
    )


def missing(stage: str, reason: str, measure: str = "missing") -> pl.DataFrame:
    """One ``missing`` row: the part of ``stage`` that could not be counted, and why."""
    row = {
        "measure": measure,
        "stage": stage,
        "model": "",
        "thinking": "",
        "condition": "",
        "detail": reason,
        "numerator": None,
        "denominator": None,
        "rate": None,
    }
    return pl.DataFrame([row], schema=SCHEMA)


def verifier_answers(audit: pl.DataFrame, generator: str) -> pl.DataFrame:
    """``verifier_no_answerable`` and ``verifier_no_unanswerable`` per verifier, from the verify
    stage's ``audit_verifier`` (its "answers" rows for ``generator``, whose drafts make the
    benchmark)."""
    part = audit.filter((pl.col("check") == "answers") & (pl.col("generator") == generator))
    answered = pl.col("evaluated") - pl.col("unparsable")
    halves = []
    for answerable, said_no in ((True, pl.col("rejected")), (False, answered - pl.col("rejected"))):
        counted = part.filter(pl.col("answerable") == answerable).select(
            model=pl.col("verifier"), numerator=said_no, denominator=answered
        )
        halves.append(finish(counted, VERIFIER_NO[answerable], VERIFY_STAGE))
    return pl.concat(halves)


def verifier_health(cfg: RunConfig) -> pl.DataFrame:
    """The verifier's rows, or a ``missing`` row saying why there are none (an imported benchmark
    was verified elsewhere)."""
    audit, why = read_artifact(catalogue.VERIFY_AUDIT_VERIFIER, cfg)
    if audit is not None:
        return verifier_answers(audit, cfg.generate.generator)
    if catalogue.VERIFY_IMPORT.path(cfg).is_file():
        why = "the benchmark was imported (make import), so its verification did not run here"
    return missing(VERIFY_STAGE, why)


def reflections(responses: pl.DataFrame) -> pl.DataFrame:
    """One row per reflection call of the iterative answers: model, thinking, status."""
    rows = []
    part = responses.filter(pl.col("condition") == "iterative") if "rounds" in responses.columns else None
    for model, thinking, rounds in part.select("model", "thinking", "rounds").iter_rows() if part is not None else []:
        for step in json.loads(rounds) if rounds else []:
            if step.get("reflection"):
                found = step["reflection"]
                status = found.get("status")
                echoed = status == "no_follow_ups" and bool(found.get("echoed_template"))
                rows.append(
                    {
                        "model": model,
                        "thinking": thinking,
                        "status": status,
                        "outcome": "echoed_template" if echoed else status,
                    }
                )
    schema = {"model": pl.String, "thinking": pl.String, "status": pl.String, "outcome": pl.String}
    return pl.DataFrame(rows, schema=schema)


def answer_calls(responses: pl.DataFrame, stage: str = ANSWER_STAGE) -> pl.DataFrame:
    """``failed_calls`` per model under test: its answers plus its iterative reflections."""
    answers = responses.select("model", failed=pl.col("error").is_not_null())
    reflected = reflections(responses).select("model", failed=pl.col("status") == "error")
    calls = pl.concat([answers, reflected])
    counted = calls.group_by("model").agg(numerator=pl.col("failed").sum(), denominator=pl.len())
    return finish(counted, "failed_calls", stage)


def truncation(
    responses: pl.DataFrame, stage: str = ANSWER_STAGE, by: Sequence[str] = ("model", "thinking", "condition")
) -> pl.DataFrame:
    """``truncated``: replies with finish reason ``length`` of the replies returned (failed calls
    have no reply and are counted under ``failed_calls``)."""
    replied = responses.filter(pl.col("error").is_null())
    counted = replied.group_by(list(by)).agg(
        numerator=(pl.col("finish_reason") == "length").sum(), denominator=pl.len()
    )
    return finish(counted, "truncated", stage)


def exhaustion(
    responses: pl.DataFrame, stage: str = ANSWER_STAGE, by: Sequence[str] = ("model", "thinking", "condition")
) -> pl.DataFrame:
    """``exhausted``: replies cut at the budget with no final answer left (``budget_exhausted``), of
    the replies returned; empty when the table has no ``budget_exhausted`` column."""
    if "budget_exhausted" not in responses.columns:
        return empty()
    replied = responses.filter(pl.col("error").is_null())
    counted = replied.group_by(list(by)).agg(
        numerator=pl.col("budget_exhausted").fill_null(False).sum(), denominator=pl.len()
    )
    return finish(counted, "exhausted", stage)


def reflection_health(responses: pl.DataFrame) -> pl.DataFrame:
    """``reflection_unusable`` per model and thinking setting (iterative answers only)."""
    found = reflections(responses)
    counted = found.group_by("model", "thinking").agg(
        numerator=pl.col("status").is_in(UNUSABLE_REFLECTION).sum(), denominator=pl.len()
    )
    return finish(counted.with_columns(condition=pl.lit("iterative")), "reflection_unusable", ANSWER_STAGE)


def reflection_outcomes(responses: pl.DataFrame) -> pl.DataFrame:
    """``reflection_outcome``: iterative reflections per model, thinking setting and outcome, so
    "no second round" is told apart from "never asked" (a model that judges the context
    insufficient but writes no usable follow-up question asks, and is not searched for)."""
    found = reflections(responses)
    counted = found.group_by("model", "thinking", "outcome").agg(numerator=pl.len())
    totals = found.group_by("model", "thinking").agg(denominator=pl.len())
    counted = counted.join(totals, on=["model", "thinking"]).rename({"outcome": "detail"})
    return finish(counted.with_columns(condition=pl.lit("iterative")), "reflection_outcome", ANSWER_STAGE)


def rounds_used(responses: pl.DataFrame) -> pl.DataFrame:
    """``further_rounds``: iterative answers by the number of retrieval rounds after round 0
    (``detail``), per model and thinking setting, from :func:`iterative.stop_table`."""
    if "rounds" not in responses.columns or responses.filter(pl.col("condition") == "iterative").height == 0:
        return empty()
    stops = iterative.stop_table(responses.filter(pl.col("error").is_null()))
    counted = (
        stops.group_by("model", "thinking", "n_rounds")
        .agg(numerator=pl.col("len").sum())
        .with_columns(
            denominator=pl.col("numerator").sum().over("model", "thinking"),
            detail=(pl.col("n_rounds").fill_null(1) - 1).cast(pl.String),
            condition=pl.lit("iterative"),
        )
    )
    return finish(counted, "further_rounds", ANSWER_STAGE)


def judge_calls(parts: Sequence[tuple[pl.DataFrame, str]], stage: str) -> pl.DataFrame:
    """``failed_calls`` per judge over several judge tables, each given with its judge column:
    labels and scores (a row with ``source`` ``llm`` is one call, a re-ask one more) and oracle
    references (every row is one call)."""
    frames = []
    for frame, who in parts:
        if frame.height == 0:
            continue
        called = frame.filter(pl.col("source") == "llm") if "source" in frame.columns else frame
        reasks = pl.col("reasked").fill_null(False).cast(pl.Int64) if "reasked" in frame.columns else pl.lit(0)
        frames.append(
            called.select(
                model=pl.col(who),
                calls=(1 + reasks).cast(pl.Int64),
                failed=pl.col("error").is_not_null().cast(pl.Int64),
            )
        )
    if not frames:
        return empty()
    counted = (
        pl.concat(frames).group_by("model").agg(numerator=pl.col("failed").sum(), denominator=pl.col("calls").sum())
    )
    return finish(counted, "failed_calls", stage)


def parse_health(table: pl.DataFrame, kind: str, stage: str = JUDGE_STAGE) -> pl.DataFrame:
    """``<kind>_reasked`` and ``<kind>_unparsable`` per judge (``detail``: the role of a label
    judge) over the outputs a judge was called for; ``kind`` is ``label`` or ``score``."""
    called = table.filter(pl.col("source") == "llm")
    keys = ["judge", "role"] if "role" in called.columns else ["judge"]
    counted = (
        called.group_by(keys)
        .agg(
            reasked=pl.col("reasked").fill_null(False).sum(),
            unparsable=pl.col("unparsable").fill_null(False).sum(),
            denominator=pl.len(),
        )
        .rename({"judge": "model", **({"role": "detail"} if "role" in keys else {})})
    )
    return pl.concat(
        [
            finish(counted.rename({"reasked": "numerator"}).drop("unparsable"), f"{kind}_reasked", stage),
            finish(counted.rename({"unparsable": "numerator"}).drop("reasked"), f"{kind}_unparsable", stage),
        ]
    )


#: How many disagreeing responses ``label_rule_disagree`` names.
EXAMPLES = 3


def rule_disagreement(labels: pl.DataFrame, stage: str = JUDGE_STAGE) -> pl.DataFrame:
    """``label_rule_disagree`` per label judge: labels that differ from the phrase rule's
    (:func:`~declinecraft.evaluation.rule_labels.rule_label`), of the responses both labelled; ``detail`` names
    the first few, each as ``response_id: judge X, rule Y``, where the judge may have mislabelled."""
    both = labels.filter(pl.col("label").is_not_null() & pl.col("rule_label").is_not_null())
    keys = ["judge", "role"] if "role" in both.columns else ["judge"]
    rows = []
    for key, group in both.sort("response_id").group_by(keys, maintain_order=True):
        differ = group.filter(pl.col("label") != pl.col("rule_label"))
        named = [
            f"{r['response_id']}: judge {r['label']}, rule {r['rule_label']}" for r in differ.head(EXAMPLES).to_dicts()
        ]
        rows.append(
            {"model": key[0], "numerator": differ.height, "denominator": group.height, "detail": "; ".join(named)}
        )
    schema = {"model": pl.String, "numerator": pl.Int64, "denominator": pl.Int64, "detail": pl.String}
    return finish(pl.DataFrame(rows, schema=schema), "label_rule_disagree", stage)


def judge_check(scored: pl.DataFrame, min_agreement: float) -> pl.DataFrame:
    """``judge_check_agree`` per accuracy judge from the judge stage's ``judge_check.parquet``
    (:func:`declinecraft.core.check_agreement.check_agreement`)."""
    found = check_agreement(scored, min_agreement)
    counted = found.select(
        model="judge",
        numerator="agree",
        denominator="items",
        detail=pl.when(pl.col("passed")).then(pl.lit("passed")).otherwise(pl.lit("failed")),
    )
    return finish(counted, "judge_check_agree", JUDGE_STAGE)


def failed_judges(health: pl.DataFrame) -> list[tuple[str, int, int]]:
    """The accuracy judges that failed the check set: (judge, agreeing items, items)."""
    part = health.filter((pl.col("measure") == "judge_check_agree") & (pl.col("detail") == "failed"))
    return [(r["model"], int(r["numerator"]), int(r["denominator"])) for r in part.iter_rows(named=True)]


def accuracy_questions(main_grid: pl.DataFrame) -> pl.DataFrame:
    """``accuracy_questions`` per configuration and condition from the analysis' ``main_grid``:
    answerable questions whose accuracy panel is complete (``accuracy_n``) of those asked."""
    counted = main_grid.select("model", "thinking", "condition", numerator="accuracy_n", denominator="n_answerable")
    return finish(counted, "accuracy_questions", ANALYSIS_STAGE)


def merge_calls(frame: pl.DataFrame) -> pl.DataFrame:
    """One ``failed_calls`` row per stage and model, however many tables its calls came from (a
    model that answers and judges in one stage)."""
    calls = frame.filter(pl.col("measure") == "failed_calls")
    if calls.height == 0:
        return frame
    summed = calls.group_by("stage", "model").agg(pl.col("numerator", "denominator").sum())
    merged = finish(summed, "failed_calls", "")
    order = {m: i for i, m in enumerate(dict.fromkeys(frame["measure"]))}
    out = pl.concat([frame.filter(pl.col("measure") != "failed_calls"), merged.select(list(SCHEMA))])
    return out.sort(
        pl.col("measure").replace_strict(order, return_dtype=pl.Int64),
        "stage",
        "model",
        "thinking",
        "condition",
        "detail",
    )


def read_artifact(artifact: Artifact, cfg: RunConfig) -> tuple[pl.DataFrame | None, str]:
    """A stage file (parquet or CSV), or why it is not there."""
    path = artifact.path(cfg)
    if not path.is_file():
        where = paths.under(path, cfg.root)
        return None, f"{where} is missing (its stage has not run)"
    frame = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path, infer_schema_length=10_000)
    return frame, ""


def collect(cfg: RunConfig, main_grid: pl.DataFrame | None = None) -> pl.DataFrame:
    """The answer and judge stages' health (every measure but the verifier's and the views'), with a ``missing``
    row for each input the run lacks; ``main_grid`` is the analysis' table when it has one."""
    parts = []
    responses, why = read_artifact(catalogue.ANSWER_RESPONSES, cfg)
    if responses is None:
        parts.append(missing(ANSWER_STAGE, why))
    else:
        parts += [
            answer_calls(responses),
            truncation(responses),
            exhaustion(responses),
            reflection_health(responses),
            reflection_outcomes(responses),
            rounds_used(responses),
        ]
    judge_files = {
        "labels": catalogue.JUDGE_LABELS,
        "references": catalogue.JUDGE_REFERENCES,
        "scores": catalogue.JUDGE_SCORES,
    }
    tables = {name: read_artifact(artifact, cfg) for name, artifact in judge_files.items()}
    parts += [missing(JUDGE_STAGE, why) for frame, why in tables.values() if frame is None]
    found = {name: frame for name, (frame, _) in tables.items() if frame is not None}
    who = {"labels": "judge", "references": "oracle", "scores": "judge"}
    parts.append(judge_calls([(frame, who[name]) for name, frame in found.items()], JUDGE_STAGE))
    for name, kind in (("labels", "label"), ("scores", "score")):
        if name in found:
            parts.append(parse_health(found[name], kind))
    if "labels" in found and "rule_label" in found["labels"].columns:
        parts.append(rule_disagreement(found["labels"]))
    if cfg.judge.check_file:
        check, why = read_artifact(catalogue.JUDGE_CHECK, cfg)
        parts.append(missing(JUDGE_STAGE, why) if check is None else judge_check(check, cfg.judge.check_min_agreement))
    if main_grid is not None and {"accuracy_n", "n_answerable"} <= set(main_grid.columns):
        parts.append(accuracy_questions(main_grid))
    else:
        parts.append(
            missing(ANALYSIS_STAGE, "no judged responses, so no configuration was scored", "accuracy_questions")
        )
    return merge_calls(pl.concat(parts))
