"""The short leaderboard ``make evaluate`` prints: the run's models on the paper's Table 2 setting.

One row per (model, thinking) of ``07_analysis/summary.csv`` in single-shot RAG at the run's
``answer.k`` and ``answer.pipeline`` (with the scenario, default prompt): CAR and attempt rate
with their Wilson intervals, accuracy with its bootstrap interval, and Bal. F1 = 2A/(2+A-C)
(:func:`metrics.balanced_f1`). Bal. F1 rises with both A and C, so its interval here is the
range of Bal. F1 over the two Wilson intervals (a bound, not a joint 95% interval; the analysis
reports none). Rows are ranked by Bal. F1.

When the run is the paper's benchmark (``paper`` is the run or one of its bases), the published
Table 2 rows of ``params/paper_reported.yaml`` are ranked beside the run's rows.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from declinecraft.core import catalogue, config
from declinecraft.evaluation import roster
from declinecraft.evaluation.metrics import balanced_f1

COLUMNS = (
    "rank",
    "source",
    "model",
    "thinking",
    "car",
    "car_low",
    "car_high",
    "attempt",
    "attempt_low",
    "attempt_high",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "bal_f1",
    "bal_f1_low",
    "bal_f1_high",
)
PAPER_RUN = "paper"


def summary_path(cfg: config.RunConfig) -> Path:
    """The analysis table the leaderboard reads: ``07_analysis/summary.csv``."""
    return catalogue.ANALYSIS_TABLE.path(cfg, "summary")


def main_setting(cfg: config.RunConfig) -> pl.Expr:
    """The run's main setting as a row filter (of ``summary.csv`` or of the judged responses): the
    default prompt with the scenario; no retrieval, or the run's ``answer.pipeline`` at ``answer.k``."""
    retrieval = (pl.col("pipeline") == cfg.answer.pipeline) & (pl.col("k") == cfg.answer.k)
    return (
        ((pl.col("condition") == "no_rag") | retrieval) & pl.col("scenario") & (pl.col("prompt_variant") == "default")
    )


def condition_rows(cfg: config.RunConfig) -> pl.DataFrame:
    """Every condition's rows of ``summary.csv`` on the run's :func:`main_setting`, with their
    counts; rates are proportions.

    Raises:
        FileNotFoundError: the analysis has not run (names the file).
    """
    path = summary_path(cfg)
    if not path.is_file():
        raise FileNotFoundError(f"missing {path}: run the analysis first (make all PARAMS={cfg.params_file.name})")
    return pl.read_csv(path, infer_schema_length=None).filter(main_setting(cfg))


def run_rows(cfg: config.RunConfig) -> pl.DataFrame:
    """The run's rows on the Table 2 setting (single-shot RAG of :func:`condition_rows`).

    Raises:
        FileNotFoundError: the analysis has not run (names the file).
    """
    main = condition_rows(cfg).filter(pl.col("condition") == "single")
    rows = main.select("model", "thinking", *COLUMNS[4:13]).with_columns(source=pl.lit(cfg.run))
    return _with_f1(rows)


def published_rows(root: Path) -> pl.DataFrame:
    """Table 2's published rows (``params/paper_reported.yaml``, keys ``t2_<model>_<metric>``), as proportions."""
    reported = (yaml.safe_load((root / "params" / "paper_reported.yaml").read_text(encoding="utf-8")) or {})["reported"]
    rows = []
    for key in reported:
        match = re.fullmatch(r"t2_(.+)_bal_f1", key)
        if not match:
            continue
        slug = match.group(1)

        def value(metric: str, slug: str = slug) -> Any:
            entry = reported.get(f"t2_{slug}_{metric}")
            return entry["value"] if entry else None

        where = reported[f"t2_{slug}_car"]["where"]
        name = re.sub(r"\s*\(of \d+\)$", "", where.removeprefix("Table 2, "))
        thinking = "on" if name.endswith("(thinking)") else "off"
        # Bal. F1 as published (its range is computed from the two intervals).
        row: dict[str, Any] = {
            "source": "paper Table 2",
            "model": name.removesuffix(" (thinking)"),
            "thinking": thinking,
            "bal_f1": value("bal_f1") / 100,
        }
        for metric in ("car", "attempt", "accuracy"):
            low, high = value(f"{metric}_ci") or (None, None)
            # A published value without an interval keeps null bounds.
            bounds = {f"{metric}_low": low, f"{metric}_high": high}
            row.update({metric: value(metric) / 100, **{k: None if v is None else v / 100 for k, v in bounds.items()}})
        rows.append(row)
    return _with_f1(pl.DataFrame(rows)) if rows else pl.DataFrame()


def is_paper_benchmark(cfg: config.RunConfig) -> bool:
    """Whether the run is the paper's (``paper``) run or derived from it through ``base:``."""
    chain: config.RunConfig | None = cfg
    while chain is not None:
        if chain.run == PAPER_RUN:
            return True
        chain = chain.base
    return False


def leaderboard(cfg: config.RunConfig, *, published: bool | None = None) -> pl.DataFrame:
    """The run's rows (and Table 2's when ``published``, default: the paper's benchmark), ranked by Bal. F1."""
    frames = [run_rows(cfg)]
    if published if published is not None else is_paper_benchmark(cfg):
        frames.append(published_rows(cfg.root))
    table = pl.concat([f for f in frames if f.height], how="diagonal_relaxed")
    table = table.sort("bal_f1", descending=True, nulls_last=True)
    return table.with_columns(rank=pl.int_range(1, table.height + 1)).select(COLUMNS)


def render(table: pl.DataFrame, *, highlight: str | None = None) -> str:
    """The table as aligned text in percent, intervals in brackets; ``highlight`` marks a model with '>'."""

    def pct(row: dict[str, Any], name: str) -> str:
        v, lo, hi = row[name], row[f"{name}_low"], row[f"{name}_high"]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "n/a"
        interval = f" [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None and hi is not None else ""
        return f"{100 * v:.1f}{interval}"

    head = ("", "#", "model", "thinking", "source", "CAR", "attempt", "accuracy", "Bal. F1")
    lines = [head]
    for row in table.iter_rows(named=True):
        mark = ">" if highlight and row["model"] == highlight and row["source"] != "paper Table 2" else ""
        lines.append(
            (
                mark,
                str(row["rank"]),
                row["model"],
                row["thinking"],
                row["source"],
                *(pct(row, m) for m in ("car", "attempt", "accuracy", "bal_f1")),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines)


def _with_f1(rows: pl.DataFrame) -> pl.DataFrame:
    """Add Bal. F1 (unless given) and its range over the CAR and attempt intervals (both raise it)."""

    def f1(a: str, c: str) -> pl.Expr:
        return pl.struct(a, c).map_elements(
            lambda s: None if s[a] is None or s[c] is None else balanced_f1(s[a], s[c]), return_dtype=pl.Float64
        )

    given = pl.col("bal_f1") if "bal_f1" in rows.columns else pl.lit(None, dtype=pl.Float64)
    return rows.with_columns(
        bal_f1=pl.coalesce(given, f1("attempt", "car")),
        bal_f1_low=f1("attempt_low", "car_low"),
        bal_f1_high=f1("attempt_high", "car_high"),
    )


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.evaluation.leaderboard PARAMS [--model ID]``: print the leaderboard."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.evaluation.leaderboard")
    parser.add_argument("params", type=Path)
    parser.add_argument("--model", default=None, help="the model to mark (a registry id or openai:<name>)")
    parser.add_argument(
        "--published",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="rank Table 2's published rows beside the run's (default: for the paper's benchmark)",
    )
    args = parser.parse_args(argv)
    try:
        cfg = config.load(args.params)
        table = leaderboard(cfg, published=args.published)
    except (config.ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    model = roster.model_id(args.model) if args.model else None
    print(
        f"Leaderboard of run {cfg.run!r}: single-shot RAG, {cfg.answer.pipeline}, k={cfg.answer.k}; percent, "
        "95% intervals (CAR, attempt: Wilson; accuracy: bootstrap; Bal. F1: its range over the two Wilson intervals)"
    )
    print(render(table, highlight=model))
    if model is not None:
        mine = table.filter(pl.col("model") == model, pl.col("source") != "paper Table 2")
        for row in mine.iter_rows(named=True):
            print(f"{model} ({row['thinking']}) ranks {row['rank']} of {table.height}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
