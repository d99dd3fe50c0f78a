"""The paper's tables: content from the analysis results (CSV, stage 07), LaTeX (stage 08).

:func:`build` turns the analysis tables into one frame per paper table (``table02`` … ``table12``,
rates in percent, one row per printed row) or, when the run cannot fill a table, a string saying
why. :func:`to_latex` renders a frame as a booktabs ``table`` environment body (bold best value
per column where the paper bolds it). Table 1 (example questions and responses) is prose, not a
result, and Table 10 needs annotators' files (``data/annotations/<run>/``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from declinecraft.core import registry

PIPELINE_NAMES = {"hybrid": "Hybrid (default)", "dense": "Dense", "bm25": "BM25", "hybrid+rerank": "Hybrid + rerank",
                  "hybrid+rewrite": "Hybrid + rewrite", "hybrid+rewrite+rerank": "Hybrid + rewrite + rerank"}  # fmt: skip
PIPELINE_ORDER = list(PIPELINE_NAMES)


def _pct(col: str) -> pl.Expr:
    return (pl.col(col).cast(pl.Float64) * 100).alias(col)


def _label(frame: pl.DataFrame) -> pl.Expr:
    marks = pl.col("roles").fill_null("") if "roles" in frame.columns else pl.lit("")
    return (pl.col("config_label") + pl.when(marks != "").then(pl.lit("^{") + marks + pl.lit("}")).otherwise(pl.lit(""))).alias("model")


def _order(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("family", "params_total_b", "model", "thinking", nulls_last=True)


def table02(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Single-shot results per configuration with intervals."""
    g = r["main_grid"].filter(pl.col("condition") == "single")
    if g.height == 0:
        return "Table 2 needs single-shot RAG results"
    cols = ["attempt", "attempt_low", "attempt_high", "car", "car_low", "car_high", "accuracy", "accuracy_low",
            "accuracy_high", "accuracy_when_attempted", "bal_f1"]  # fmt: skip
    return _order(g).select(_label(g), *(_pct(c) for c in cols))


def table03(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """CAR, attempt and accuracy per configuration under the three conditions."""
    g = r["main_grid"]
    if g.height == 0:
        return "Table 3 needs the main grid"
    wide = _order(g.filter(pl.col("condition") == "single")).select("model", "thinking", _label(g).alias("label"))
    for metric in ("car", "attempt", "accuracy"):
        for cond in ("no_rag", "single", "iterative"):
            part = g.filter(pl.col("condition") == cond).select("model", "thinking", _pct(metric).alias(f"{metric}_{cond}"))
            wide = wide.join(part, on=["model", "thinking"], how="left")
    return wide.drop("model", "thinking").rename({"label": "model"})


def table04(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Leakage audit by family."""
    t = r.get("leakage_family")
    if t is None or t.height == 0:
        return "Table 4 needs no-RAG answers to unanswerable questions scored by the accuracy judges"
    return t.select("family", "runs", *(_pct(c) for c in ("attempt", "accuracy", "accuracy_low", "accuracy_high", "accuracy_when_attempted")))


def table05(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Pairwise agreement of the accuracy judges."""
    t = r.get("judge_agreement")
    pairs = t.filter(pl.col("judge_a") != "all") if t is not None else pl.DataFrame()
    if pairs.height == 0:
        return "Table 5 needs two or more accuracy judges; this run has fewer"
    name = lambda c: pl.col(c).str.strip_prefix("score_")  # noqa: E731
    return pairs.select(
        (name("judge_a") + pl.lit(" vs ") + name("judge_b")).alias("judges"), "rows", _pct("exact"), "kappa",
        (pl.col("mean_diff") * 100).alias("mean_diff"),
    )  # fmt: skip


def table06(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """The k sweep per model."""
    t = r.get("ablation_k")
    if t is None or t.height == 0 or t["k"].n_unique() < 2:
        return "Table 6 needs single-shot runs at several k (answer.k_sweep); this run has one k"
    label = pl.col("display_name").fill_null(pl.col("model")) + pl.when(pl.col("thinking") == "on").then(pl.lit(" (thinking)")).otherwise(pl.lit(""))
    return t.sort("model", "thinking", "k").select(label.alias("model"), "k", _pct("car"), _pct("accuracy"), _pct("bal_f1"))


def table07(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """The retrieval-pipeline ablation per model."""
    t = r.get("ablation_pipelines")
    if t is None or t.height == 0 or t["pipeline"].n_unique() < 2:
        return "Table 7 needs single-shot runs under several pipelines (answer.pipelines); this run has one"
    rank = pl.col("pipeline").replace_strict(PIPELINE_ORDER, list(range(len(PIPELINE_ORDER))), default=99)
    return t.with_columns(_rank=rank).sort("model", "thinking", "_rank").select(
        pl.col("display_name").fill_null(pl.col("model")).alias("model"),
        pl.when(pl.col("thinking") == "on").then(pl.lit("yes")).otherwise(pl.lit("no")).alias("thinking"),
        pl.col("pipeline").replace(PIPELINE_NAMES).alias("retrieval"), _pct("car"), _pct("accuracy"), _pct("bal_f1"),
    )  # fmt: skip


def table08(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Matched thinking pairs per model."""
    t = r.get("thinking_transitions")
    if t is None or t.height == 0:
        return "Table 8 needs thinking on/off pairs; this run's models have no switchable thinking"
    names = r["facts"].select("model", "display_name") if "facts" in r else t.select("model").with_columns(display_name=pl.col("model"))
    out = t.select("model").unique().sort("model").join(names, on="model", how="left")
    for cond in ("no_rag", "single"):
        part = t.filter(pl.col("condition") == cond).select(
            "model", pl.col("n").alias(f"n_{cond}"),
            pl.format("{} / {}", "a_to_d", "d_to_a").alias(f"ad_{cond}"), pl.col("sig_ad").alias(f"sig_ad_{cond}"),
            pl.format("{} / {}", "a_to_x", "x_to_a").alias(f"ax_{cond}"), pl.col("sig_ax").alias(f"sig_ax_{cond}"),
        )  # fmt: skip
        out = out.join(part, on="model", how="left")
    return out.with_columns(pl.col("display_name").fill_null(pl.col("model"))).drop("model").rename({"display_name": "model"})


def table09(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Generator comparison, from the verify stage's generator audit when the run has one."""
    t = r.get("generator_audit")
    if t is None or t.height == 0:
        return "Table 9 compares three generators on one pipeline; this run has one generator and no generator audit"
    num = lambda c: (pl.col(c).cast(pl.Float64) if c in t.columns else pl.lit(None, pl.Float64)).alias(c)  # noqa: E731
    return t.select(
        pl.col("generator").cast(pl.String), num("accepted_answerable"), num("accepted_unanswerable"), num("lost_to_format"),
        num("fact_in_cpre_pct"), num("style_auc"), num("hit_at_5_pct"),
    )  # fmt: skip


def table10(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Human agreement (from annotators' files)."""
    t = r.get("human_agreement")
    if t is None or t.height == 0:
        return "Table 10 needs annotators' labels in data/annotations/<run>/ (the sample is in 07_analysis/annotation_sample.html)"
    return t


def table11(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """The evaluated models: family, sizes, thinking, precision, release, knowledge cut-off."""
    facts = r.get("facts")
    if facts is None or facts.height == 0:
        return "Table 11 needs the run's models"
    return facts.sort("family", "params_total_b", nulls_last=True).select(
        "family", pl.col("display_name").fill_null(pl.col("model")).alias("model"),
        pl.when(pl.col("thinking_mode") == "switchable").then(pl.lit("yes")).otherwise(pl.lit("no")).alias("switchable"),
        pl.col("precision").fill_null("n/a"), pl.col("release").fill_null("n/a"), pl.col("knowledge_cutoff").fill_null("n/a"),
    )  # fmt: skip


def table12(cfg: Any) -> pl.DataFrame:
    """Models used to build and score the benchmark (from the run's params)."""
    specs = registry.load_models(cfg.resolve(cfg.models_file))
    name = lambda m: specs[m].display_name if m in specs and specs[m].display_name else m  # noqa: E731
    rows = [
        ("Embedding (dense retrieval)", cfg.index.embedder),
        ("Reranking (ablation; verifier retrieval)", cfg.index.reranker),
        ("Question generator", name(cfg.generate.generator)),
        ("Question verifier", name(cfg.verify.verifier)),
        ("Response judge (abstain / deny / answer)", name(cfg.judge.response_judge)),
        ("Accuracy and leakage judges", ", ".join(name(m) for m in cfg.judge.accuracy_judges)),
        ("Oracle (reference answers)", name(cfg.judge.oracle)),
    ]
    if cfg.judge.second_judges:
        rows.append(("Second response judges", ", ".join(name(m) for m in cfg.judge.second_judges)))
    return pl.DataFrame({"role": [r[0] for r in rows], "model": [r[1] for r in rows]})


BUILDERS: dict[str, Callable[[Mapping[str, pl.DataFrame]], pl.DataFrame | str]] = {
    "table02": table02, "table03": table03, "table04": table04, "table05": table05, "table06": table06,
    "table07": table07, "table08": table08, "table09": table09, "table10": table10, "table11": table11,
}  # fmt: skip


def build(results: Mapping[str, pl.DataFrame], cfg: Any | None = None) -> dict[str, pl.DataFrame | str]:
    """Every paper table the run can fill (a frame) or the reason it cannot (a string)."""
    out: dict[str, pl.DataFrame | str] = {}
    for name, builder in BUILDERS.items():
        try:
            out[name] = builder(results)
        except KeyError as exc:
            out[name] = f"Table {int(name[-2:])} needs the analysis results ({exc.args[0]}); this run has none"
    if cfg is not None:
        out["table12"] = table12(cfg)
    return out


# --- LaTeX --------------------------------------------------------------------------------------


def tex_escape(text: Any) -> str:
    """Escape a cell for LaTeX, keeping ``^{marks}`` superscripts as math."""
    s = "" if text is None else str(text)
    sup = ""
    if s.endswith("}") and "^{" in s:
        s, sup = s.rsplit("^{", 1)
        sup = "$^{\\mathrm{" + sup[:-1] + "}}$"
    for a, b in (("\\", "\\textbackslash{}"), ("&", "\\&"), ("%", "\\%"), ("_", "\\_"), ("#", "\\#"), ("$", "\\$")):
        s = s.replace(a, b)
    return s + sup


def _num(value: Any, digits: int = 1, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    if isinstance(value, float):
        return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else tex_escape(value)


def _ci(row: Mapping[str, Any], col: str) -> str:
    return f"{_num(row[col])} [{_num(row[col + '_low'])}, {_num(row[col + '_high'])}]"


#: Per table: (column header, cell function, name of the numeric column to bold the best of).
Spec = Sequence[tuple[str, Callable[[Mapping[str, Any]], str], str | None]]


def _col(name: str, digits: int = 1, signed: bool = False) -> Callable[[Mapping[str, Any]], str]:
    return lambda row: _num(row[name], digits, signed)


def _star(value: str, sig: Any) -> str:
    return f"\\textbf{{{value}}}\\,*" if sig else value


SPECS: dict[str, Spec] = {
    "table02": [("Model", lambda r: tex_escape(r["model"]), None), ("Attempt \\%", lambda r: _ci(r, "attempt"), "attempt"),
                ("CAR \\%", lambda r: _ci(r, "car"), "car"), ("Accuracy \\%", lambda r: _ci(r, "accuracy"), "accuracy"),
                ("Acc.\\ when att.\\ \\%", _col("accuracy_when_attempted"), "accuracy_when_attempted"),
                ("Bal.\\ F1", _col("bal_f1"), "bal_f1")],
    "table03": [("Model", lambda r: tex_escape(r["model"]), None)]
    + [(f"{m} {c}", _col(f"{k}_{cc}"), f"{k}_{cc}") for k, m in (("car", "CAR"), ("attempt", "Att."), ("accuracy", "Acc."))
       for cc, c in (("no_rag", "none"), ("single", "RAG"), ("iterative", "iter."))],
    "table04": [("Family", lambda r: tex_escape(r["family"]), None), ("Runs", _col("runs"), None),
                ("Attempted \\%", _col("attempt"), None), ("Correct \\%", _col("accuracy"), None),
                ("CI low", _col("accuracy_low"), None), ("CI high", _col("accuracy_high"), None),
                ("Acc.\\ when att.\\ \\%", _col("accuracy_when_attempted"), None)],
    "table05": [("Judges", lambda r: tex_escape(r["judges"]), None), ("Rows", _col("rows"), None),
                ("Exact agreement \\%", _col("exact"), None), ("Weighted $\\kappa$", _col("kappa", 3), None),
                ("Mean diff (pts)", _col("mean_diff", 1, True), None)],
    "table06": [("Model", lambda r: tex_escape(r["model"]), None), ("$k$", _col("k"), None), ("CAR \\%", _col("car"), None),
                ("Accuracy \\%", _col("accuracy"), None), ("Bal.\\ F1", _col("bal_f1"), None)],
    "table07": [("Model", lambda r: tex_escape(r["model"]), None), ("Thinking", lambda r: r["thinking"], None),
                ("Retrieval", lambda r: tex_escape(r["retrieval"]), None), ("CAR \\%", _col("car"), None),
                ("Accuracy \\%", _col("accuracy"), None), ("Bal.\\ F1", _col("bal_f1"), None)],
    "table08": [("Model", lambda r: tex_escape(r["model"]), None)]
    + [item for c in ("no_rag", "single") for item in (
        (f"$n$ ({'none' if c == 'no_rag' else 'RAG'})", _col(f"n_{c}"), None),
        ("A$\\to$D / D$\\to$A", lambda r, c=c: _star(tex_escape(r[f"ad_{c}"] or "--"), r[f"sig_ad_{c}"]), None),
        ("A$\\to$X / X$\\to$A", lambda r, c=c: _star(tex_escape(r[f"ax_{c}"] or "--"), r[f"sig_ax_{c}"]), None))],
    "table09": [("Generator", lambda r: tex_escape(r["generator"]), None),
                ("Accepted (ans.\\,/\\,unans.)", lambda r: f"{_num(r['accepted_answerable'], 0)} / {_num(r['accepted_unanswerable'], 0)}", None),
                ("Lost to format", _col("lost_to_format", 0), None), ("Fact in $C_{\\mathrm{pre}}$ \\%", _col("fact_in_cpre_pct"), None),
                ("Style AUC", _col("style_auc", 2), None), ("Hit@5 \\%", _col("hit_at_5_pct"), None)],
    "table10": [("Part", _col("part"), None), ("Measure", lambda r: tex_escape(r["measure"]), None),
                ("$\\kappa$ [95\\% CI]", lambda r: f"{_num(r['kappa'], 2)} [{_num(r['low'], 2)}, {_num(r['high'], 2)}]", None),
                ("Items", _col("n_items"), None)],
    "table11": [(h, (lambda r, c=c: tex_escape(r[c])), None) for h, c in (("Family", "family"), ("Model", "model"),
                ("Switchable thinking", "switchable"), ("Precision", "precision"), ("Released", "release"),
                ("Knowledge cut-off", "knowledge_cutoff"))],
    "table12": [("Role", lambda r: tex_escape(r["role"]), None), ("Model", lambda r: tex_escape(r["model"]), None)],
}  # fmt: skip


def to_latex(name: str, frame: pl.DataFrame) -> str:
    """A ``tabular`` (booktabs) of one paper table; the best value of each marked column in bold."""
    spec = SPECS.get(name) or [(tex_escape(c), (lambda r, c=c: _num(r[c])), None) for c in frame.columns]
    best = {}
    for _, _, col in spec:
        if col and col in frame.columns and frame[col].drop_nans().drop_nulls().len():
            best[col] = frame[col].drop_nans().drop_nulls().max()
    lines = ["% Generated by notebooks/08_paper.ipynb (declinecraft.paper.tables) -- do not edit",
             "\\begin{tabular}{" + "l" * min(1, len(spec)) + "r" * (len(spec) - 1) + "}", "\\toprule",
             " & ".join(h for h, _, _ in spec) + " \\\\", "\\midrule"]  # fmt: skip
    for row in frame.iter_rows(named=True):
        cells = []
        for _, cell, col in spec:
            text = cell(row)
            if col and col in best and row[col] is not None and row[col] == best[col]:
                text = f"\\textbf{{{text}}}"
            cells.append(text)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(lines)
