"""LaTeX macros of the view's numbers, and the words whose direction the numbers decide.

:func:`macros` reads ``09_evidence/`` and returns ``(name, value, description)`` triples; names
are letters only (TeX control words). Rates are means over the models (and thinking settings)
under the standard prompt P1 unless a description says otherwise; a number the run cannot supply
is "n/a". Numbers print through the paper's one formatter (:mod:`declinecraft.core.number_format`);
direction words (``EsbLFiveVsLFour``: "lower than", "higher than", "the same as") follow its tie
rule (the same when the two rates print alike), so the prose of the paper's section follows the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import polars as pl

from declinecraft.core import catalogue, number_format, small_n
from declinecraft.core.catalogue import Artifact
from declinecraft.core.number_format import fmt, is_missing

Macro = tuple[str, str, str]
_NAMES = {"L1": "LOne", "L2": "LTwo", "L3": "LThree", "L4": "LFour", "L5": "LFive", "T": "T"}


def _pct(value: float | None) -> str:
    """A rate as percent, with the percent sign (``12.5\\%``)."""
    text = fmt(value, "pct")
    return text if is_missing(value) else text + "\\%"


def _points(value: float | None) -> str:
    """The size of a change, in points (its direction is in the words)."""
    return fmt(None if value is None else abs(value), "pct")


def _read(folder: Path, table: Artifact) -> pl.DataFrame:
    """A table of the view, or an empty frame when it is missing or has no rows (its CSV header
    alone carries no column types)."""
    path = folder / table.name
    frame = pl.read_csv(path, infer_schema_length=None) if path.is_file() else pl.DataFrame()
    return frame if frame.height else pl.DataFrame()


def _mean(frame: pl.DataFrame, column: str, **where: str) -> float:
    if frame.is_empty() or column not in frame.columns:
        return float("nan")
    part = frame.filter(*[pl.col(k) == v for k, v in where.items()])[column].drop_nulls().drop_nans()
    return float(cast(float, part.mean())) if part.len() else float("nan")


def _extreme(frame: pl.DataFrame, column: str, fn: str, **where: str) -> float:
    if frame.is_empty() or column not in frame.columns:
        return float("nan")
    part = frame.filter(*[pl.col(k) == v for k, v in where.items()])[column].drop_nulls().drop_nans()
    return float(getattr(part, fn)()) if part.len() else float("nan")


#: Responses per question behind each rate of ``summary.csv`` (L1; L3, L4 and L5 in both
#: orders; L5 in both orders; L3-L4), to turn its response count into questions.
PER_QUESTION = {"accuracy": 1, "over_answer": 4, "wrong_answer": 2, "memory_accuracy": 2}


def _fewest(frame: pl.DataFrame, columns: tuple[str, ...], *, per: int = 1, **where: str) -> int | None:
    """The fewest questions behind a mean over models: the smallest of ``columns`` (the last one a
    response count, ``per`` responses a question) over the rows matching ``where`` (None when none)."""
    if frame.is_empty() or any(c not in frame.columns for c in columns):
        return None
    part = frame.filter(*[pl.col(k) == v for k, v in where.items()])
    if part.is_empty():
        return None
    counts = [pl.col(c) for c in columns[:-1]] + [pl.col(columns[-1]) // per]
    return int(cast(int, part.select(pl.min_horizontal(*counts)).to_series().min()))


def _stated(text: str, n: int | None, min_n: int) -> str:
    """``text`` as the paper may print it: ``\\dcsmall{text}{n}`` below the small-n threshold
    (:mod:`declinecraft.core.small_n`); n/a stays n/a."""
    if text == "n/a" or small_n.is_finding(n, min_n):
        return text
    return f"\\dcsmall{{{text}}}{{{small_n.counted(n, 'questions') if n is not None else 'n unknown'}}}"


#: The words of a comparison between rates below the small-n threshold.
SMALL_WORDS = {"EsbBoundaryWord": "goes", "EsbLFiveVsLFour": "beside its rate", "EsbTVsLThree": "beside its rate"}


def macros(folder: Path, *, min_n: int = small_n.threshold(0, 0.05)) -> list[Macro]:
    """Every macro of the evidence section from the CSVs and manifest in ``folder``.

    ``min_n`` is the small-n rule's threshold (:func:`declinecraft.core.small_n.threshold`): an
    abstention rate, accuracy, over-answer rate or B-ECE from fewer questions prints with its n and
    "not interpretable at this n", and the words comparing such rates state no direction."""
    folder = Path(folder)
    path = folder / catalogue.EVIDENCE_MANIFEST.name
    manifest = json.loads(path.read_text()) if path.is_file() else {}
    curve, summary = _read(folder, catalogue.EVIDENCE_CURVE), _read(folder, catalogue.EVIDENCE_SUMMARY)
    bias, effects = _read(folder, catalogue.EVIDENCE_POSITION_BIAS), _read(folder, catalogue.EVIDENCE_PROMPT_EFFECTS)
    agree, quality = _read(folder, catalogue.EVIDENCE_AGREEMENT), _read(folder, catalogue.EVIDENCE_QUALITY)
    problems = _read(folder, catalogue.EVIDENCE_PROBLEMS)
    sheet = _read(folder, catalogue.EVIDENCE_VALIDATION_SAMPLE)
    settings = manifest.get("settings", {})
    count = manifest.get("instances", {})
    sources = manifest.get("key_values", {})
    no_l5 = 0 if problems.is_empty() else problems.filter(pl.col("level") == "L5")["question_id"].n_unique()
    out: list[Macro] = [
        ("EsbAnswerable", str(manifest.get("answerable_built", 0)), "answerable questions given evidence levels"),
        ("EsbUnanswerable", str(manifest.get("unanswerable_built", 0)), "unanswerable questions in condition T"),
        ("EsbK", str(settings.get("k", "n/a")), "chunks of L2, L3 and T"),
        ("EsbDistractors", str(settings["k"] - 1) if "k" in settings else "n/a", "retrieved non-target chunks in L2"),
        ("EsbInstances", str(sum(count.values())), "evidence contexts (L5 counted once per order)"),
        ("EsbResponses", str(manifest.get("n_responses", 0)), "responses of the models under test"),
        ("EsbModels", str(len(settings.get("models", []))), "models under test"),
        ("EsbPrompts", str(len(settings.get("prompts", []))), "prompt strategies"),
        ("EsbValuesRule", str(sources.get("rule", 0)), "key values found by rule"),
        ("EsbValuesModel", str(sources.get("model", 0)), "key values proposed by the generator (checked)"),
        ("EsbNoLFive", str(no_l5), "answerable questions without L5 (no alterable value or a failed check)"),
        (
            "EsbQualityFailures",
            str(int(quality["n_failed"].sum()) if not quality.is_empty() else 0),
            "failed ESB 4.4 quality checks",
        ),
        (
            "EsbValidationItems",
            str(sheet.height),
            "responses on ESB 7.7's human-validation sheet (40 per level at most)",
        ),
        (
            "EsbPartialDropped",
            _quality(quality, "answer_sentence_cut", "L2", "n_failed"),
            "L2 not built: no sentence states the answer, or every sentence does",
        ),
        (
            "EsbPartialChecked",
            _quality(quality, "answer_absent", "L2", "n_checked"),
            "L2 contexts checked for the answer string",
        ),
        (
            "EsbPartialLeaks",
            _quality(quality, "answer_absent", "L2", "n_failed"),
            "L2 contexts in which a retrieved neighbour still states the answer string (kept)",
        ),
    ]
    rates = {lv: _mean(curve, "abstention", level=lv, prompt="P1") for lv in _NAMES}
    sizes = {lv: _fewest(curve, ("n",), level=lv, prompt="P1") for lv in _NAMES}
    # L5 is asked twice per question (gold first, then conflict first): its n counts both orders.
    sizes["L5"] = None if sizes["L5"] is None else sizes["L5"] // 2
    small = {lv for lv in _NAMES if not small_n.is_finding(sizes[lv], min_n)}
    out += [
        (f"EsbAbstain{_NAMES[lv]}", _stated(_pct(r), sizes[lv], min_n), f"abstention on {lv} (P1, mean over models)")
        for lv, r in rates.items()
    ]
    l5 = {"level": "L5", "prompt": "P1"}
    questions = _fewest(summary, ("n_questions",), prompt="P1")
    out += [
        ("EsbAbstainLFiveMin", _pct(_extreme(curve, "abstention", "min", **l5)), "lowest L5 abstention (P1)"),
        ("EsbAbstainLFiveMax", _pct(_extreme(curve, "abstention", "max", **l5)), "highest L5 abstention (P1)"),
        (
            "EsbBoundaryWord",
            number_format.compare(rates["L3"], rates["L2"], "pct", ("rises", "falls", "stays level")),
            "L2 to L3 (P1)",
        ),
        (
            "EsbLFiveVsLFour",
            number_format.compare(rates["L5"], rates["L4"], "pct", ("higher than", "lower than", "the same as")),
            "L5 abstention against L4 (P1): 'lower than' is ESB's conflict trap",
        ),
        (
            "EsbTVsLThree",
            number_format.compare(rates["T"], rates["L3"], "pct", ("higher than", "lower than", "the same as")),
            "T abstention against L3 (P1)",
        ),
    ]
    for name, column in (
        ("Accuracy", "accuracy"),
        ("OverAnswer", "over_answer"),
        ("WrongAnswer", "wrong_answer"),
        ("MemoryAccuracy", "memory_accuracy"),
    ):
        size = _fewest(summary, ("n_questions", f"n_{column}"), per=PER_QUESTION[column], prompt="P1")
        text = _stated(_pct(_mean(summary, column, prompt="P1")), size, min_n)
        scope = {"accuracy": "; L1 only, our L2 abstention-acceptable", "memory_accuracy": "; L3-L4 answers"}
        out.append((f"Esb{name}", text, f"{column} (P1, mean over models{scope.get(column, '')})"))
    out += [
        ("EsbOverAnswerMin", _pct(_extreme(summary, "over_answer", "min", prompt="P1")), "lowest over-answer (P1)"),
        ("EsbOverAnswerMax", _pct(_extreme(summary, "over_answer", "max", prompt="P1")), "highest over-answer (P1)"),
        (
            "EsbBECE",
            _stated(_pct(_mean(summary, "b_ece", prompt="P1")), questions, min_n),
            "B-ECE over L1 and L3-L5, our L2 abstention-acceptable (P1, mean over models)",
        ),
        (
            "EsbBECET",
            _stated(_pct(_mean(summary, "b_ece_t", prompt="P1")), questions, min_n),
            "B-ECE with T abstention-expected (P1)",
        ),
    ]
    pairs = {"EsbBoundaryWord": ("L3", "L2"), "EsbLFiveVsLFour": ("L5", "L4"), "EsbTVsLThree": ("T", "L3")}
    out = [
        (name, SMALL_WORDS[name], what)
        if name in pairs and value != "n/a" and small & set(pairs[name])
        else (name, value, what)
        for name, value, what in out
    ]
    out += _tests(bias, effects, agree)
    return out


def _quality(quality: pl.DataFrame, check: str, level: str, column: str) -> str:
    """One count of the quality table, as text ("0" when the check is not in it)."""
    if quality.is_empty():
        return "0"
    rows = quality.filter(pl.col("check") == check, pl.col("level") == level)
    return str(int(rows[column].sum()))


def _tests(bias: pl.DataFrame, effects: pl.DataFrame, agree: pl.DataFrame) -> list[Macro]:
    """Macros of the position-bias and prompt-effect tests and of the labellers' agreement."""
    tested = bias.filter(pl.col("n_pairs") > 0) if "n_pairs" in bias.columns else pl.DataFrame()
    n_sig = int((tested["abstain_p"] < 0.05).sum()) if not tested.is_empty() else 0
    diff = float("nan")
    if not tested.is_empty():
        diff = _extreme(tested.with_columns(pl.col("abstain_diff").abs()), "abstain_diff", "max")
    change = _mean(effects, "change", level="L5", prompt="P3")
    n_eff = effects.filter(pl.col("n_pairs") > 0) if "n_pairs" in effects.columns else pl.DataFrame()
    overall = agree.filter(pl.col("scope") == "all") if "scope" in agree.columns else pl.DataFrame()
    agreement = float(overall["agreement"][0]) if overall.height else None
    kappa = float(overall["kappa"][0]) if overall.height and overall["kappa"][0] is not None else None
    return [
        ("EsbPositionTests", str(tested.height), "model-prompt pairs with L5 in both orders"),
        ("EsbPositionSignificant", str(n_sig), "of them with an order effect on abstention (exact McNemar p<0.05)"),
        ("EsbPositionDiffMax", _points(diff), "largest order effect on L5 abstention, points"),
        (
            "EsbPromptThreeWord",
            number_format.compare(change, 0.0, "pts", ("raises", "lowers", "does not change")),
            "P3 against P1 on L5",
        ),
        ("EsbPromptThreeChangeLFive", _points(change), "mean change of L5 abstention from P1 to P3, points"),
        ("EsbPromptTests", str(n_eff.height), "prompt comparisons (model x level x P2/P3)"),
        (
            "EsbPromptSignificant",
            str(int(n_eff["significant"].sum()) if not n_eff.is_empty() else 0),
            "of them significant after Benjamini-Hochberg",
        ),
        ("EsbRuleAgreement", _pct(agreement), "response judge vs rule classifier, ESB classes"),
        ("EsbRuleKappa", fmt(kappa, "kappa"), "their Cohen's kappa"),
    ]
