"""The paper's numbers of the Know2Guess section, read from the stage's tables: ``macros(folder)``.

Each macro is (name, LaTeX value, what it is). Names are letters only (TeX control words, ``Kg``
for Know2Guess); proportions print as percent with one decimal (the text adds ``\\%``), shifts
as signed points, κ, AUROC and ECE with two decimals. A number the run cannot supply prints
``n/a`` and says why. Direction words ("higher", "lower", "the same") are chosen from the same
numbers, at the precision they print, so the prose follows the data. Text values (model ids,
probe words, prompt names) are plain text for the caller's LaTeX escaper.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import small_n
from declinecraft.views.know2guess.protocol import STANDARD

Macro = tuple[str, str, str]
CONDITIONS = {"no_rag": "NoRag", "single": "Rag"}
#: How the text names the prompts.
PROMPT_NAMES = {
    "standard": "standard",
    "answer_only": "answer-only",
    "compact": "compact",
    "delimiter": "delimiter-heavy",
}
#: Know2Guess's own numbers the section compares with (the Know2Guess paper, §3.5, §6.1, §6.9): name, value, format, what.
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
    ("KgPaperSharpness", -0.2910, "pts", "Llama-3-8B's boundary sharpness (§6.2)"),
    ("KgPaperMaxTokens", 160, "int", "output budget of its larger models (§5.3; 128 for the smallest)"),
    ("KgPaperResamples", 10000, "int", "item-bootstrap resamples (§4.3)"),
)
#: Half a printed unit: shifts smaller than this print as 0.0 points and read "the same".
TOLERANCE = 0.0005


def direction(difference: float | None, tolerance: float = TOLERANCE) -> str:
    """'higher', 'lower' or 'the same' for a difference (NaN or None: 'not comparable')."""
    if difference is None or math.isnan(difference):
        return "not comparable"
    return "higher" if difference >= tolerance else "lower" if difference <= -tolerance else "the same"


def fmt(value: Any, kind: str) -> str:
    """Print a value: ``pct`` (percent, one decimal), ``pts`` (signed points), ``num`` (two decimals),
    ``int``, or ``text``; None and NaN print ``n/a``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if kind == "text":
        return str(value)
    v = float(value)
    text = {"pct": f"{100 * v:.1f}", "pts": f"{100 * v:+.1f}", "num": f"{v:.2f}", "int": f"{round(v):,}"}[kind]
    return text.replace("-", "\\textminus ").replace(",", "{,}")


def _read(folder: Path, name: str) -> pl.DataFrame:
    path = folder / f"know2guess_{name}.csv"
    return pl.read_csv(path, infer_schema_length=None) if path.is_file() else pl.DataFrame()


def _headline(frame: pl.DataFrame) -> pl.DataFrame:
    if not frame.height:
        return frame
    return frame.filter(pl.col("prompt") == STANDARD, pl.col("parser") == "strict")


_ERRORS = (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError, pl.exceptions.PolarsError)


class _Collector:
    """Macros in order; a getter that fails or finds nothing gives n/a with the reason. A number
    whose n is below ``min_n`` (the small-n rule, :mod:`declinecraft.core.small_n`) prints as
    ``\\dcsmall{value}{n}`` and counts as n/a for the words chosen from it."""

    def __init__(self, min_n: int) -> None:
        self.out: list[Macro] = []
        self.min_n = min_n
        self.small: set[str] = set()

    def is_small(self, name: str) -> bool:
        """Whether macro ``name`` was printed below the small-n threshold."""
        return name in self.small

    def add(
        self,
        name: str,
        what: str,
        get: Callable[[], Any],
        kind: str = "pct",
        *,
        n: Callable[[], Any] | None = None,
        unit: str = "questions",
    ) -> Any:
        """Record one macro from ``get()``; return its value, or None when it is n/a or (with ``n``,
        the count it rests on) below the small-n threshold."""
        try:
            value = get()
            reason = "" if value is not None and not (isinstance(value, float) and math.isnan(value)) else "undefined"
        except _ERRORS as exc:
            value, reason = None, f"not in this run ({type(exc).__name__})"
        text = fmt(value, kind)
        if n is not None and not reason:
            try:
                size = n()
            except _ERRORS:
                size = None
            if not small_n.is_finding(size, self.min_n):
                count = small_n.counted(int(size), unit) if size is not None else "n unknown"
                self.small.add(name)
                self.out.append((name, f"\\dcsmall{{{text}}}{{{count}}}", f"{what} ({small_n.caveat(size, unit)})"))
                return None
        self.out.append((name, text, what + (f" (n/a: {reason})" if reason else "")))
        return None if reason else value


def _best(summary: pl.DataFrame, condition: str) -> dict[str, Any]:
    rows = _headline(summary).filter(pl.col("condition") == condition).drop_nulls("reliability")
    return rows.sort(["reliability", "model", "thinking"], descending=[True, False, False]).row(0, named=True)


def _questions(rows: pl.DataFrame) -> int:
    """The fewest questions any of ``rows`` (summary rows) is scored on: a mean or a best over
    configurations is no firmer than its thinnest one."""
    return int((rows["n_answerable"] + rows["n_unanswerable"]).min())  # type: ignore[arg-type]


#: What a direction word, and the ranking across lambda, say when the numbers behind them are
#: below the small-n rule.
NOT_AT_THIS_N = "not comparable at this n"
RANKS_AT_THIS_N = "is not interpretable at this n"


def _ranks(cost: pl.DataFrame, condition: str) -> str:
    """Whether the ranking of configurations across lambda 'stays the same' or 'changes'."""
    ranks = _headline(cost).filter(pl.col("condition") == condition).group_by("model", "thinking")
    return "stays the same" if ranks.agg(pl.col("rank").n_unique()).get_column("rank").max() == 1 else "changes"


def macros(result_dir: Path, *, min_n: int = small_n.threshold(0, 0.05)) -> list[Macro]:
    """Every macro of the section from ``09_know2guess/`` (a folder without tables gives n/a values).

    ``min_n`` is the small-n rule's threshold (:func:`declinecraft.core.small_n.threshold` of the
    run's ``analysis.min_n``): a rate, ECE, AUROC, agreement or shift from fewer questions prints
    with its n and "not interpretable at this n", and the words chosen from it say so."""
    folder = Path(result_dir)
    summary, cost = _read(folder, "summary"), _read(folder, "cost_sensitive")
    parser, prompt = _read(folder, "parser_sensitivity"), _read(folder, "prompt_sensitivity")
    probe, features, cross = (
        _read(folder, "separability"),
        _read(folder, "separability_features"),
        _read(folder, "cross_protocol"),
    )
    manifest = json.loads((folder / "manifest.json").read_text()) if (folder / "manifest.json").is_file() else {}
    c = _Collector(min_n)
    for name, value, kind, what in PUBLISHED:
        c.add(name, f"Know2Guess's published {what}", lambda v=value: v, kind)
    c.add("KgQuestions", "questions asked", lambda: manifest["questions"], "int")
    c.add("KgAnswerable", "answerable questions asked", lambda: manifest["answerable"], "int")
    c.add(
        "KgUnanswerable", "unanswerable questions asked", lambda: manifest["questions"] - manifest["answerable"], "int"
    )
    c.add("KgDecisionCalls", "decision calls", lambda: manifest["decision_calls"], "int")
    c.add(
        "KgConfigs",
        "configurations (model x thinking)",
        lambda: summary.select("model", "thinking").unique().height,
        "int",
    )
    head = _headline(summary)
    for condition, tag in CONDITIONS.items():
        best = lambda cond=condition: _best(summary, cond)
        c.add(
            f"KgBest{tag}Model",
            f"{condition}: most reliable configuration, standard prompt",
            lambda b=best: b()["model"],
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
            size: Callable[[], Any] | None = lambda b=best: b()["n_answerable"] + b()["n_unanswerable"]
            unit = "questions"
            if column in ("ece", "hallucination_rate"):
                size, unit = (lambda b=best: b()["n_answer"]), "questions answered"
            elif column.endswith(("_low", "_high")):
                size = None
            c.add(
                f"KgBest{tag}{name}",
                f"{condition}: {what}",
                lambda b=best, col=column: b()[col],
                kind,
                n=size,
                unit=unit,
            )
        rows = lambda cond=condition: head.filter(pl.col("condition") == cond)
        c.add(
            f"KgMean{tag}Reliability",
            f"{condition}: mean reliability over configurations",
            lambda r=rows: r()["reliability"].mean(),
            n=lambda r=rows: _questions(r()),
        )
        for lam, word in ((0.5, "Low"), (1.5, "High")):
            c.add(
                f"KgBest{tag}R{word}",
                f"{condition}: best R_lambda at lambda={lam}",
                lambda cond=condition, lam=lam: (
                    _headline(cost).filter(pl.col("condition") == cond, pl.col("lam") == lam)["reliability"].max()
                ),
                n=lambda r=rows: _questions(r()),
            )
        small = lambda r=rows: not small_n.is_finding(_questions(r()), min_n)
        c.add(
            f"KgLambda{tag}Ranks",
            f"{condition}: the ranking across lambda ('stays the same' or 'changes')",
            lambda cond=condition, sm=small: RANKS_AT_THIS_N if sm() else _ranks(cost, cond),
            "text",
        )
    _rag_effects(c, head)
    c.add(
        "KgConfidenceNote",
        "how varied the stated confidences of answered replies are (ECE's raw material)",
        lambda: confidence_note(_read(folder, "decisions")),
        "text",
    )
    _sensitivity(c, parser, prompt)
    _probe(c, probe, features)
    _cross(c, cross)
    return c.out


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
        note += " With nearly every reply at one value, the ECE measures that value's distance from accuracy, not calibration."
    return note


def _rag_effects(c: _Collector, head: pl.DataFrame) -> None:
    """Mean paired shift (single-shot RAG minus no retrieval) of reliability and productive abstention."""
    for column, tag in (("reliability", "Reliability"), ("productive_abstention", "Productive")):

        def shift(col: str = column) -> float:
            """Mean over configurations of the RAG value minus the no-retrieval value."""
            wide = head.pivot(on="condition", index=["model", "thinking"], values=col, aggregate_function="first")
            return float((wide["single"] - wide["no_rag"]).mean())  # type: ignore[arg-type]

        name = f"KgRag{tag}Shift"
        value = c.add(name, f"mean shift of {column} with retrieval (points)", shift, "pts", n=lambda: _questions(head))
        c.add(
            f"KgRag{tag}Direction",
            f"{column} with retrieval is higher/lower/the same",
            lambda v=value, m=name: NOT_AT_THIS_N if c.is_small(m) else None if v is None else direction(v),
            "text",
        )


def _sensitivity(c: _Collector, parser: pl.DataFrame, prompt: pl.DataFrame) -> None:
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
    top = lambda: means.sort(pl.col("difference").abs(), descending=True).row(0, named=True)
    c.add(
        "KgPromptLargest",
        "control prompt with the largest mean reliability shift",
        lambda: PROMPT_NAMES.get(top()["prompt"], top()["prompt"]),
        "text",
    )
    paired = lambda: prompt.filter(
        pl.col("metric") == "reliability", pl.col("parser") == "strict", pl.col("prompt") == top()["prompt"]
    )["n_pairs"].min()
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
        lambda: NOT_AT_THIS_N if c.is_small("KgPromptLargestShift") else None if value is None else direction(value),
        "text",
    )
    c.add(
        "KgPromptLargestP",
        "the smallest paired bootstrap p of its per-configuration reliability shifts",
        lambda: prompt.filter(
            pl.col("metric") == "reliability", pl.col("parser") == "strict", pl.col("prompt") == top()["prompt"]
        )["p"].min(),
        "num",
        n=paired,
    )


def _probe(c: _Collector, probe: pl.DataFrame, features: pl.DataFrame) -> None:
    for text, tag in (("question", ""), ("asked_question", "Asked")):
        row = lambda t=text: probe.filter(pl.col("text") == t).row(0, named=True)
        # Scored once on the test split: an AUC ranks pairs across halves, so the smaller test half
        # bounds it; recall rests on the unanswerable test items, the FPR on the answerable ones.
        size = lambda r=row: min(r()["n_test_answerable"], r()["n_test_unanswerable"])
        half = "test questions in the smaller half"
        for column, name, what, n, unit in (
            ("auroc", "AUROC", "AUROC", size, half),
            ("auprc", "AUPRC", "AUPRC, unanswerable positive", size, half),
            ("accuracy", "Accuracy", "accuracy at 0.5", lambda r=row: r()["n_test"], "test questions"),
            ("macro_f1", "MacroF", "macro-F1 at 0.5", size, half),
            (
                "recall_unanswerable",
                "Recall",
                "unanswerable recall at 0.5",
                lambda r=row: r()["n_test_unanswerable"],
                "unanswerable test questions",
            ),
            (
                "false_positive_rate",
                "FPR",
                "false-positive rate (answerable flagged) at 0.5",
                lambda r=row: r()["n_test_answerable"],
                "answerable test questions",
            ),
        ):
            c.add(
                f"KgProbe{tag}{name}",
                f"K2G probe {what} ({text})",
                lambda r=row, col=column: r()[col],
                "num",
                n=n,
                unit=unit,
            )
        c.add(
            f"KgProbe{tag}Chance",
            f"AUPRC at chance: the test split's unanswerable share ({text})",
            lambda r=row: r()["auprc_chance"],
            "num",
        )
        c.add(
            f"KgLength{tag}Answerable",
            f"mean whitespace tokens, answerable half ({text})",
            lambda r=row: r()["tokens_answerable"],
            "num",
        )
        c.add(
            f"KgLength{tag}Unanswerable",
            f"mean whitespace tokens, unanswerable half ({text})",
            lambda r=row: r()["tokens_unanswerable"],
            "num",
        )
        halves = lambda r=row: min(r()["n_answerable"], r()["n_unanswerable"])
        c.add(
            f"KgLength{tag}KS",
            f"KS statistic between the halves' token counts ({text})",
            lambda r=row: r()["ks_statistic"],
            "num",
            n=halves,
            unit="questions in the smaller half",
        )
        c.add(
            f"KgLength{tag}P",
            f"its two-sided p ({text})",
            lambda r=row: r()["ks_p"],
            "num",
            n=halves,
            unit="questions in the smaller half",
        )
        c.add(
            f"KgProbe{tag}Dev", f"development questions the probe is fit on ({text})", lambda r=row: r()["n_dev"], "int"
        )
        c.add(f"KgProbe{tag}Test", f"test questions it is scored on ({text})", lambda r=row: r()["n_test"], "int")
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


def _cross(c: _Collector, cross: pl.DataFrame) -> None:
    for condition, tag in CONDITIONS.items():
        values: dict[str, Any] = {}
        row = lambda cond=condition: cross.filter(
            pl.col("model") == "all", pl.col("prompt") == STANDARD, pl.col("condition") == cond
        ).row(0, named=True)
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
            size = None if column in ("n_pairs", "car_shift_low", "car_shift_high") else (lambda r=row, k=count: r()[k])
            values[column] = c.add(
                f"KgX{name}{tag}",
                f"{condition}, standard prompt, all configurations: {what}",
                lambda r=row, col=column: r()[col],
                kind,
                n=size,
                unit="pairs",
            )
        shift_name = f"KgXCarShift{tag}"
        c.add(
            f"KgXCarDirection{tag}",
            f"{condition}: declared CAR is higher/lower/the same than judged",
            lambda v=values["car_shift"], m=shift_name: (
                NOT_AT_THIS_N if c.is_small(m) else direction(v) if v is not None else None
            ),
            "text",
        )
