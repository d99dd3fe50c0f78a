"""Hand-built judged tables with known answers, and a throwaway project that holds one."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl

from declinecraft.analysis import analyze
from declinecraft.core import config
from tests.support import projects


def responses(rows: list[tuple]) -> pl.DataFrame:
    """A judged frame from (model, thinking, condition, question_id, answerable, label, accuracy) rows."""
    frame = pl.DataFrame(
        rows,
        schema=["model", "thinking", "condition", "question_id", "answerable", "label", "accuracy"],
        orient="row",
        schema_overrides={"label": pl.String, "accuracy": pl.Float64},
    )
    return analyze.prepare(frame.with_columns(budget_exhausted=pl.col("label").is_null()))


def unanswerable(model: str, condition: str, labels: list[str | None], thinking: str = "off") -> list[tuple]:
    return [(model, thinking, condition, f"u{i}", False, lab, None) for i, lab in enumerate(labels)]


def answerable(
    model: str, condition: str, n: int, thinking: str = "off", label: str = "ANSWER", acc: float = 1.0
) -> list[tuple]:
    return [(model, thinking, condition, f"a{i}", True, label, acc) for i in range(n)]


def grid(model: str = "m", **labels: list[str]) -> list[tuple]:
    rows = []
    for condition, labs in labels.items():
        rows += unanswerable(model, condition, labs) + answerable(model, condition, 4)
    return rows


def project(tmp_path: Path, judged: pl.DataFrame | None, *, extra: str = "") -> config.RunConfig:
    """A throwaway project with the real params and paper source (and a run ``nopdf`` with ``extra``
    appended to its block); optionally a judged table for the default run."""
    (tmp_path / "params").mkdir()
    (tmp_path / "paper").mkdir()
    shutil.copy(projects.REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(projects.REPO / "paper" / "main.tex", tmp_path / "paper" / "main.tex")
    for name in ("default.yaml", "models.yaml", "paper_reported.yaml"):
        shutil.copy(projects.REPO / "params" / name, tmp_path / "params" / name)
    (tmp_path / "params" / "nopdf.yaml").write_text("base: default\npaper:\n  build_pdf: false\n" + extra)
    cfg = config.load(tmp_path / "params" / "default.yaml")
    if judged is not None:
        cfg.stage_dir("judge").mkdir(parents=True)
        judged.write_parquet(cfg.stage_dir("judge") / "judged.parquet")
    return cfg
