"""The paper's "Run health" section: one table and a few generated sentences, before any result.

The counts are the run's whole health, counted in one place
(:func:`declinecraft.analysis.view_health.whole`: the analysis stage's ``run_health.csv`` for
answering and judging, the verifier's audit and the two views' folders); this module only draws them.
:func:`write` puts the whole table into ``outputs/<run>/10_paper/run_health.csv``, the LaTeX table
into ``paper/tables/run_health.tex`` and the sentences, as macros, into
``paper/health_numbers.tex``. Every count prints with its n ("6 of 9"); the questions a
configuration's accuracy rests on print with the small-n caveat below the run's minimum
(:func:`declinecraft.core.small_n.stated`). A part the run could not count is named in
``\\HealthOmitted``, never an error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import polars as pl

from declinecraft.analysis import run_health, view_health
from declinecraft.core import catalogue, small_n
from declinecraft.core.config import RunConfig
from declinecraft.paper import health_flags, health_table
from declinecraft.paper.health_table import of
from declinecraft.paper.latex import escape, listed, macro_file
from declinecraft.paper.outputs import paper_writer


def _calls_sentence(frame: pl.DataFrame) -> str:
    failed, calls = run_health.total(frame, "failed_calls")
    if calls == 0:
        return "The run recorded no model calls."
    head = f"The run's outputs record {small_n.counted(calls, 'model calls')}"
    if failed == 0:
        return head + "; none failed."
    bad = frame.filter((pl.col("measure") == "failed_calls") & (pl.col("numerator") > 0)).to_dicts()
    where = "; ".join(f"{r['model']} in {r['stage']}: {of(r['numerator'], r['denominator'])}" for r in bad)
    return f"{head}; {failed} failed ({where})."


#: The two words for replies stopped by the output budget, defined once in the paper's setup
#: (``paper/main.tex``) and used as here everywhere: a reply is *cut* when it stops at the budget
#: (finish reason ``length``) and *exhausted* when it is cut with no final answer left after its
#: thinking; exhausted answers are left out of the rates, cut ones are labelled as written.
CUT, EXHAUSTED = "cut at the output budget", "exhausted it"


def _cut_counts(frame: pl.DataFrame) -> tuple[int, int, int]:
    """(cut, exhausted, answers returned) of the answer stage."""
    cut, answers = run_health.total(frame, "truncated", run_health.ANSWER_STAGE)
    exhausted, _ = run_health.total(frame, "exhausted", run_health.ANSWER_STAGE)
    return cut, exhausted, answers


def _truncation_sentence(frame: pl.DataFrame) -> str:
    cut, exhausted, answers = _cut_counts(frame)
    if answers == 0:
        return ""
    if cut == 0:
        return f"No answer of the {small_n.counted(answers, 'answers')} was {CUT}."
    by = (
        frame.filter((pl.col("measure") == "truncated") & (pl.col("stage") == run_health.ANSWER_STAGE))
        .group_by("model")
        .agg(pl.col("numerator", "denominator").sum())
        .filter(pl.col("numerator") > 0)
        .sort("model")
    )
    where = "; ".join(f"{m}: {of(k, n)}" for m, k, n in by.iter_rows())
    return (
        f"{of(cut, answers)} answers were {CUT} (finish reason length; {where}); "
        f"{of(exhausted, cut)} of them {EXHAUSTED} with no final answer."
    )


def _truncation_note(frame: pl.DataFrame) -> str:
    """The reproduction notes' clause on answers cut mid-answer (the paper's budget left none cut)."""
    cut, exhausted, answers = _cut_counts(frame)
    if answers == 0:
        return ""
    if cut == 0:
        return f"No answer was {CUT}."
    return (
        f"Of the {small_n.counted(answers, 'answers')}, {cut} ({100 * cut / answers:.1f}%) were {CUT} "
        f"and {exhausted} of them {EXHAUSTED}; the others are labelled and scored as written, so a short budget "
        "can turn an abstention or an answer into a fragment."
    )


def _box_line(frame: pl.DataFrame) -> str:
    """The first-page box's run-health line: calls failed, answers cut and exhausted."""
    failed, calls = run_health.total(frame, "failed_calls")
    cut, exhausted, answers = _cut_counts(frame)
    if calls == 0 and answers == 0:
        return ""
    parts = [f"{of(failed, calls)} model calls failed"]
    if answers:
        parts.append(f"{of(cut, answers)} answers were {CUT} and {of(exhausted, answers)} {EXHAUSTED}")
    return "Run health: " + "; ".join(parts) + "."


def _judge_sentence(frame: pl.DataFrame) -> str:
    said = []
    for measure, judge, lost in (
        ("label_unparsable", "response judge", "no label"),
        ("score_unparsable", "accuracy judge", "no accuracy"),
    ):
        bad = (
            health_table.with_reasks(frame)
            .filter((pl.col("measure") == measure) & (pl.col("numerator") > 0))
            .to_dicts()
        )
        said += [
            f"the {judge} {r['model']} gave no usable output on {of(r['numerator'], r['denominator'])} calls "
            f"after re-asking {r['reasked']}, so those responses have {lost}"
            for r in bad
        ]
    rescued = (
        health_table.with_reasks(frame)
        .filter(
            pl.col("measure").is_in(["label_unparsable", "score_unparsable"])
            & (pl.col("reasked").fill_null(0) > pl.col("numerator"))
        )
        .to_dicts()
    )
    again = [
        f"{r['model']}: {r['reasked'] - r['numerator']} of its {r['denominator']} "
        f"{'labels' if r['measure'] == 'label_unparsable' else 'scores'}"
        for r in rescued
    ]
    after = (
        (
            " Parsed only after the one re-ask (constrained to the valid answers where "
            f"judge.constrain_reask is on): {'; '.join(again)}."
        )
        if again
        else ""
    )
    if not said:
        return (
            ("Every judge output parsed." + after)
            if frame.filter(pl.col("stage") == run_health.JUDGE_STAGE).height
            else ""
        )
    return "In judging, " + "; ".join(said) + "." + after


def _verifier_sentence(frame: pl.DataFrame) -> str:
    """What the verifier said to each half's drafts and, when it said NO to most of both, what
    that means for the benchmark (a NO that keeps the unanswerable half does not tell it apart)."""
    half = {
        measure: "answerable" if answerable else "unanswerable"
        for answerable, measure in run_health.VERIFIER_NO.items()
    }
    part = frame.filter(pl.col("measure").is_in(list(half)) & (pl.col("denominator") > 0))
    said = []
    for model in part["model"].unique(maintain_order=True).to_list():
        rows = part.filter(pl.col("model") == model).sort("measure").to_dicts()  # answerable first
        counts = " and ".join(f"{of(r['numerator'], r['denominator'])} {half[r['measure']]} drafts" for r in rows)
        text = f"The verifier ({model}) said the older wiki text does not answer the question for {counts}"
        if len(rows) == 2 and all(r["rate"] >= 0.5 for r in rows):
            text += (
                ": it said NO to most drafts of either half, so it rejected most answerable drafts, and its NO "
                "does not tell the unanswerable drafts apart from the answerable ones"
            )
        said.append(text + ".")
    return " ".join(said)


def _rule_sentence(frame: pl.DataFrame) -> str:
    """Where the response judge may have mislabelled: its disagreements with the phrase rule."""
    part = frame.filter((pl.col("measure") == "label_rule_disagree") & (pl.col("numerator") > 0)).to_dicts()
    said = [
        f"{r['model']} and the phrase rule label {of(r['numerator'], r['denominator'])} responses differently "
        f"(first: {r['detail']})"
        for r in part
    ]
    if not said:
        return ""
    return (
        "Where the judge may have mislabelled: " + "; ".join(said) + ". Either may be wrong; the run's "
        "explorer page shows each response with both labels."
    )


def _scored_sentence(frame: pl.DataFrame, min_n: int) -> str:
    part = frame.filter(pl.col("measure") == "accuracy_questions").drop_nulls("numerator")
    if part.height == 0:
        return ""
    below = part.filter(
        ~pl.col("numerator").map_elements(lambda n: small_n.is_finding(n, min_n), return_dtype=pl.Boolean)
    )
    most = int(cast(int, part["numerator"].max()))
    head = f"Answer accuracy rests on at most {small_n.counted(most, 'questions')} per configuration and condition"
    if below.height == 0:
        return head + f", at least the run's minimum of {min_n} in every one."
    return (
        f"{head}; {of(below.height, part.height)} fall below the run's minimum of {min_n} questions "
        f"and are {small_n.CAVEAT}."
    )


def _rounds_sentence(frame: pl.DataFrame) -> str:
    part = frame.filter(pl.col("measure") == "further_rounds")
    if part.height == 0:
        return ""
    total = int(part["numerator"].sum())
    more = part.filter(pl.col("detail") != "0")
    if int(more["numerator"].sum()) == 0:
        return (
            f"All {small_n.counted(total, 'iterative answers')} used the first retrieval round only"
            + _asked(frame)
            + "."
        )
    return f"Further retrieval rounds were used by {of(int(more['numerator'].sum()), total)} iterative answers."


#: How each reflection outcome reads in the rounds sentence.
OUTCOMES = {
    "sufficient": "judged the context sufficient",
    "insufficient": "asked follow-up questions",
    "echoed_template": "judged the context insufficient but copied the prompt's placeholder back instead of a question",
    "no_follow_ups": "judged the context insufficient without a usable follow-up question",
    "lost_to_format": "were not the JSON the prompt asks for",
    "budget_exhausted": "ran out of output budget",
    "error": "failed",
}


def _asked(frame: pl.DataFrame) -> str:
    """ ": of the n reflections, k judged ... and m were not JSON" (the reflections' outcomes)."""
    part = frame.filter(pl.col("measure") == "reflection_outcome")
    if part.height == 0:
        return ""
    counts = (
        part.group_by("detail").agg(pl.col("numerator").sum()).sort("numerator", "detail", descending=[True, False])
    )
    said = [f"{k} {OUTCOMES.get(d, escape(d))}" for d, k in counts.iter_rows()]
    total = int(part["numerator"].sum())
    return f": of the {small_n.counted(total, 'reflections')}, {listed(said)}"


#: Macros of ``health_numbers.tex`` written from the analysis' tables and the params (:func:`write`),
#: beside those of :data:`SENTENCES`; ``HealthTableNote`` only when the table is summed in the body.
NEIGHBOUR_MACROS = (
    "HealthJudgeAgreeSentence",
    "HealthLeakSentence",
    "HealthScopeSentence",
    "HealthSelfJudgeSentence",
    "HealthTableNote",
)


def _check_sentence(frame: pl.DataFrame) -> str:
    """Each accuracy judge's agreement with the judges' check set, and what a failed one means."""
    part = frame.filter(pl.col("measure") == "judge_check_agree").drop_nulls("numerator")
    if part.height == 0:
        return ""
    said = "; ".join(f"{r['model']}: {of(r['numerator'], r['denominator'])}" for r in part.iter_rows(named=True))
    text = f"On the judges' check set (labelled items we wrote), the accuracy judges score as labelled {said}."
    failed = run_health.failed_judges(frame)
    if failed:
        text += " " + NOT_INTERPRETABLE_JUDGES.format(judges=", ".join(j for j, _, _ in failed)) + "."
    return text


#: What the paper says of the scores of judges that failed the check set.
NOT_INTERPRETABLE_JUDGES = (
    "The scores of {judges} are not interpretable: below judge.check_min_agreement, so no accuracy number of this "
    "run is read as a finding"
)


def judges_not_interpretable(cfg: RunConfig) -> str:
    """Why the run's accuracy numbers are not findings (accuracy judges that failed the check set,
    from the analysis' run health), or ''."""
    failed = run_health.failed_judges(view_health.counted(cfg))
    if not failed:
        return ""
    named = ", ".join(f"{j} ({of(k, n)} check-set items as labelled)" for j, k, n in failed)
    return NOT_INTERPRETABLE_JUDGES.format(judges=named)


#: Sentence macros of ``health_numbers.tex``: (macro, what it says, how it is written).
SENTENCES: tuple[tuple[str, str, Callable[[pl.DataFrame, int], str]], ...] = (
    ("HealthVerifierSentence", "the verifier's NO per half", lambda f, m: _verifier_sentence(f)),
    ("HealthCallsSentence", "model calls and failed calls", lambda f, m: _calls_sentence(f)),
    ("HealthTruncSentence", "answers cut at the output budget", lambda f, m: _truncation_sentence(f)),
    ("HealthTruncNote", "answers cut mid-answer, for the notes", lambda f, m: _truncation_note(f)),
    ("HealthBoxLine", "the first-page box's run-health line", lambda f, m: _box_line(f)),
    ("HealthJudgeSentence", "judge outputs that did not parse", lambda f, m: _judge_sentence(f)),
    ("HealthCheckSentence", "the accuracy judges on the judges' check set", lambda f, m: _check_sentence(f)),
    ("HealthRuleSentence", "labels unlike the phrase rule's", lambda f, m: _rule_sentence(f)),
    ("HealthScoredSentence", "questions the accuracy rests on", _scored_sentence),
    ("HealthRoundsSentence", "retrieval rounds of iterative RAG", lambda f, m: _rounds_sentence(f)),
)


def health_macros(frame: pl.DataFrame, min_n: int) -> list[tuple[str, str, str]]:
    """The section's sentences as (macro, LaTeX text, what); ``HealthOmitted`` names the parts
    the run could not count and why."""
    out = [(name, escape(write(frame, min_n)), what) for name, what, write in SENTENCES]
    gone = frame.filter(pl.col("measure") == "missing")["detail"].unique(maintain_order=True).to_list()
    omitted = f"Not counted: {'; '.join(gone)}." if gone else ""
    return [
        *out,
        ("HealthMinN", str(min_n), "the run's minimum number of questions"),
        ("HealthOmitted", escape(omitted), "parts of the run health not counted"),
    ]


def macros_tex(macros: list[tuple[str, str, str]], source: str = "notebooks/10_paper.ipynb") -> str:
    """``\\newcommand`` lines of ``paper/health_numbers.tex``."""
    return macro_file("declinecraft.paper.run_health", macros, source=source)


def _analysis_table(cfg: RunConfig, name: str) -> pl.DataFrame | None:
    """One of the analysis stage's CSV tables, or None when the stage did not write it."""
    path = catalogue.ANALYSIS_TABLE.path(cfg, name)
    return pl.read_csv(path, infer_schema_length=10_000) if path.is_file() else None


def write(cfg: RunConfig, paper_dir: Path, stage_dir: Path) -> dict[str, Any]:
    """Write the section's table, macros and full CSV; return the table's status row."""
    frame = view_health.whole(cfg)
    min_n = cfg.analysis.finding_n
    writer = paper_writer(paper_dir, stage_dir)
    writer.frame(catalogue.PAPER_RUN_HEALTH, frame)
    written = health_table.tables(frame, min_n)
    for name, tex in written.items():
        writer.text(catalogue.PAPER_TABLE, tex, name)
    long = health_table.MODELS_TABLE in written
    if not long:  # an earlier, longer run's appendix table
        (paper_dir / "tables" / catalogue.PAPER_TABLE.file(health_table.MODELS_TABLE)).unlink(missing_ok=True)
    tables = {name: _analysis_table(cfg, name) for name in ("judge_agreement", "leakage_model", "main_grid", "facts")}
    more = [
        (
            "HealthJudgeAgreeSentence",
            health_flags.judge_agreement_sentence(tables["judge_agreement"], cfg.analysis.min_judge_kappa),
            "the accuracy judges' agreement, with a warning below analysis.min_judge_kappa",
        ),
        (
            "HealthLeakSentence",
            health_flags.leakage_sentence(
                tables["leakage_model"],
                tables["main_grid"],
                tables["facts"],
                cutoff=cfg.corpus.cutoff,
                max_leakage=cfg.analysis.max_leakage,
            ),
            "models scoring higher on unanswerable than on answerable questions",
        ),
        ("HealthScopeSentence", health_flags.scope_sentence(cfg), "why a view ran on fewer models or questions"),
        ("HealthSelfJudgeSentence", health_flags.self_judge_sentence(cfg), "models under test that also judge"),
    ]
    macros = health_macros(frame, min_n) + [(m, escape(v), w) for m, v, w in more]
    if long:
        note = (
            f" With more than {health_table.BODY_ROWS} rows per model, each check is summed over its models or "
            "judges here, naming the one that fares worst; each one's counts are in "
            "Appendix~\\ref{app:run_health_models}."
        )
        macros.append(("HealthTableNote", note, "where the run health per model is, when the body sums it"))
    writer.text(catalogue.PAPER_HEALTH_NUMBERS_TEX, macros_tex(macros))
    return dict(kind="table", number=0, name="run_health", title="Run health", reason="")
