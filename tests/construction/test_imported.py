"""Tests for declinecraft.construction.imported: importing a released benchmark as a run, and
evaluating it from the LLM cache alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from declinecraft.construction import imported, release
from declinecraft.core import config
from tests.support import projects, releases


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A tiny project with run default's corpus built."""
    return releases.tiny_project(tmp_path)


class TestImportBenchmark:
    def test_minimal_run(self, root: Path) -> None:
        """Importing writes a run that reads 01-02 from the corpus run and owns 03-04, whose
        executed notebooks record the import, plus the Make rules that never run them."""
        source = releases.write_lines(root / "b.jsonl", releases.minimal_rows())
        done = imported.import_benchmark(source, "mine", root=root, corpus="default")
        cfg = config.load(done.params_file)
        assert [cfg.owner(s) for s in ("corpus", "index", "generate", "verify", "answer")] == [
            "default",
            "default",
            "mine",
            "mine",
            "mine",
        ]
        assert cfg.generate.n_answerable == 0 and (cfg.verify.target_answerable, cfg.verify.target_unanswerable) == (
            2,
            1,
        )
        bench = pl.read_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        assert bench.equals(done.benchmark) and done.matched_targets == 3
        record = json.loads((cfg.stage_dir("verify") / "import.json").read_text())
        assert record["schema"] == "minimal" and record["corpus_run"] == "default"
        for stem in imported.IMPORTED_STAGES:
            assert "imported by `make import`" in (cfg.run_dir() / "executed" / f"{stem}.ipynb").read_text()
        rules = (cfg.run_dir() / "params" / "imported.mk").read_text()
        assert "outputs/mine/executed/03_generate.ipynb outputs/mine/executed/04_verify.ipynb:\n\t@echo" in rules

    def test_corpus_needed(self, root: Path) -> None:
        """Without _meta.corpus and without CORPUS= the import says what to give."""
        with pytest.raises(release.ReleaseError, match="give CORPUS=<run>"):
            imported.import_benchmark(
                releases.write_lines(root / "b.jsonl", releases.minimal_rows()), "mine", root=root
            )

    def test_unbuilt_corpus(self, root: Path) -> None:
        """A corpus run whose index is not built is named, with the command that builds it."""
        shutil.rmtree(root / "outputs" / "default" / "02_index")
        with pytest.raises(release.ReleaseError, match="make nb NB=02 PARAMS=params/default.yaml"):
            imported.import_benchmark(
                releases.write_lines(root / "b.jsonl", releases.minimal_rows()), "mine", root=root, corpus="default"
            )

    def test_other_corpus(self, root: Path) -> None:
        """A file whose _meta fingerprint is another corpus's is refused."""
        rows = [{"_meta": {"corpus": "default", "corpus_fingerprint": "0000"}}, *releases.minimal_rows()]
        with pytest.raises(release.ReleaseError, match=r"b\.jsonl:1: _meta.corpus_fingerprint is '0000'"):
            imported.import_benchmark(releases.write_lines(root / "b.jsonl", rows), "mine", root=root)

    def test_keeps_hand_written_params(self, root: Path) -> None:
        """A params file not written by `make import` is never replaced; a generated one is."""
        source = releases.write_lines(root / "b.jsonl", releases.minimal_rows())
        (root / "params" / "hand.yaml").write_text("base: default\n")
        with pytest.raises(release.ReleaseError, match="hand.yaml exists and was not written by `make import`"):
            imported.import_benchmark(source, "hand", root=root, corpus="default")
        imported.import_benchmark(source, "mine", root=root, corpus="default")
        imported.import_benchmark(source, "mine", root=root, corpus="default")  # re-import replaces it


class TestOnePass:
    def test_every_error_at_once(self, root: Path) -> None:
        """Schema errors, a repeated id and targets in the wrong half: all in one error, one pass."""
        rows = releases.minimal_rows()
        rows[0]["answerable"] = "yes"
        rows[1]["colour"] = "red"
        rows[2]["target_page"] = "Page 2"
        rows.append({**releases.minimal_rows()[1], "id": "q1", "target_page": "New Mob"})
        with pytest.raises(release.ReleaseError) as info:
            imported.import_benchmark(releases.write_lines(root / "b.jsonl", rows), "mine", root=root, corpus="default")
        lines = str(info.value).splitlines()[1:]
        assert [line.split(": ", 1)[1] for line in lines] == [
            "answerable: 'yes' is not of type 'boolean' (minimal schema)",
            "Additional properties are not allowed ('colour' was unexpected) (minimal schema)",
            "target page 'Page 2' is a C_pre page, but the question is unanswerable (its page must be in C_post)",
            "id 'q1' repeats line 1",
            "target page 'New Mob' is a C_post page, but the question is answerable (its page must be in C_pre)",
        ]
        assert [line.split(": ", 1)[0].rsplit(":", 1)[1] for line in lines] == ["1", "2", "3", "4", "4"]
        assert not (root / "params" / "mine.yaml").exists()


@pytest.mark.slow
def test_make_never_runs_03_04(tmp_path: Path) -> None:
    """`make all` of an imported run plans stages 05-10 of its own and neither its nor the corpus
    run's 03-04; `make nb NB=04` on it is refused."""
    root = projects.make_project(tmp_path / "make")
    cfg = config.load(root / "params" / "default.yaml")
    projects.write_corpus(cfg, releases.TEXTS)
    cfg.stage_dir("index").mkdir(parents=True)
    (cfg.stage_dir("index") / "manifest.json").write_text("{}")
    imported.import_benchmark(
        releases.write_lines(root / "b.jsonl", releases.minimal_rows()), "mine", root=root, corpus="default"
    )
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "MAKEFLAGS": ""}
    plan = subprocess.run(
        ["make", "-n", "pipeline", "RUN=mine", f"PY={sys.executable}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert plan.returncode == 0, plan.stderr[-2000:]
    stages = [line.split("] ")[1].strip('"') for line in plan.stdout.splitlines() if line.startswith('echo ">> [')]
    assert [s for s in stages if s[:2] in {"03", "04"}] == []
    assert {"05_answer", "06_judge", "07_analysis", "10_paper"} <= set(stages)
    refused = subprocess.run(
        ["make", "nb", "NB=04", "RUN=mine", f"PY={sys.executable}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert refused.returncode != 0 and "imports its benchmark" in refused.stderr
