"""The run-health table (Table H): one row per check and model or judge, a column per condition.

At the paper's size that table has hundreds of rows (24 models and their judges, each check): more
than a page holds. A run whose table would have more than :data:`BODY_ROWS` rows therefore prints a
summary in the body (:func:`summary_tex`: each check summed over its models or judges, with the one
that fares worst and its own counts) and the whole per-model table in the appendix as a table that
breaks across pages (:func:`models_tex`, ``paper/tables/run_health_models.tex``). A smaller run,
such as the default one, keeps the whole table in the body (:func:`health_tex`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from declinecraft.analysis import run_health
from declinecraft.core import small_n
from declinecraft.paper.latex import escape

#: The appendix table's name (``paper/tables/run_health_models.tex``), written only for a long table.
MODELS_TABLE = "run_health_models"
#: The most rows the body's table holds; a longer table is summed in the body, whole in the appendix.
BODY_ROWS = 40
#: Measures where more is better (a share that follows the protocol, questions scored): their
#: summary names the model or judge with the smallest share; the others the one with the largest.
HIGHER_BETTER = frozenset(
    {"accuracy_questions", "judge_check_agree", "protocol_decision", "protocol_confidence", "protocol_followed"}
)
#: Measures whose rows are split by ``detail`` (outcomes, rounds): the summary sums each detail.
BY_DETAIL = frozenset({"reflection_outcome", "further_rounds"})


#: Condition columns of the table, in order, with their headers.
CONDITIONS = {"no_rag": "No retrieval", "single": "Single-shot RAG", "iterative": "Iterative RAG", "": "All"}
#: Table rows: (measure, stage, label); the order is the table's.
ROWS: tuple[tuple[str, str, str], ...] = (
    ("verifier_no_answerable", run_health.VERIFY_STAGE, "Verifier's NO, answerable drafts (rejected)"),
    ("verifier_no_unanswerable", run_health.VERIFY_STAGE, "Verifier's NO, unanswerable drafts (kept)"),
    ("failed_calls", run_health.ANSWER_STAGE, "Failed calls, answering (incl.\\ reflections)"),
    ("truncated", run_health.ANSWER_STAGE, "Answers cut at the output budget"),
    ("exhausted", run_health.ANSWER_STAGE, "Answers that exhausted the budget (no answer left)"),
    ("reflection_unusable", run_health.ANSWER_STAGE, "Reflections without usable JSON"),
    ("reflection_outcome", run_health.ANSWER_STAGE, "Reflection outcomes"),
    ("further_rounds", run_health.ANSWER_STAGE, "Retrieval rounds after round 0"),
    ("accuracy_questions", run_health.ANALYSIS_STAGE, "Answerable questions scored"),
    ("failed_calls", run_health.JUDGE_STAGE, "Failed calls, judging"),
    ("label_unparsable", run_health.JUDGE_STAGE, "Labels unparsable after re-ask"),
    ("score_unparsable", run_health.JUDGE_STAGE, "Scores unparsable after re-ask"),
    ("label_rule_disagree", run_health.JUDGE_STAGE, "Labels unlike the phrase rule's"),
    ("judge_check_agree", run_health.JUDGE_STAGE, "Check-set items scored as labelled"),
    ("failed_calls", run_health.K2G_STAGE, "Failed calls, Know2Guess"),
    ("truncated", run_health.K2G_STAGE, "Know2Guess replies cut at the budget"),
    ("k2g_format_issues", run_health.K2G_STAGE, "Know2Guess replies with a format issue"),
    ("protocol_decision", run_health.K2G_STAGE, "Know2Guess replies with a readable decision"),
    ("protocol_confidence", run_health.K2G_STAGE, "Know2Guess replies stating a confidence"),
    ("protocol_followed", run_health.K2G_STAGE, "Know2Guess replies following the protocol"),
    ("failed_calls", run_health.EVIDENCE_STAGE, "Failed calls, evidence view"),
    ("truncated", run_health.EVIDENCE_STAGE, "Evidence answers cut at the budget"),
    ("esb_invalid", run_health.EVIDENCE_STAGE, "ESB invalid responses"),
    ("protocol_followed", run_health.EVIDENCE_STAGE, "Evidence answers following the protocol"),
)


def of(k: int, n: int) -> str:
    """A count with its n: "6 of 9"."""
    return f"{k} of {n}"


def _cell(measure: str, rows: list[dict[str, Any]], min_n: int) -> str:
    """The text of one table cell from the rows of one measure, model and condition."""
    if measure == "reflection_outcome":
        return "; ".join(
            f"{r['detail'].replace('_', ' ')}: {r['numerator']}" for r in sorted(rows, key=lambda r: r["detail"])
        )
    if measure == "further_rounds":
        return "; ".join(
            f"{r['detail']}: {of(r['numerator'], r['denominator'])}"
            for r in sorted(rows, key=lambda r: int(r["detail"]))
        )
    row = rows[0]
    text = of(row["numerator"], row["denominator"])
    if measure == "accuracy_questions":
        return small_n.stated(text, row["numerator"], min_n)
    if measure in ("label_unparsable", "score_unparsable"):
        return f"{text} ({row['reasked']} re-asked)"
    if measure == "k2g_format_issues" and row["detail"]:
        return f"{text} (most often {row['detail']})"
    return text


def _who(row: dict[str, Any], thinking: bool) -> str:
    return row["model"] + (f" (thinking {row['thinking']})" if thinking and row["thinking"] else "")


def with_reasks(frame: pl.DataFrame) -> pl.DataFrame:
    """The ``*_unparsable`` rows with the matching ``*_reasked`` count in a ``reasked`` column."""
    keys = ["stage", "model", "thinking", "condition", "detail"]
    asked = frame.filter(pl.col("measure").str.ends_with("_reasked")).select(
        *keys, pl.col("measure").str.replace("_reasked", "_unparsable"), reasked=pl.col("numerator")
    )
    return frame.join(asked, on=[*keys, "measure"], how="left", nulls_equal=True)


def _counted(frame: pl.DataFrame) -> pl.DataFrame:
    return with_reasks(frame.filter(pl.col("measure") != "missing"))


def _thinking(counted: pl.DataFrame) -> bool:
    """Whether the run has models under more than one thinking setting (rows then name it)."""
    return counted.filter(pl.col("thinking") != "")["thinking"].n_unique() > 1


def _parts(counted: pl.DataFrame) -> list[tuple[str, str, pl.DataFrame]]:
    """(measure, label, its rows) of each table row with counts, in :data:`ROWS`' order."""
    found = []
    for measure, stage, label in ROWS:
        part = counted.filter((pl.col("measure") == measure) & (pl.col("stage") == stage))
        if part.height:
            found.append((measure, label, part))
    return found


def model_rows(frame: pl.DataFrame, min_n: int) -> list[list[str]]:
    """The whole table's rows (LaTeX cells): check, model or judge, one cell per condition."""
    counted = _counted(frame)
    thinking = _thinking(counted)
    body = []
    for measure, label, part in _parts(counted):
        for model in part["model"].unique(maintain_order=True).to_list():
            mine = part.filter(pl.col("model") == model).to_dicts()
            cells = []
            for condition in CONDITIONS:
                here = [r for r in mine if r["condition"] == condition]
                cells.append(escape(_cell(measure, here, min_n)) if here else "")
            body.append([label, escape(_who(mine[0], thinking)), *cells])
    return body


def _summed(measure: str, rows: list[dict[str, Any]], min_n: int, thinking: bool) -> str:
    """One summary cell: the check's counts summed over models (per ``detail`` where it splits),
    and the model or judge that fares worst with its own counts."""
    if measure in BY_DETAIL:
        details: dict[str, dict[str, Any]] = {}
        for r in rows:
            d = details.setdefault(r["detail"], {"detail": r["detail"], "numerator": 0, "denominator": 0})
            d["numerator"] += r["numerator"]
            d["denominator"] += r["denominator"]
        return _cell(measure, list(details.values()), min_n)
    k, n = sum(r["numerator"] for r in rows), sum(r["denominator"] for r in rows)
    text = of(k, n)
    if measure in ("label_unparsable", "score_unparsable"):
        text += f" ({sum(r['reasked'] or 0 for r in rows)} re-asked)"
    share = lambda r: r["numerator"] / r["denominator"] if r["denominator"] else 0.0  # noqa: E731
    if measure in HIGHER_BETTER:
        worst, word = min(rows, key=share), "fewest"
    else:
        worst, word = max(rows, key=share), "most"
        if worst["numerator"] == 0:
            return text
    own = of(worst["numerator"], worst["denominator"])
    if measure == "accuracy_questions":
        own = small_n.stated(own, worst["numerator"], min_n)
    return f"{text}; {word}: {_who(worst, thinking)}, {own}" if len(rows) > 1 else text


def summary_rows(frame: pl.DataFrame, min_n: int) -> list[list[str]]:
    """The summary's rows (LaTeX cells): check, its rows in the whole table (a model and thinking
    setting, or a judge, each), one cell per condition."""
    counted = _counted(frame)
    thinking = _thinking(counted)
    body = []
    for measure, label, part in _parts(counted):
        cells = []
        for condition in CONDITIONS:
            here = part.filter(pl.col("condition") == condition).to_dicts()
            cells.append(escape(_summed(measure, here, min_n, thinking)) if here else "")
        who = part.select("model", "thinking").unique().height
        body.append([label, str(who), *cells])
    return body


def _tabular(body: list[list[str]], who: str, source: str) -> str:
    """A booktabs tabular of ``body`` under the header Check, ``who``, the conditions."""
    lines = [f"% Generated by {source} (declinecraft.paper.health_table) -- do not edit."]
    if not body:
        return "\n".join([*lines, "\\textit{No run-health counts: the answer and judge stages have not run.}", ""])
    spec = "ll" + ">{\\raggedright\\arraybackslash}p{0.17\\textwidth}" * 3 + "l"
    lines += [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(["Check", who, *CONDITIONS.values()]) + " \\\\",
        "\\midrule",
        *(" & ".join(row) + " \\\\" for row in body),
        "\\bottomrule",
        "\\end{tabular}",
        "",
    ]
    return "\n".join(lines)


def health_tex(frame: pl.DataFrame, min_n: int, source: str = "notebooks/10_paper.ipynb") -> str:
    """The whole table as a booktabs tabular: one row per check and model (or judge), a column per condition."""
    return _tabular(model_rows(frame, min_n), "Model or judge", source)


def summary_tex(frame: pl.DataFrame, min_n: int, source: str = "notebooks/10_paper.ipynb") -> str:
    """The body's table of a long run health: one row per check, summed over its models or judges."""
    return _tabular(summary_rows(frame, min_n), "Rows in RH.1", source)


def _longtable(body: list[list[str]], source: str) -> str:
    """``body`` as a ``longtable`` for the one-column appendix: it breaks across pages and repeats
    its header on each."""
    width = "p{0.24\\linewidth}p{0.2\\linewidth}" + ">{\\raggedright\\arraybackslash}p{0.12\\linewidth}" * 4
    header = " & ".join(["Check", "Model or judge", *CONDITIONS.values()]) + " \\\\"
    return "\n".join(
        [
            f"% Generated by {source} (declinecraft.paper.health_table) -- do not edit.",
            "\\begingroup\\footnotesize\\setlength{\\tabcolsep}{3pt}",
            f"\\begin{{longtable}}{{@{{}}{width}@{{}}}}",
            "\\toprule",
            header,
            "\\midrule",
            "\\endhead",
            "\\bottomrule",
            "\\endlastfoot",
            *(" & ".join(row) + " \\\\" for row in body),
            "\\end{longtable}",
            "\\endgroup",
            "",
        ]
    )


def models_tex(frame: pl.DataFrame, min_n: int, source: str = "notebooks/10_paper.ipynb") -> str:
    """The whole table as a ``longtable`` for the one-column appendix."""
    return _longtable(model_rows(frame, min_n), source)


def tables(frame: pl.DataFrame, min_n: int, source: str = "notebooks/10_paper.ipynb") -> dict[str, str]:
    """The run health's tables by name: ``run_health`` whole in the body; past :data:`BODY_ROWS`
    rows, ``run_health`` summed and :data:`MODELS_TABLE` whole for the appendix."""
    rows = model_rows(frame, min_n)
    if len(rows) <= BODY_ROWS:
        return {"run_health": _tabular(rows, "Model or judge", source)}
    return {"run_health": summary_tex(frame, min_n, source), MODELS_TABLE: _longtable(rows, source)}
