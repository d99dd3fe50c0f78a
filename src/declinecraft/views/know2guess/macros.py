"""The paper's numbers of the Know2Guess section, read from the stage's tables: ``macros(folder)``.

Each macro is (name, LaTeX value, what it is). Names are letters only (TeX control words, ``Kg``
for Know2Guess); how values print, and how a number the run cannot supply or one from too few
questions prints, is :mod:`declinecraft.views.know2guess.collector`'s. Text values (model ids,
probe words, prompt names) are plain text for the caller's LaTeX escaper.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import polars as pl

from declinecraft.core import catalogue, small_n
from declinecraft.core.catalogue import Artifact
from declinecraft.views.know2guess.collector import Collector, Macro
from declinecraft.views.know2guess.protocol import STANDARD

CONDITIONS = {"no_rag": "NoRag", "single": "Rag"}
#: How the text names the prompts.
PROMPT_NAMES = {
    "standard": "standard",
    "answer_only": "answer-only",
    "compact": "compact",
    "delimiter": "delimiter-heavy",
}
#: Know2Guess's own numbers the section compares with (the Know2Guess paper, §3.4-3.5, §4.3, §6.1-6.2):
#: name, value, format, what.
PUBLISHED: tuple[tuple[str, float, str, str], ...] = (
    ("KgPaperReliability", 0.5704, "pct", "best reliability (Qwen3.5-9B, standard prompt)"),
    ("KgPaperRLow", 0.5316, "pct", "best R_lambda at lambda=0.5"),
    ("KgPaperRHigh", 0.6022, "pct", "best R_lambda at lambda=1.5"),
    ("KgPaperAUROC", 0.9825, "num", "probe AUROC, Zone D against A-C"),
    ("KgPaperAUPRC", 0.9488, "num", "probe AUPRC"),
    ("KgPaperProbeAccuracy", 0.8926, "num", "probe accuracy at 0.5"),
    ("KgPaperProbeMacroF", 0.7816, "num", "probe macro-F1 at 0.5"),
    ("KgPaperProbeRecall", 0.4554, "num", "probe Zone-D recall at 0.5"),
    ("KgPaperProbeFPR", 0.0, "num", "probe A-C false-positive rate at 0.5"),
    ("KgPaperLengthKS", 0.3406, "num", "length KS statistic, Zone D against A-C (§3.4)"),
    (
        "KgPaperSharpness",
        -0.3014,
        "pts",
        "Llama-3-8B's Zone D reliability minus its pooled A-C accuracy, like ours (0.1127 - 0.4141, §6.1)",
    ),
    ("KgPaperSharpnessZoneC", -0.2910, "pts", "Llama-3-8B's boundary sharpness, Zone D minus Zone C (§6.2)"),
    ("KgPaperMaxTokens", 160, "int", "output budget of its larger models (§5.3; 128 for the smallest)"),
    ("KgPaperResamples", 10000, "int", "item-bootstrap resamples (§4.3)"),
    ("KgPaperSeed", 20260820, "text", "seed of its probe and bootstrap (§3.5, §4.3)"),
)


def _read(folder: Path, table: Artifact) -> pl.DataFrame:
    path = folder / table.name
    return pl.read_csv(path, infer_schema_length=None) if path.is_file() else pl.DataFrame()


def _headline(frame: pl.DataFrame) -> pl.DataFrame:
    if not frame.height:
        return frame
    return frame.filter(pl.col("prompt") == STANDARD, pl.col("parser") == "strict")


def _best(summary: pl.DataFrame, condition: str) -> dict[str, Any]:
    rows = _headline(summary).filter(pl.col("condition") == condition).drop_nulls("reliability")
    return rows.sort(["reliability", "model", "thinking"], descending=[True, False, False]).row(0, named=True)


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _cell(row: Callable[[], dict[str, Any]], column: str) -> Any:
    return row()[column]


def _questions(rows: pl.DataFrame) -> int:
    """The fewest questions any of ``rows`` (summary rows) is scored on: a mean or a best over
    configurations is no firmer than its thinnest one."""
    return int(cast(int, (rows["n_answerable"] + rows["n_unanswerable"]).min()))


#: What the ranking across lambda says when the numbers behind it are below the small-n rule.
RANKS_AT_THIS_N = "is not interpretable at this n"


def _ranks(cost: pl.DataFrame, condition: str) -> str:
    """Whether the ranking of configurations across lambda 'stays the same' or 'changes'."""
    ranks = _headline(cost).filter(pl.col("condition") == condition).group_by("model", "thinking")
    return "stays the same" if ranks.agg(pl.col("rank").n_unique()).get_column("rank").max() == 1 else "changes"


def macros(result_dir: Path, *, min_n: int = small_n.threshold(0, 0.05), alpha: float = 0.05) -> list[Macro]:
    """Every macro of the section from ``08_know2guess/`` (a folder without tables gives n/a values).

    ``min_n`` is the small-n rule's threshold (:func:`declinecraft.core.small_n.threshold` of the
    run's ``analysis.min_n``): a rate, ECE, AUROC, agreement or shift from fewer questions prints
    with its n and "not interpretable at this n", and the words chosen from it say so. A direction
    word is "higher" or "lower" only for a tested difference with p < ``alpha``."""
    folder = Path(result_dir)
    summary, cost = _read(folder, catalogue.K2G_SUMMARY), _read(folder, catalogue.K2G_COST_SENSITIVE)
    parser, prompt = _read(folder, catalogue.K2G_PARSER_SENSITIVITY), _read(folder, catalogue.K2G_PROMPT_SENSITIVITY)
    probe, features, cross = (
        _read(folder, catalogue.K2G_SEPARABILITY),
        _read(folder, catalogue.K2G_SEPARABILITY_FEATURES),
        _read(folder, catalogue.K2G_CROSS_PROTOCOL),
    )
    path = folder / catalogue.K2G_MANIFEST.name
    manifest = json.loads(path.read_text()) if path.is_file() else {}
    c = Collector(min_n)
    for name, value, kind, what in PUBLISHED:
        c.add(name, f"Know2Guess's published {what}", _constant(value), kind)
    c.add("KgQuestions", "questions asked", lambda: manifest["questions"], "int")
    c.add("KgAnswerable", "answerable questions asked", lambda: manifest["answerable"], "int")
    c.add(
        "KgUnanswerable", "unanswerable questions asked", lambda: manifest["questions"] - manifest["answerable"], "int"
    )
    c.add("KgDecisionCalls", "decision calls", lambda: manifest["decision_calls"], "int")
    c.add("KgProbeSeed", "the run's seed, which draws the probe's split", lambda: manifest["seed"], "text")
    c.add(
        "KgConfigs",
        "configurations (model x thinking)",
        lambda: summary.select("model", "thinking").unique().height,
        "int",
    )
    head = _headline(summary)
    for condition, tag in CONDITIONS.items():
        _best_configuration(c, summary, condition, tag)
        _condition_means(c, head, cost, condition, tag)
    _rag_effects(c, head)
    c.add(
        "KgConfidenceNote",
        "how varied the stated confidences of answered replies are (ECE's raw material)",
        lambda: confidence_note(_read(folder, catalogue.K2G_DECISIONS)),
        "text",
    )
    _sensitivity(c, parser, prompt, alpha)
    _probe(c, probe, features)
    _cross(c, cross)
    return c.out


def _best_configuration(c: Collector, summary: pl.DataFrame, condition: str, tag: str) -> None:
    """The most reliable configuration of one condition (standard prompt) and its measures."""

    def best() -> dict[str, Any]:
        return _best(summary, condition)

    def questions() -> Any:
        return best()["n_answerable"] + best()["n_unanswerable"]

    c.add(
        f"KgBest{tag}Model",
        f"{condition}: most reliable configuration, standard prompt",
        lambda: best()["model"],
        "text",
    )
    for column, what, kind in (
        ("reliability", "its reliability", "pct"),
        ("reliability_low", "its reliability, lower bound", "pct"),
        ("reliability_high", "its reliability, upper bound", "pct"),
        ("answerable_accuracy", "its answerable accuracy", "pct"),
        ("productive_abstention", "its productive abstention", "pct"),
        ("unnecessary_abstention", "its unnecessary abstention", "pct"),
        ("refusal_rate", "its refusal rate", "pct"),
        ("parse_error_rate", "its parse-error rate", "pct"),
        ("coverage", "its coverage", "pct"),
        ("answered_accuracy", "its answered accuracy", "pct"),
        ("ece", "its answered-item ECE", "num"),
        ("hallucination_rate", "its hallucination rate among answered items", "pct"),
        ("boundary_sharpness", "its boundary sharpness (unanswerable minus answerable reliability)", "pts"),
    ):
        name = "".join(p.capitalize() if p not in ("ece",) else "ECE" for p in column.split("_"))
        # Interval bounds print as they are; the point value carries the caveat.
        size: Callable[[], Any] | None = questions
        unit = "questions"
        if column in ("ece", "hallucination_rate"):
            size, unit = functools.partial(_cell, best, "n_answer"), "questions answered"
        elif column.endswith(("_low", "_high")):
            size = None
        c.add(
            f"KgBest{tag}{name}",
            f"{condition}: {what}",
            functools.partial(_cell, best, column),
            kind,
            n=size,
            unit=unit,
        )


def _condition_means(c: Collector, head: pl.DataFrame, cost: pl.DataFrame, condition: str, tag: str) -> None:
    """One condition over configurations: mean reliability, best R_lambda, whether the ranking holds."""

    def questions() -> int:
        return _questions(head.filter(pl.col("condition") == condition))

    def best_r(lam: float) -> Any:
        return _headline(cost).filter(pl.col("condition") == condition, pl.col("lam") == lam)["reliability"].max()

    c.add(
        f"KgMean{tag}Reliability",
        f"{condition}: mean reliability over configurations",
        lambda: head.filter(pl.col("condition") == condition)["reliability"].mean(),
        n=questions,
    )
    for lam, word in ((0.5, "Low"), (1.5, "High")):
        c.add(
            f"KgBest{tag}R{word}",
            f"{condition}: best R_lambda at lambda={lam}",
            functools.partial(best_r, lam),
            n=questions,
        )
    c.add(
        f"KgLambda{tag}Ranks",
        f"{condition}: the ranking across lambda ('stays the same' or 'changes')",
        lambda: _ranks(cost, condition) if small_n.is_finding(questions(), c.min_n) else RANKS_AT_THIS_N,
        "text",
    )


#: Share of answered replies stating one and the same confidence above which ECE can say little.
ONE_VALUE_SHARE = 0.8


def confidence_note(decisions: pl.DataFrame) -> str:
    """A sentence on the confidences answered replies state (standard prompt, strict parser): how
    many, how many distinct values, the commonest value's share, and, when one value covers more
    than :data:`ONE_VALUE_SHARE`, that ECE can then say little; '' without answered replies."""
    if not decisions.height or "confidence" not in decisions.columns:
        return ""
    said = _headline(decisions).filter(pl.col("state") == "ANSWER").drop_nulls("confidence")["confidence"]
    if said.len() == 0:
        return ""
    counts = said.value_counts(sort=True)
    top, k = counts.row(0)
    share = k / said.len()
    replies = "1 answered reply states" if said.len() == 1 else f"{said.len()} answered replies state"
    values = "1 distinct value" if counts.height == 1 else f"{counts.height} distinct values"
    note = (
        f" The {replies} confidences of {values}; "
        f"{k} of them ({100 * share:.0f}%) state a confidence of {100 * top:.0f} (of 100)."
    )
    if share > ONE_VALUE_SHARE:
        note += (
            " With nearly every reply at one value, the ECE measures that value's distance from accuracy, "
            "not calibration."
        )
    return note


def _rag_effects(c: Collector, head: pl.DataFrame) -> None:
    """Mean paired shift (single-shot RAG minus no retrieval) of reliability and productive abstention."""
    for column, tag in (("reliability", "Reliability"), ("productive_abstention", "Productive")):

        def shift(col: str = column) -> float:
            """Mean over configurations of the RAG value minus the no-retrieval value."""
            wide = head.pivot(on="condition", index=["model", "thinking"], values=col, aggregate_function="first")
            return float(cast(float, (wide["single"] - wide["no_rag"]).mean()))

        name = f"KgRag{tag}Shift"
        value = c.add(name, f"mean shift of {column} with retrieval (points)", shift, "pts", n=lambda: _questions(head))
        c.add(
            f"KgRag{tag}Direction",
            f"{column} with retrieval is higher/lower/the same",
            functools.partial(c.direction, name, value),
            "text",
        )


def _sensitivity(c: Collector, parser: pl.DataFrame, prompt: pl.DataFrame, alpha: float) -> None:
    rel = parser.filter(pl.col("metric") == "reliability") if parser.height else parser
    c.add("KgParserRuns", "runs compared under both parsers", lambda: rel.height if rel.height else None, "int")
    c.add(
        "KgParserIdentical",
        "runs whose reliability is identical under both parsers",
        lambda: int((rel["difference"].abs() < 1e-12).sum()),
        "int",
    )
    c.add(
        "KgParserMaxShift",
        "largest reliability shift, normalized minus strict (points)",
        lambda: rel.sort(pl.col("difference").abs(), descending=True)["difference"][0],
        "pts",
        n=lambda: rel.sort(pl.col("difference").abs(), descending=True)["n_pairs"][0],
    )
    c.add(
        "KgParserStateChanges",
        "items whose state differs between parsers (all runs)",
        lambda: int(rel["n_state_changed"].sum()),
        "int",
    )
    means = (
        prompt.filter(pl.col("metric") == "reliability", pl.col("parser") == "strict")
        .group_by("prompt")
        .agg(pl.col("difference").mean())
        if prompt.height
        else prompt
    )

    def top() -> dict[str, Any]:
        return means.sort(pl.col("difference").abs(), descending=True).row(0, named=True)

    c.add(
        "KgPromptLargest",
        "control prompt with the largest mean reliability shift",
        lambda: PROMPT_NAMES.get(top()["prompt"], top()["prompt"]),
        "text",
    )

    def top_pairs() -> pl.DataFrame:
        return prompt.filter(
            pl.col("metric") == "reliability", pl.col("parser") == "strict", pl.col("prompt") == top()["prompt"]
        )

    def paired() -> Any:
        return top_pairs()["n_pairs"].min()

    def smallest_p() -> float | None:
        found = top_pairs()["p"].drop_nulls()
        return float(cast(float, found.min())) if found.len() else None

    value = c.add(
        "KgPromptLargestShift",
        "its mean reliability shift against the standard prompt (points)",
        lambda: top()["difference"],
        "pts",
        n=paired,
    )
    c.add(
        "KgPromptLargestDirection",
        "its reliability is higher/lower/the same",
        lambda: c.direction("KgPromptLargestShift", value, p=smallest_p(), alpha=alpha),
        "text",
    )
    c.add(
        "KgPromptLargestP",
        "the smallest paired bootstrap p of its per-configuration reliability shifts",
        lambda: top_pairs()["p"].min(),
        "num",
        n=paired,
    )


def _probe(c: Collector, probe: pl.DataFrame, features: pl.DataFrame) -> None:
    for text, tag in (("question", ""), ("asked_question", "Asked")):
        _probe_text(c, probe, text, tag)
    c.add(
        "KgProbeWords",
        "the probe's three most unanswerable-weighted words",
        lambda: (
            ", ".join(
                features.filter(pl.col("text") == "question", pl.col("half") == "unanswerable")
                .sort("rank")["feature"]
                .head(3)
                .to_list()
            )
            or None
        ),
        "text",
    )


def _probe_text(c: Collector, probe: pl.DataFrame, text: str, tag: str) -> None:
    """The separability probe's scores and the length check on one text (the question, or as asked)."""

    def row() -> dict[str, Any]:
        return probe.filter(pl.col("text") == text).row(0, named=True)

    # Scored once on the test split: an AUC ranks pairs across halves, so the smaller test half
    # bounds it; recall rests on the unanswerable test items, the FPR on the answerable ones.
    def size() -> Any:
        return min(row()["n_test_answerable"], row()["n_test_unanswerable"])

    def halves() -> Any:
        return min(row()["n_answerable"], row()["n_unanswerable"])

    half = "test questions in the smaller half"
    scores: tuple[tuple[str, str, str, Callable[[], Any], str], ...] = (
        ("auroc", "AUROC", "AUROC", size, half),
        ("auprc", "AUPRC", "AUPRC, unanswerable positive", size, half),
        ("accuracy", "Accuracy", "accuracy at 0.5", lambda: row()["n_test"], "test questions"),
        ("macro_f1", "MacroF", "macro-F1 at 0.5", size, half),
        (
            "recall_unanswerable",
            "Recall",
            "unanswerable recall at 0.5",
            lambda: row()["n_test_unanswerable"],
            "unanswerable test questions",
        ),
        (
            "false_positive_rate",
            "FPR",
            "false-positive rate (answerable flagged) at 0.5",
            lambda: row()["n_test_answerable"],
            "answerable test questions",
        ),
    )
    for column, name, what, n, unit in scores:
        c.add(
            f"KgProbe{tag}{name}",
            f"K2G probe {what} ({text})",
            functools.partial(_cell, row, column),
            "num",
            n=n,
            unit=unit,
        )
    c.add(
        f"KgProbe{tag}Chance",
        f"AUPRC at chance: the test split's unanswerable share ({text})",
        lambda: row()["auprc_chance"],
        "num",
    )
    c.add(
        f"KgLength{tag}Answerable",
        f"mean whitespace tokens, answerable half ({text})",
        lambda: row()["tokens_answerable"],
        "num",
    )
    c.add(
        f"KgLength{tag}Unanswerable",
        f"mean whitespace tokens, unanswerable half ({text})",
        lambda: row()["tokens_unanswerable"],
        "num",
    )
    c.add(
        f"KgLength{tag}KS",
        f"KS statistic between the halves' token counts ({text})",
        lambda: row()["ks_statistic"],
        "num",
        n=halves,
        unit="questions in the smaller half",
    )
    c.add(
        f"KgLength{tag}P",
        f"its two-sided p ({text})",
        lambda: row()["ks_p"],
        "num",
        n=halves,
        unit="questions in the smaller half",
    )
    c.add(f"KgProbe{tag}Dev", f"development questions the probe is fit on ({text})", lambda: row()["n_dev"], "int")
    c.add(f"KgProbe{tag}Test", f"test questions it is scored on ({text})", lambda: row()["n_test"], "int")


def _cross(c: Collector, cross: pl.DataFrame) -> None:
    for condition, tag in CONDITIONS.items():
        _cross_condition(c, cross, condition, tag)


def _cross_condition(c: Collector, cross: pl.DataFrame, condition: str, tag: str) -> None:
    """Know2Guess's declared decisions against our judge's labels under one condition."""

    def row() -> dict[str, Any]:
        return cross.filter(
            pl.col("model") == "all", pl.col("prompt") == STANDARD, pl.col("condition") == condition
        ).row(0, named=True)

    values: dict[str, Any] = {}
    for column, name, what, kind in (
        ("n_pairs", "Pairs", "items with both a K2G decision and a judge label", "int"),
        ("agreement_abstain", "Agree", "agreement, K2G ABSTAIN vs judge ABSTAIN", "pct"),
        ("kappa_abstain", "Kappa", "Cohen's kappa, K2G ABSTAIN vs judge ABSTAIN", "num"),
        ("agreement_decline", "AgreeDecline", "agreement, K2G ABSTAIN vs judge ABSTAIN or DENY", "pct"),
        ("kappa_decline", "KappaDecline", "Cohen's kappa, K2G ABSTAIN vs judge ABSTAIN or DENY", "num"),
        ("car_k2g", "CarKtg", "CAR when the model declares its decision (K2G)", "pct"),
        ("car_judge", "CarJudge", "CAR from our response judge", "pct"),
        ("car_shift", "CarShift", "K2G CAR minus judged CAR (points)", "pts"),
        ("car_shift_low", "CarShiftLow", "its lower bound (points)", "pts"),
        ("car_shift_high", "CarShiftHigh", "its upper bound (points)", "pts"),
    ):
        # Agreement and kappa rest on every paired item; CAR and its shift on the unanswerable ones.
        count = "n_pairs" if column.startswith(("agreement", "kappa")) else "n_unanswerable_pairs"
        size = (
            None if column in ("n_pairs", "car_shift_low", "car_shift_high") else functools.partial(_cell, row, count)
        )
        values[column] = c.add(
            f"KgX{name}{tag}",
            f"{condition}, standard prompt, all configurations: {what}",
            functools.partial(_cell, row, column),
            kind,
            n=size,
            unit="pairs",
        )
    c.add(
        f"KgXCarDirection{tag}",
        f"{condition}: declared CAR is higher/lower/the same than judged",
        functools.partial(c.direction, f"KgXCarShift{tag}", values["car_shift"]),
        "text",
    )
