"""Whether a view can test anything at its size, said in one sentence in place of its numbers.

A view whose answerable or unanswerable questions are fewer than the small-n rule asks for
(``analysis.finding_n``) can state no finding: every number it prints carries "not interpretable
at this n". Rather than paragraphs of such numbers, its section says so once, with its counts,
and points to the view's tables, where every number stays (as it stays in ``view_numbers.tex``).
``\\KgTestable``/``\\EsbTestable`` (1 or 0) choose between the two in ``paper/main.tex``, and
``\\KgSizeSentence``/``\\EsbSizeSentence`` are the sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from declinecraft.core import catalogue, small_n
from declinecraft.core.catalogue import Artifact
from declinecraft.paper.latex import escape

#: Per view: (macro prefix, its name in the text, its first table, its figures' numbers).
VIEWS: tuple[tuple[str, str, Artifact, str], ...] = (
    ("Kg", "Know2Guess", catalogue.K2G_SUMMARY, "K1--K4"),
    ("Esb", "evidence-level", catalogue.EVIDENCE_SUMMARY, "E1--E5"),
)


def _count(values: dict[str, str], name: str) -> int | None:
    """A count macro's value as an int ("1{,}000" -> 1000), None when it is no count (n/a)."""
    text = values.get(name, "").replace("{,}", "").replace(",", "")
    return int(text) if text.isdigit() else None


def sentence(answerable: int, unanswerable: int, rule: int, tables: Path, figures: str) -> str:
    """The one sentence of a view that can test nothing at its size (LaTeX)."""
    questions = small_n.counted(answerable + unanswerable, "questions")
    return (
        f"At this size the view can test nothing: its {questions} ({answerable} answerable, {unanswerable} "
        f"unanswerable) are fewer than the {rule} of each kind that the small-$n$ rule asks for, so none of its "
        f"numbers is read here; every one is in the view's tables (\\texttt{{{escape(tables.parent.as_posix())}/}}, "
        f"\\texttt{{{escape(tables.name)}}} first) and Figures~{figures}."
    )


def macros(values: Sequence[tuple[str, str, str]], rule: int, run_dir: Path) -> list[tuple[str, str, str]]:
    """``<prefix>Testable`` and ``<prefix>SizeSentence`` of each view, from its question counts in
    ``values`` (the views' macros) and the small-n ``rule``; ``run_dir`` is the run's output folder
    as a reader finds it (``outputs/default``). A view whose counts are n/a (it did not run) counts
    as testable: its section has its own reason."""
    by_name = {name: value for name, value, _ in values}
    out = []
    for prefix, name, table, figures in VIEWS:
        answerable, unanswerable = _count(by_name, f"{prefix}Answerable"), _count(by_name, f"{prefix}Unanswerable")
        text = ""
        if answerable is not None and unanswerable is not None and min(answerable, unanswerable) < rule:
            text = sentence(answerable, unanswerable, rule, run_dir / table.relative(), figures)
        out += [
            (f"{prefix}Testable", "0" if text else "1", f"1 when the {name} view has {rule} questions of each kind"),
            (f"{prefix}SizeSentence", text, "what the view's section says when it can test nothing at its size"),
        ]
    return out
