"""Builders of throwaway projects for the end-to-end tests: params, a tiny corpus, a benchmark."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from declinecraft.core.config import RunConfig

REPO = Path(__file__).resolve().parents[2]


def copy_project(root: Path) -> Path:
    """A project at ``root`` with the repository's pyproject, default params, models, prompts and
    the judges' check set."""
    (root / "params").mkdir(parents=True)
    shutil.copy(REPO / "pyproject.toml", root)
    for name in ("default.yaml", "models.yaml"):
        shutil.copy(REPO / "params" / name, root / "params")
    shutil.copytree(REPO / "params" / "prompts", root / "params" / "prompts")
    shutil.copytree(REPO / "data" / "judge_check", root / "data" / "judge_check")  # judge.check_file
    return root


def make_project(root: Path) -> Path:
    """A copy at ``root`` of what Make reads (Makefile, pyproject, sources, notebooks, params,
    data), marked as set up, for tests that ask Make what it would run."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(REPO / name, root / name)
    for name in ("src", "notebooks", "params", "data"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (root / ".venv").mkdir()
    (root / ".venv" / ".setup-done").touch()
    return root


def write_corpus(cfg: RunConfig, texts: Mapping[str, str]) -> None:
    """Corpus-stage files: C_pre chunks ``texts`` (ids ``c1``…, page ``Page <n>``) and one C_post page."""
    when = datetime(2024, 1, 1, tzinfo=UTC)
    corpus = cfg.stage_dir("corpus")
    corpus.mkdir(parents=True)
    for half in ("pre", "post"):
        ids = list(texts) if half == "pre" else ["post1"]
        pl.DataFrame(
            {
                "chunk_id": ids,
                "title": [f"Page {c[1:]}" if half == "pre" else "New Mob" for c in ids],
                "text": [texts.get(c, "[Page: New Mob]\nThe new mob glows.") for c in ids],
                "url": [f"http://wiki/{c}" for c in ids],
                "revision_id": list(range(len(ids))),
                "timestamp": [when] * len(ids),
                "corpus": [half] * len(ids),
            }
        ).write_parquet(corpus / f"chunks_{half}.parquet")
        pages = {"pre": ["Page 1", "Page 2"], "post": ["New Mob"]}[half]
        pl.DataFrame({"title": pages, "text": ["Whole page text."] * len(pages)}).write_parquet(
            corpus / f"pages_{half}.parquet"
        )


def write_benchmark(cfg: RunConfig, bench: pl.DataFrame) -> None:
    """The verify stage's benchmark of a tiny project: 2 answerable and 1 unanswerable question."""
    bench = bench.with_columns(
        target_title=pl.Series(["Page 1", "Page 2", "New Mob"]),
        target_url=pl.lit("http://wiki/x"),
        scenario_chunk_ids=pl.Series([["c2", "c3"]] * 3),
    )
    cfg.stage_dir("verify").mkdir(parents=True)
    bench.write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
