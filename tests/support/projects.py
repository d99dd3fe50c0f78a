"""Builders of throwaway projects for the end-to-end tests: params, a tiny corpus, a benchmark."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.config import RunConfig

REPO = Path(__file__).resolve().parents[2]
#: The stages' notebooks in run order.
STAGES = [s.notebook for s in catalogue.STAGES.values()]


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


def make_env(project: Path) -> dict[str, str]:
    """The environment in which Make runs ``project``'s own code."""
    return {**os.environ, "PYTHONPATH": str(project / "src"), "MAKEFLAGS": ""}


def would_run(project: Path, env: Mapping[str, str]) -> list[str]:
    """The stages ``make -n pipeline`` would run in ``project``, in run order."""
    command = ["make", "-n", "pipeline", f"PY={sys.executable}"]
    out = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return [s for s in STAGES if f">> [default] {s}" in out.stdout]


def built_project(root: Path) -> Path:
    """A copy of what Make reads at ``root`` whose every stage looks built: params stamped,
    outputs recorded (a stand-in ``judged.parquet``), executed notebooks newer than every input."""
    project = make_project(root)
    env = make_env(project)
    assert would_run(project, env) == STAGES  # nothing built yet
    assert not (project / "outputs").exists()  # make -n writes no stamp
    for module in ("config", "pipeline"):
        stamp = [sys.executable, "-m", f"declinecraft.core.{module}", "stamp", "params/default.yaml"]
        subprocess.run(stamp, cwd=project, env=env, check=True, capture_output=True)
    judged = project / "outputs" / "default" / "06_judge" / "judged.parquet"
    judged.parent.mkdir(parents=True)
    judged.write_bytes(b"responses")
    base = time.time() - 100_000
    for path in project.rglob("*"):
        if path.is_file():
            os.utime(path, (base, base))
    executed = project / "outputs" / "default" / "executed"
    executed.mkdir(parents=True)
    for i, (block, declared) in enumerate(catalogue.STAGES.items()):
        stamp = project / "outputs" / "default" / "params" / f"{block}.yaml"
        record = [sys.executable, "-m", "declinecraft.core.pipeline", "record", str(stamp)]
        subprocess.run(record, cwd=project, env=env, check=True)
        (executed / f"{declared.notebook}.ipynb").touch()
        os.utime(executed / f"{declared.notebook}.ipynb", (base + 10 + i, base + 10 + i))
    assert would_run(project, env) == []
    return project


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
