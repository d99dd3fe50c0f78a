"""The content of the paper's result tables, from the analysis tables (rates in percent).

:func:`build` turns the analysis results into one frame per paper table (``table02`` …
``table12`` and ``selfpref``, one row per printed row) or, when the run cannot fill a table, a string saying why.
The analysis stage writes these frames as ``tableNN.csv``; the paper stage renders the same
frames as LaTeX (:mod:`declinecraft.paper.tables`). Table 1 (example questions and responses) is
drawn from the run's own responses (:mod:`declinecraft.analysis.examples`), Table 10 needs
annotators' files (``data/annotations/<run>/``), and ``selfpref`` reports App. A.1's
self-preference of the accuracy judges, which the paper gives in prose.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import polars as pl

from declinecraft.core import catalogue, paths, registry
from declinecraft.core.config import RunConfig

PIPELINE_NAMES = {
    "hybrid": "Hybrid (default)",
    "dense": "Dense",
    "bm25": "BM25",
    "hybrid+rerank": "Hybrid + rerank",
    "hybrid+rewrite": "Hybrid + rewrite",
    "hybrid+rewrite+rerank": "Hybrid + rewrite + rerank",
}
PIPELINE_ORDER = list(PIPELINE_NAMES)


def _pct(col: str) -> pl.Expr:
    return (pl.col(col).cast(pl.Float64) * 100).alias(col)


def _label(frame: pl.DataFrame) -> pl.Expr:
    marks = pl.col("roles").fill_null("") if "roles" in frame.columns else pl.lit("")
    return (
        pl.col("config_label") + pl.when(marks != "").then(pl.lit("^{") + marks + pl.lit("}")).otherwise(pl.lit(""))
    ).alias("model")


#: The question counts a result row rests on (answerable, unanswerable): printed as its $n$, and
#: what decides whether a best value may be bolded (declinecraft.paper.tables).
N_COLUMNS = ("n_answerable", "n_unanswerable")


def _counts(frame: pl.DataFrame, names: tuple[str, ...] = N_COLUMNS) -> list[pl.Expr]:
    """The count columns ``names`` as integers; a column the frame lacks is null."""
    return [pl.col(c).cast(pl.Int64) if c in frame.columns else pl.lit(None, pl.Int64).alias(c) for c in names]


def _order(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("family", "params_total_b", "model", "thinking", nulls_last=True)


def table01(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Example questions and responses to the unanswerable one (``examples``)."""
    t = r.get("examples")
    if t is None or t.height == 0:
        return "Table 1 needs judged responses with their question text"
    return t.select("part", "source", "text")


def table02(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Single-shot results per configuration with intervals."""
    g = r["main_grid"].filter(pl.col("condition") == "single")
    if g.height == 0:
        return "Table 2 needs single-shot RAG results"
    cols = [
        "attempt",
        "attempt_low",
        "attempt_high",
        "car",
        "car_low",
        "car_high",
        "accuracy",
        "accuracy_low",
        "accuracy_high",
        "accuracy_when_attempted",
        "bal_f1",
    ]
    return _order(g).select(_label(g), *_counts(g), *(_pct(c) for c in cols))


def table03(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """CAR, attempt and accuracy per configuration under the three conditions."""
    g = r["main_grid"]
    if g.height == 0:
        return "Table 3 needs the main grid"
    wide = _order(g.filter(pl.col("condition") == "single")).select(
        "model", "thinking", _label(g).alias("label"), *_counts(g)
    )
    for metric in ("car", "attempt", "accuracy"):
        for cond in ("no_rag", "single", "iterative"):
            part = g.filter(pl.col("condition") == cond).select(
                "model", "thinking", _pct(metric).alias(f"{metric}_{cond}")
            )
            wide = wide.join(part, on=["model", "thinking"], how="left", maintain_order="left")
    return wide.drop("model", "thinking").rename({"label": "model"})


def table04(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Leakage audit by family."""
    t = r.get("leakage_family")
    if t is None or t.height == 0:
        return "Table 4 needs no-RAG answers to unanswerable questions scored by the accuracy judges"
    return t.select(
        "family",
        "runs",
        *_counts(t, ("n", "dropped")),
        *(_pct(c) for c in ("attempt", "accuracy", "accuracy_low", "accuracy_high", "accuracy_when_attempted")),
    )


def table05(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Pairwise agreement of the accuracy judges."""
    t = r.get("judge_agreement")
    pairs = t.filter(pl.col("judge_a") != "all") if t is not None else pl.DataFrame()
    if pairs.height == 0:
        return "Table 5 needs two or more accuracy judges; this run has fewer"
    name = lambda c: pl.col(c).str.strip_prefix("score_")  # noqa: E731
    return pairs.select(
        (name("judge_a") + pl.lit(" vs ") + name("judge_b")).alias("judges"),
        "rows",
        pl.col("excluded") if "excluded" in pairs.columns else pl.lit(None, pl.Int64).alias("excluded"),
        _pct("exact"),
        "kappa",
        (pl.col("mean_diff") * 100).alias("mean_diff"),
    )


def table06(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """The k sweep per model."""
    t = r.get("ablation_k")
    if t is None or t.height == 0 or t["k"].n_unique() < 2:
        return "Table 6 needs single-shot runs at several k (answer.k_sweep); this run has one k"
    label = pl.col("display_name").fill_null(pl.col("model")) + pl.when(pl.col("thinking") == "on").then(
        pl.lit(" (thinking)")
    ).otherwise(pl.lit(""))
    return t.sort("model", "thinking", "k").select(
        label.alias("model"), "k", *_counts(t), _pct("car"), _pct("accuracy"), _pct("bal_f1")
    )


def table07(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """The retrieval-pipeline ablation per model."""
    t = r.get("ablation_pipelines")
    if t is None or t.height == 0 or t["pipeline"].n_unique() < 2:
        return "Table 7 needs single-shot runs under several pipelines (answer.pipelines); this run has one"
    rank = pl.col("pipeline").replace_strict(PIPELINE_ORDER, list(range(len(PIPELINE_ORDER))), default=99)
    return (
        t.with_columns(_rank=rank)
        .sort("model", "thinking", "_rank")
        .select(
            pl.col("display_name").fill_null(pl.col("model")).alias("model"),
            pl.when(pl.col("thinking") == "on").then(pl.lit("yes")).otherwise(pl.lit("no")).alias("thinking"),
            pl.col("pipeline").replace(PIPELINE_NAMES).alias("retrieval"),
            *_counts(t),
            _pct("car"),
            _pct("accuracy"),
            _pct("bal_f1"),
        )
    )


def table08(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Matched thinking pairs per model."""
    t = r.get("thinking_transitions")
    if t is None or t.height == 0:
        return "Table 8 needs thinking on/off pairs; this run's models have no switchable thinking"
    names = (
        r["facts"].select("model", "display_name")
        if "facts" in r
        else t.select("model").with_columns(display_name=pl.col("model"))
    )
    out = t.select("model").unique().sort("model").join(names, on="model", how="left", maintain_order="left")
    for cond in ("no_rag", "single"):
        part = t.filter(pl.col("condition") == cond).select(
            "model",
            pl.col("n").alias(f"n_{cond}"),
            pl.format("{} / {}", "a_to_d", "d_to_a").alias(f"ad_{cond}"),
            pl.col("sig_ad").alias(f"sig_ad_{cond}"),
            pl.format("{} / {}", "a_to_x", "x_to_a").alias(f"ax_{cond}"),
            pl.col("sig_ax").alias(f"sig_ax_{cond}"),
        )
        out = out.join(part, on="model", how="left", maintain_order="left")
    return (
        out.with_columns(pl.col("display_name").fill_null(pl.col("model")))
        .drop("model")
        .rename({"display_name": "model"})
    )


def car_reference(r: Mapping[str, pl.DataFrame]) -> tuple[str, float] | None:
    """Table 9's CAR: the single-shot CAR (percent) of the verifier when it is evaluated (the
    paper's choice), else of the first evaluated model, thinking disabled where switchable."""
    g = r.get("main_grid")
    if g is None or g.height == 0:
        return None
    single = g.filter(pl.col("condition") == "single").sort(pl.col("thinking") != "off", "model")
    if "roles" in single.columns:
        single = single.sort(~pl.col("roles").fill_null("").str.contains("V"), maintain_order=True)
    if single.height == 0 or single["car"][0] is None:
        return None
    return str(single["config_label"][0]), float(single["car"][0]) * 100


def table09(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Generator comparison, from the verify stage's generator audit when the run has one.

    ``lost_to_format`` counts drafts without a parsable fact list or question (the paper's
    column), ``lost_at_scenario`` those whose scenario could not be read. CAR is one model's on
    each generator's own unanswerable questions (:mod:`declinecraft.evaluation.comparison`, in
    percent); a run whose answer stage did not answer them fills it for the main generator only,
    from the main results (:func:`car_reference`).
    """
    t = r.get("generator_audit")
    if t is None or t.height == 0:
        return "Table 9 compares three generators on one pipeline; this run has one generator and no generator audit"
    num = lambda c: (pl.col(c).cast(pl.Float64) if c in t.columns else pl.lit(None, pl.Float64)).alias(c)  # noqa: E731
    ref = car_reference(r)
    main = (
        pl.col("main_generator").cast(pl.Boolean).fill_null(False) if "main_generator" in t.columns else pl.lit(False)
    )
    if "car_n" in t.columns:  # measured per generator
        names = dict(r["facts"].select("model", "display_name").iter_rows()) if "facts" in r else {}
        car = (pl.col("car").cast(pl.Float64) * 100).alias("car")
        car_model = pl.col("car_model").cast(pl.String).replace(names)
    else:
        car = pl.when(main).then(pl.lit(ref[1] if ref else None, pl.Float64)).alias("car")
        car_model = pl.when(main).then(pl.lit(ref[0] if ref else None, pl.String)).alias("car_model")
    return t.select(
        pl.col("generator").cast(pl.String),
        num("accepted_answerable"),
        num("accepted_unanswerable"),
        num("lost_to_format"),
        num("lost_at_scenario"),
        num("fact_in_cpre_pct"),
        num("style_auc"),
        num("hit_at_5_pct"),
        car,
        car_model,
    )


def table10(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """Human agreement (from annotators' files)."""
    t = r.get("human_agreement")
    if t is None or t.height == 0:
        sample = catalogue.ANALYSIS_ANNOTATION_PAGE.relative()
        return f"Table 10 needs annotators' labels in {paths.ANNOTATIONS}/<run>/ (the sample is in {sample})"
    return t


def table11(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """The evaluated models: family, sizes, thinking, precision, release, knowledge cut-off."""
    facts = r.get("facts")
    if facts is None or facts.height == 0:
        return "Table 11 needs the run's models"
    return facts.sort("family", "params_total_b", nulls_last=True).select(
        "family",
        pl.col("display_name").fill_null(pl.col("model")).alias("model"),
        pl.when(pl.col("thinking_mode") == "switchable")
        .then(pl.lit("yes"))
        .otherwise(pl.lit("no"))
        .alias("switchable"),
        pl.col("precision").fill_null("n/a"),
        pl.col("release").fill_null("n/a"),
        pl.col("knowledge_cutoff").fill_null("n/a"),
    )


def table12(cfg: RunConfig) -> pl.DataFrame:
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


def selfpref(r: Mapping[str, pl.DataFrame]) -> pl.DataFrame | str:
    """App. A.1: each accuracy judge's self-preference (percentage points, bootstrap interval),
    and the rho of the single-shot ranking under other-family judges only (last row)."""
    t = r.get("self_preference")
    if t is None or t.height == 0:
        return "Self-preference needs two or more accuracy judges"
    rows = t.select(
        pl.col("judge").str.strip_prefix("score_"),
        pl.col("family").fill_null("unknown"),
        *((pl.col(c) * 100).alias(c) for c in ("estimate", "low", "high")),
        "n_own",
        "n_other",
        pl.col("note").fill_null(""),
    )
    rerank = r.get("judge_rerank")
    if rerank is not None and rerank.height:
        row = rerank.row(0, named=True)
        rho = row["rho"]
        rows = pl.concat(
            [
                rows,
                pl.DataFrame(
                    [
                        dict(
                            judge="other-family judges only",
                            family="",
                            estimate=None,
                            low=None,
                            high=None,
                            n_own=None,
                            n_other=None,
                            note=(
                                f"rho = {rho:+.2f} over {row['n']} configurations ({row['n_reduced']} re-scored)"
                                if rho is not None and not math.isnan(rho)
                                else (row["note"] or "")
                            ),
                        )
                    ],
                    schema=rows.schema,
                ),
            ]
        )
    return rows


BUILDERS: dict[str, Callable[[Mapping[str, pl.DataFrame]], pl.DataFrame | str]] = {
    "table01": table01,
    "table02": table02,
    "table03": table03,
    "table04": table04,
    "table05": table05,
    "table06": table06,
    "table07": table07,
    "table08": table08,
    "table09": table09,
    "table10": table10,
    "table11": table11,
    "selfpref": selfpref,
}


def title(name: str) -> str:
    """How the paper names a table: "Table 4" for ``table04``, "Self-preference" for ``selfpref``."""
    return f"Table {int(name[-2:])}" if name[-2:].isdigit() else "Self-preference"


def build(results: Mapping[str, pl.DataFrame], cfg: RunConfig | None = None) -> dict[str, pl.DataFrame | str]:
    """Every paper table the run can fill (a frame) or the reason it cannot (a string).

    Table 12 lists the run's own models, so it needs ``cfg``; without one it is left out.
    """
    out: dict[str, pl.DataFrame | str] = {}
    for name, builder in BUILDERS.items():
        try:
            out[name] = builder(results)
        except KeyError as exc:
            out[name] = f"{title(name)} needs the analysis results ({exc.args[0]}); this run has none"
    if cfg is not None:
        out["table12"] = table12(cfg)
    return out
