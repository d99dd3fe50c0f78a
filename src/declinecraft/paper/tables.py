"""The paper's result tables as LaTeX: ``paper/tables/tableNN.tex`` (booktabs ``tabular`` bodies).

The content of each table comes from :mod:`declinecraft.analysis.paper_tables`; here
:func:`to_latex` renders it (bold best value per column where the paper bolds it, when the
rows rest on enough questions for a finding) and
:func:`write_tables` writes every table the run fills, one status row per table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.analysis import paper_tables
from declinecraft.core import catalogue, paths, small_n
from declinecraft.core.config import RunConfig
from declinecraft.paper.latex import escape, escape_marked
from declinecraft.paper.outputs import remove_stale

TABLE_FILE = re.compile(r"(table\d\d|selfpref)\.tex")


def _num(value: Any, digits: int = 1, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    if isinstance(value, float):
        return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else escape_marked(value)


def _ci(row: Mapping[str, Any], col: str) -> str:
    return f"{_num(row[col])} [{_num(row[col + '_low'])}, {_num(row[col + '_high'])}]"


#: Per table: (column header, cell function, name of the numeric column to bold the best of).
Spec = Sequence[tuple[str, Callable[[Mapping[str, Any]], str], str | None]]


def _col(name: str, digits: int = 1, signed: bool = False) -> Callable[[Mapping[str, Any]], str]:
    return lambda row: _num(row[name], digits, signed)


def _text(name: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda row: escape_marked(row[name])


def _n_pair(row: Mapping[str, Any]) -> str:
    return f"{_num(row.get('n_answerable'), 0)} / {_num(row.get('n_unanswerable'), 0)}"


#: The $n$ column of the result tables: answerable / unanswerable questions per row.
N_COLUMN = ("$n$ (ans.\\,/\\,unans.)", _n_pair, None)


def _star(value: str, sig: Any) -> str:
    return f"\\textbf{{{value}}}\\,*" if sig else value


SPECS: dict[str, Spec] = {
    "table01": [
        ("", lambda r: escape(r["part"]), None),
        ("", lambda r: escape(r["source"]), None),
        ("", lambda r: escape(r["text"]), None),
    ],
    "table02": [
        ("Model", lambda r: escape_marked(r["model"]), None),
        N_COLUMN,
        ("Attempt \\%", lambda r: _ci(r, "attempt"), "attempt"),
        ("CAR \\%", lambda r: _ci(r, "car"), "car"),
        ("Accuracy \\%", lambda r: _ci(r, "accuracy"), "accuracy"),
        ("Acc.\\ when att.\\ \\%", _col("accuracy_when_attempted"), "accuracy_when_attempted"),
        ("Bal.\\ F1", _col("bal_f1"), "bal_f1"),
    ],
    "table03": [("Model", lambda r: escape_marked(r["model"]), None), N_COLUMN]
    + [
        (f"{m} {c}", _col(f"{k}_{cc}"), f"{k}_{cc}")
        for k, m in (("car", "CAR"), ("attempt", "Att."), ("accuracy", "Acc."))
        for cc, c in (("no_rag", "none"), ("single", "RAG"), ("iterative", "iter."))
    ],
    "table04": [
        ("Family", lambda r: escape_marked(r["family"]), None),
        ("Runs", _col("runs"), None),
        ("$n$", _col("n"), None),
        ("No score", _col("dropped"), None),
        ("Attempted \\%", _col("attempt"), None),
        ("Correct \\%", _col("accuracy"), None),
        ("CI low", _col("accuracy_low"), None),
        ("CI high", _col("accuracy_high"), None),
        ("Acc.\\ when att.\\ \\%", _col("accuracy_when_attempted"), None),
    ],
    "table05": [
        ("Judges", lambda r: escape_marked(r["judges"]), None),
        ("Rows", _col("rows"), None),
        ("Rule-scored (excluded)", _col("excluded"), None),
        ("Exact agreement \\%", _col("exact"), None),
        ("Weighted $\\kappa$", _col("kappa", 3), None),
        ("Mean diff, first $-$ second (pts)", _col("mean_diff", 1, True), None),
    ],
    "table06": [
        ("Model", lambda r: escape_marked(r["model"]), None),
        ("$k$", _col("k"), None),
        N_COLUMN,
        ("CAR \\%", _col("car"), "car"),
        ("Accuracy \\%", _col("accuracy"), "accuracy"),
        ("Bal.\\ F1", _col("bal_f1"), "bal_f1"),
    ],
    "table07": [
        ("Model", lambda r: escape_marked(r["model"]), None),
        ("Thinking", lambda r: r["thinking"], None),
        ("Retrieval", lambda r: escape_marked(r["retrieval"]), None),
        N_COLUMN,
        ("CAR \\%", _col("car"), "car"),
        ("Accuracy \\%", _col("accuracy"), "accuracy"),
        ("Bal.\\ F1", _col("bal_f1"), "bal_f1"),
    ],
    "table08": [("Model", lambda r: escape_marked(r["model"]), None)]
    + [
        item
        for c in ("no_rag", "single")
        for item in (
            (f"$n$ ({'none' if c == 'no_rag' else 'RAG'})", _col(f"n_{c}"), None),
            ("A$\\to$D / D$\\to$A", lambda r, c=c: _star(escape_marked(r[f"ad_{c}"] or "--"), r[f"sig_ad_{c}"]), None),
            ("A$\\to$X / X$\\to$A", lambda r, c=c: _star(escape_marked(r[f"ax_{c}"] or "--"), r[f"sig_ax_{c}"]), None),
        )
    ],
    "table09": [
        ("Generator", lambda r: escape_marked(r["generator"]), None),
        (
            "Accepted (ans.\\,/\\,unans.)",
            lambda r: f"{_num(r['accepted_answerable'], 0)} / {_num(r['accepted_unanswerable'], 0)}",
            None,
        ),
        ("Lost to format", _col("lost_to_format", 0), None),
        ("Scenario unreadable", _col("lost_at_scenario", 0), None),
        ("Fact in $C_{\\mathrm{pre}}$ \\%", _col("fact_in_cpre_pct"), None),
        ("Style AUC", _col("style_auc", 2), None),
        ("Hit@5 \\%", _col("hit_at_5_pct"), None),
        ("CAR \\%", lambda r: _num(r["car"]) + (f" ({escape(r['car_model'])})" if r.get("car_model") else ""), None),
    ],
    "table10": [
        ("Part", _col("part"), None),
        ("Measure", lambda r: escape_marked(r["measure"]), None),
        ("$\\kappa$ [95\\% CI]", lambda r: f"{_num(r['kappa'], 2)} [{_num(r['low'], 2)}, {_num(r['high'], 2)}]", None),
        ("Items", _col("n_items"), None),
    ],
    "table11": [
        (h, _text(c), None)
        for h, c in (
            ("Family", "family"),
            ("Model", "model"),
            ("Switchable thinking", "switchable"),
            ("Precision", "precision"),
            ("Released", "release"),
            ("Knowledge cut-off", "knowledge_cutoff"),
        )
    ],
    "table12": [
        ("Role", lambda r: escape_marked(r["role"]), None),
        ("Model", lambda r: escape_marked(r["model"]), None),
    ],
    "selfpref": [
        ("Judge", lambda r: escape(r["judge"]), None),
        ("Family", lambda r: escape(r["family"]), None),
        (
            "Self-preference (pts) [95\\% CI]",
            lambda r: f"{_num(r['estimate'], 1, True)} [{_num(r['low'], 1, True)}, {_num(r['high'], 1, True)}]",
            None,
        ),
        ("Own answers", _col("n_own"), None),
        ("Other answers", _col("n_other"), None),
        ("Note", lambda r: escape(r["note"]), None),
    ],
}
#: Tables whose best value is bolded within each group of rows (the paper: "the best k for each
#: model in each column"), not over the whole column.
BOLD_WITHIN = {"table06": ("model",), "table07": ("model", "thinking")}
#: Column formats other than a left column and right-aligned numbers (long text wraps).
COLUMN_FORMATS = {
    "table01": "p{0.14\\textwidth}p{0.2\\textwidth}p{0.6\\textwidth}",
    "selfpref": "llrrrp{0.3\\textwidth}",
}


def _best(frame: pl.DataFrame, col: str, within: tuple[str, ...]) -> pl.Series:
    """Per row, whether its ``col`` is the highest of its group (``within``; the whole column
    when empty); NaN and null are never best."""
    value = pl.col(col).cast(pl.Float64).fill_nan(None)
    top = value.max().over(list(within)) if within else value.max()
    return frame.select((value.is_not_null() & (value == top)).fill_null(False).alias("_best"))["_best"]


def counted_by(col: str) -> tuple[str, ...]:
    """The question counts a result column rests on: CAR on the unanswerable questions, balanced
    F1 on both halves, the attempt and accuracy rates on the answerable ones (Table 3's
    ``car_single`` and the like by their metric)."""
    metric = re.sub(r"_(no_rag|single|iterative)$", "", col)
    if metric == "car":
        return ("n_unanswerable",)
    return paper_tables.N_COLUMNS if metric == "bal_f1" else ("n_answerable",)


def _may_bold(frame: pl.DataFrame, col: str, min_n: int) -> bool:
    """Whether ``col``'s best may be bolded: every row rests on at least ``min_n`` of the
    questions the column counts (the small-n rule); always when ``min_n`` is 0."""
    if min_n <= 0:
        return True
    counts = [frame[c].min() if c in frame.columns else None for c in counted_by(col)]
    return all(small_n.is_finding(n, min_n) for n in counts)  # type: ignore[arg-type]


#: Rows a table may have before it is set in a box no taller than :data:`LONG_HEIGHT` (at the paper's
#: size the retrieval ablation has 72: 12 models x 6 pipelines).
LONG_ROWS = 45
#: The most height a long table takes: the page's text less room for its caption.
LONG_HEIGHT = "0.85\\textheight"


def to_latex(name: str, frame: pl.DataFrame, min_n: int = 0) -> str:
    """A ``tabular`` (booktabs) of one paper table; the best value of each marked column in bold
    (per group of rows for the tables in :data:`BOLD_WITHIN`), only where every row rests on at
    least ``min_n`` of the questions the column counts: a best of one question is no finding.

    ``paper/main.tex`` sets every table in a float, which never breaks across pages, so a table of
    more than :data:`LONG_ROWS` rows is scaled to at most :data:`LONG_HEIGHT` (72 rows stay above
    6 pt) instead of running past the page's foot."""
    spec = SPECS.get(name) or [(escape_marked(c), _col(c), None) for c in frame.columns]
    within = tuple(c for c in BOLD_WITHIN.get(name, ()) if c in frame.columns)
    best = {
        col: _best(frame, col, within).to_list()
        for _, _, col in spec
        if col and col in frame.columns and _may_bold(frame, col, min_n)
    }
    fmt = COLUMN_FORMATS.get(name, "l" * min(1, len(spec)) + "r" * (len(spec) - 1))
    header = " & ".join(h for h, _, _ in spec)
    long = frame.height > LONG_ROWS
    lines = [
        "% Generated by notebooks/10_paper.ipynb (declinecraft.paper.tables) -- do not edit",
        *(["\\adjustbox{max totalheight=" + LONG_HEIGHT + "}{%"] if long else []),
        "\\begin{tabular}{" + fmt + "}",
        "\\toprule",
    ]
    lines += [header + " \\\\", "\\midrule"] if header.strip(" &") else []
    for i, row in enumerate(frame.iter_rows(named=True)):
        cells = []
        for _, cell, col in spec:
            text = cell(row)
            if col in best and best[col][i]:
                text = f"\\textbf{{{text}}}"
            cells.append(text)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", *(["}"] if long else []), ""]
    return "\n".join(lines)


def write_tables(results: Mapping[str, pl.DataFrame], cfg: RunConfig, folder: Path) -> list[dict[str, Any]]:
    """Write ``tables/tableNN.tex`` for every table the run fills; return one status row per table
    (``reason`` empty when written)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows, written = [], set()
    min_n = cfg.analysis.finding_n
    for name, content in paper_tables.build(results, cfg).items():
        number = int(name[-2:]) if name[-2:].isdigit() else 0
        if isinstance(content, str):
            rows.append(dict(kind="table", number=number, name=name, title="", reason=content))
            continue
        paths.write_text_atomic(folder / catalogue.PAPER_TABLE.file(name), to_latex(name, content, min_n))
        written.add(catalogue.PAPER_TABLE.file(name))
        rows.append(dict(kind="table", number=number, name=name, title="", reason=""))
    remove_stale(folder, TABLE_FILE, written)
    return rows
