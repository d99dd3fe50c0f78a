"""The words of the paper's results sentences, chosen by the numbers they describe.

``main.tex`` states no finding in fixed words: "single-shot RAG \\DirCARSingle{} 56.4\\%" prints
"raises it to", "lowers it to" or "leaves it at" as the printed means differ or agree, and every
test's outcome is "significant", "not significant" or "not testable" from its p value. Each
:class:`Word` reads the already computed numbers (:func:`declinecraft.paper.numbers.compute`), so
a word can never disagree with the number printed next to it: two means that print alike are
"the same", whatever their unrounded values. The words become ``text`` rows of ``numbers.csv``
and macros of ``numbers.tex``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from declinecraft.core import small_n
from declinecraft.core.number_format import compare
from declinecraft.paper.latex import escape
from declinecraft.paper.number_sources import SCHEMA

#: A number as the words see it: raw value (None when n/a, or when it rests on too few
#: questions to be a finding) and printed text.
Printed = tuple[float | None, str]
Rule = Callable[[Mapping[str, Printed], float, int], str]
NOT_TESTABLE = "not testable"


@dataclass(frozen=True)
class Word:
    """One word macro: name (without backslash), what it describes, and its rule."""

    macro: str
    what: str
    rule: Rule


def _untested(n: Mapping[str, Printed], p: str | None, alpha: float) -> bool:
    """Whether the difference's test ``p`` forbids a comparative word (p n/a or not below alpha,
    :func:`~declinecraft.core.small_n.comparative_reason`); never without ``p``."""
    if p is None:
        return False
    return bool(small_n.comparative_reason(0, 0, n[p][0], alpha))


def change(
    a: str, b: str, up: str, down: str, same: str, missing: str, kind: str = "pct", *, p: str | None = None
) -> Rule:
    """``up``/``down`` as number ``b`` is above/below number ``a``; ``same`` when they print alike
    as ``kind`` (the paper's tie rule, :func:`declinecraft.core.number_format.compare`). With ``p``
    (the test of the change), ``up``/``down`` only when p < alpha, else ``missing``: no comparative
    word for a difference its test does not find."""

    def rule(n: Mapping[str, Printed], alpha: float, min_n: int) -> str:
        word = compare(n[b][0], n[a][0], kind, (up, down, same), missing)
        return missing if word in (up, down) and _untested(n, p, alpha) else word

    return rule


def sign(
    x: str, up: str, down: str, same: str, missing: str, kind: str = "pts", *, p: str | None = None, untested: str = ""
) -> Rule:
    """``up``/``down`` by the sign of a signed number; ``same`` when it prints as zero (the tie
    rule). With ``p``, ``up``/``down`` only when p < alpha, else ``untested`` (or ``missing``)."""

    def rule(n: Mapping[str, Printed], alpha: float, min_n: int) -> str:
        word = compare(n[x][0], 0.0, kind, (up, down, same), missing)
        return (untested or missing) if word in (up, down) and _untested(n, p, alpha) else word

    return rule


def significance(p: str) -> Rule:
    """ "significant" when p < alpha, else "not significant"; "not testable" when p is n/a."""

    def rule(n: Mapping[str, Printed], alpha: float, min_n: int) -> str:
        value = n[p][0]
        return NOT_TESTABLE if value is None else ("significant" if value < alpha else "not significant")

    return rule


def association(rho: str, p: str, n_items: str) -> Rule:
    """ "significant and positive/negative" when p < alpha, else "not significant"; "not testable"
    when rho or p is n/a, or there are too few items for a rank correlation to be a finding (the
    claims check's rule: :func:`~declinecraft.core.small_n.is_finding` at the rank test's minimum,
    :func:`~declinecraft.core.small_n.min_n_rank`, or ``analysis.min_n`` when larger)."""

    def rule(n: Mapping[str, Printed], alpha: float, min_n: int) -> str:
        r, pv, size = n[rho][0], n[p][0], n[n_items][0]
        need = small_n.threshold(min_n, alpha, floor=small_n.min_n_rank(alpha))
        if r is None or pv is None or not small_n.is_finding(size, need):
            return NOT_TESTABLE
        if pv >= alpha:
            return "not significant"
        return "significant and positive" if r > 0 else "significant and negative"

    return rule


WORDS: list[Word] = [
    Word(
        "DirCARSingle",
        "single-shot RAG against no retrieval, mean CAR",
        change(
            "CARnoragMean",
            "CARsingleMean",
            "raises it to",
            "lowers it to",
            "leaves it at",
            "gives",
            p="PCARSingleMinusNorag",
        ),
    ),
    Word("SigCARSingle", "Wilcoxon test of the single minus no-RAG CAR change", significance("PCARSingleMinusNorag")),
    Word(
        "DirCARIter",
        "iterative against single-shot RAG, mean CAR",
        change(
            "CARsingleMean",
            "CARiterMean",
            "raises the mean to",
            "lowers the mean to",
            "leaves the mean at",
            "gives a mean of",
            p="PCARIterMinusSingle",
        ),
    ),
    Word("SigCARIter", "Wilcoxon test of the iterative minus single CAR change", significance("PCARIterMinusSingle")),
    Word(
        "DirAccIter",
        "iterative against single-shot RAG, mean accuracy",
        change("AccSingleMean", "AccIterMean", "rises to", "falls to", "stays at", "is", p="PAccIterMinusSingle"),
    ),
    Word(
        "SigAccIter", "Wilcoxon test of the iterative minus single accuracy change", significance("PAccIterMinusSingle")
    ),
    Word("AssocCARTotal", "CAR vs total parameters", association("RhoCARTotal", "PCARTotal", "NOpenWeight")),
    Word("AssocCARActive", "CAR vs active parameters", association("RhoCARActive", "PCARActive", "NActive")),
    Word("AssocCARRelease", "CAR vs release month", association("RhoCARRelease", "PCARRelease", "NReleaseModels")),
    Word(
        "AssocCARReleaseBest",
        "best CAR per family vs release month",
        association("RhoCARReleaseBest", "PCARReleaseBest", "NReleaseFamilies"),
    ),
    Word("AssocAccTotal", "accuracy vs total parameters", association("RhoAccTotal", "PAccTotal", "NAccTotal")),
    Word("AssocCARAcc", "CAR vs accuracy over configurations", association("RhoCARAcc", "PCARAcc", "NCARAcc")),
    Word("AssocPartial", "CAR vs accuracy with release month fixed", association("RhoPartial", "PPartial", "NPartial")),
    Word(
        "DirThinkNorag",
        "thinking on against off, mean CAR without retrieval",
        sign(
            "ThinkCARNorag",
            "raises",
            "lowers",
            "does not change",
            "has an unmeasured effect on",
            p="ThinkCARPNorag",
            untested="shifts, without a significant direction,",
        ),
    ),
    Word("SigThinkNorag", "Wilcoxon test of the thinking CAR change without retrieval", significance("ThinkCARPNorag")),
    Word(
        "DirThinkSingle",
        "thinking on against off, mean CAR with single-shot RAG",
        sign(
            "ThinkCARSingle",
            "raises",
            "lowers",
            "does not change",
            "has an unmeasured effect on",
            p="ThinkCARPSingle",
            untested="shifts, without a significant direction,",
        ),
    ),
    Word(
        "SigThinkSingle",
        "Wilcoxon test of the thinking CAR change with single-shot RAG",
        significance("ThinkCARPSingle"),
    ),
]


def results_scope(printed: Mapping[str, Printed], need: int) -> str:
    """One sentence for the head of the results when the run is too small for any of its tests:
    its questions and configurations against the small-n rule's ``need``, and where the numbers
    are; '' when it has enough of each (or cannot say)."""
    counts = {k: printed.get(k, (None, "n/a"))[0] for k in ("NAnswerable", "NUnanswerable", "NConfigs")}
    if any(v is None for v in counts.values()):
        return ""
    a, u, c = (int(v or 0) for v in counts.values())
    if min(a, u, c) >= need:
        return ""
    return (
        f"At this size the section can test nothing: its comparisons rest on {a} answerable and {u} "
        f"unanswerable questions and {c} configurations, fewer than the {need} of each that the small-$n$ "
        "rule asks for, so none of its numbers is read here; every one is in "
        "Tables~\\ref{tab:table02} and~\\ref{tab:table03} (Appendix~\\ref{app:per_config}), in the "
        "figures and in \\texttt{numbers.csv}."
    )


def words(numbers: pl.DataFrame, *, alpha: float, min_n: int = 0, thinking_problem: str = "") -> pl.DataFrame:
    """Every word macro of :data:`WORDS` from the computed ``numbers``, plus ``ThinkingPairs``
    ("1" when the run has native thinking on/off pairs, else "0"), ``ThinkingWhy`` (why not),
    ``ResultsScope`` (:func:`results_scope`) and ``ResultsTestable`` ("0" when that sentence
    stands in for the results' paragraphs, which ``paper/main.tex`` then leaves out), as rows of a
    numbers table.

    A number whose n is below the small-n rule's threshold (``min_n`` is ``analysis.min_n``;
    :func:`declinecraft.core.small_n.threshold`) is no finding: its words read it as n/a ("gives",
    "not testable"), so no sentence states a direction or a significance from too few questions."""
    need = small_n.threshold(min_n, alpha)
    printed: dict[str, Printed] = {}
    for row in numbers.iter_rows(named=True):
        size = row.get("n")
        small = size is not None and not small_n.is_finding(size, need)
        printed[row["macro"]] = (None, "n/a") if row["text"] == "n/a" or small else (row["value"], row["text"])
    rows = [(w.macro, w.what, w.rule(printed, alpha, min_n)) for w in WORDS]
    scope = results_scope(printed, need)
    rows += [
        ("ResultsScope", "what the results section can test at this size", scope),
        ("ResultsTestable", "1 when the results rest on enough questions and configurations", "0" if scope else "1"),
        ("ThinkingPairs", "1 when the run has native thinking on/off pairs", "0" if thinking_problem else "1"),
        ("ThinkingWhy", "why the run has no native thinking pairs", escape(thinking_problem)),
    ]
    return pl.DataFrame(
        [dict(macro=m, what=w, value=None, text=t, reason="", reported="", fmt="text") for m, w, t in rows],
        schema=SCHEMA,
    )
