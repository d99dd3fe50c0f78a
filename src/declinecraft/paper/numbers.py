"""``paper/numbers.tex``: one LaTeX macro per number the text quotes, computed from the analysis.

Each :class:`~declinecraft.paper.number_spec.Number` (listed in :mod:`declinecraft.paper.quoted`)
names its macro, says what it is, how to read it from the analysis tables (a getter of
:mod:`declinecraft.paper.number_sources`) and how to print it (a kind of the paper's one formatter,
:func:`declinecraft.core.number_format.fmt`), and (where the paper
reports it) the key in ``params/paper_reported.yaml``. A number the run cannot supply prints
"n/a" and its reason goes into ``numbers.csv``; nothing here raises on missing data. Macro names
are letters only (TeX control words). The run's settings get macros too
(:mod:`declinecraft.paper.run_settings`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from declinecraft.core import small_n
from declinecraft.core.number_format import fmt
from declinecraft.paper import number_sources
from declinecraft.paper.latex import escape, escape_symbols, macro_file
from declinecraft.paper.number_sources import Tables
from declinecraft.paper.number_spec import CAVEAT_FORMATS, SMALL_N_MACRO, Number
from declinecraft.paper.quoted import NUMBERS

__all__ = [
    "CAVEAT_FORMATS",
    "NUMBERS",
    "SMALL_N_MACRO",
    "Number",
    "compute",
    "fmt",
    "numbers_tex",
    "reported_vs_reproduced",
]


def _size(number: Number, tables: Tables) -> int | None:
    """The n behind ``number`` (None when it has none or the run cannot say)."""
    if number.n is None:
        return None
    try:
        size = number.n(tables)
    except (number_sources.Missing, KeyError, IndexError, pl.exceptions.PolarsError, ZeroDivisionError, TypeError):
        return None
    return None if size is None else int(size)


def compute(tables: Tables, *, no_input: str = "", min_n: int = small_n.threshold(0, 0.05)) -> pl.DataFrame:
    """Every number: macro, meaning, raw value, printed text, the reason when it is n/a
    (``no_input``, when given, says why the run has no results and is added to each reason), and
    the n it rests on. A number with an n below ``min_n`` (the small-n rule's threshold,
    :func:`declinecraft.core.small_n.threshold`) prints as ``\\dcsmall{value}{n}``: with its n and
    "not interpretable at this n", never as a finding."""
    rows = []
    for number in NUMBERS:
        value, reason = None, ""
        try:
            value = number.get(tables)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                value, reason = None, "undefined for this run"
        except number_sources.Missing as exc:
            reason = f"{exc} ({no_input})" if no_input else str(exc)
        except (KeyError, IndexError, pl.exceptions.PolarsError, ZeroDivisionError, TypeError) as exc:
            reason = f"cannot compute: {type(exc).__name__}: {exc}"
        text = fmt(value, number.fmt) if value is not None else "n/a"
        if number.fmt == "text" and value is not None:
            text = escape(text)
        size = _size(number, tables) if value is not None else None
        if number.n is not None and value is not None and not small_n.is_finding(size, min_n):
            if number.fmt in CAVEAT_FORMATS:
                counted = small_n.counted(size, number.unit) if size is not None else "n unknown"
                text = f"\\{SMALL_N_MACRO}{{{text}}}{{{counted}}}"
            reason = small_n.caveat(size, number.unit)
        raw = None if value is None or number.fmt == "text" else float(value)
        rows.append(
            dict(
                macro=number.macro,
                what=number.what,
                value=raw,
                text=text,
                reason=reason if value is None else "",
                reported=number.reported or "",
                fmt=number.fmt,
                n=None if size is None else float(size),
                small=reason if value is not None else "",
            )
        )
    return pl.DataFrame(rows, schema=number_sources.SCHEMA)


def is_accuracy(macro: str, what: str) -> bool:
    """Whether a number rests on the accuracy judges' scores (Answer Accuracy, leakage, the
    judges' own comparisons): its macro names ``Acc``/``Leak``/``Judge`` or its meaning says accuracy."""
    return any(part in macro for part in ("Acc", "Leak", "Judge")) or "accuracy" in what.lower()


def withhold_accuracy(numbers: pl.DataFrame, why: str) -> pl.DataFrame:
    """``numbers`` with every accuracy number (:func:`is_accuracy`) printed as n/a with ``why``
    (an accuracy judge failed the judges' check set), so no sentence or word reads it as a finding;
    '' leaves them as they are."""
    if not why:
        return numbers
    hit = pl.struct("macro", "what").map_elements(lambda r: is_accuracy(r["macro"], r["what"]), return_dtype=pl.Boolean)
    return numbers.with_columns(
        value=pl.when(hit).then(None).otherwise(pl.col("value")),
        text=pl.when(hit).then(pl.lit("n/a")).otherwise(pl.col("text")),
        reason=pl.when(hit).then(pl.lit(why)).otherwise(pl.col("reason")),
    )


def numbers_tex(numbers: pl.DataFrame, source: str = "notebooks/10_paper.ipynb") -> str:
    """The macro file: ``\\newcommand{\\Macro}{text}`` per number, n/a ones with their reason."""
    macros = [
        (
            row["macro"],
            row["text"],
            (row["what"] + (f" -- n/a: {row['reason']}" if row["reason"] else "")).replace("\n", " "),
        )
        for row in numbers.iter_rows(named=True)
    ]
    notes = ["Every number quoted in paper/main.tex; n/a lines say why the run lacks the number."]
    return macro_file("declinecraft.paper.numbers", macros, source=source, notes=notes)


def reported_vs_reproduced(numbers: pl.DataFrame, reported: Mapping[str, Mapping[str, Any]]) -> str:
    """Table R as a booktabs longtable: every number with a reported counterpart, side by side.

    It spans pages, repeating its header (a hundred rows never fit one page); ``main.tex`` sets it
    in one column, gives it its letter and defines ``\\ReportedCaption``.
    """
    header = ["\\toprule", "Quantity & Paper & This run \\\\", "\\midrule"]
    lines = [
        "% Generated by notebooks/10_paper.ipynb (declinecraft.paper.numbers) -- do not edit",
        "\\begin{longtable}{p{0.5\\linewidth}r>{\\raggedright\\arraybackslash}p{0.32\\linewidth}}",
        "\\caption{\\ReportedCaption}\\label{tab:reported}\\\\",
        *header,
        "\\endfirsthead",
        "\\multicolumn{3}{l}{\\emph{Table~\\thetable, continued}} \\\\",
        *header,
        "\\endhead",
        "\\midrule \\multicolumn{3}{r}{\\emph{continued on the next page}} \\\\",
        "\\endfoot",
        "\\bottomrule",
        "\\endlastfoot",
    ]
    for row in numbers.filter(pl.col("reported") != "").iter_rows(named=True):
        fact = reported.get(row["reported"])
        if not fact:
            continue
        value, unit = fact.get("value"), fact.get("unit", "")
        paper = f"{value}" if not isinstance(value, float) else f"{value:g}"
        paper = paper.replace("-", "\\textminus ") if isinstance(value, (int, float)) else escape(paper)
        what = escape_symbols(row["what"]) + (" (\\%)" if unit == "percent" else " (pts)" if unit == "points" else "")
        lines.append(f"{what} & {paper} & \\{row['macro']} \\\\")
    lines += ["\\end{longtable}", ""]
    return "\n".join(lines)
