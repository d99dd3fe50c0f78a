"""Tests for declinecraft.analysis.stage: stage 07 on a hand-built run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import annotation, stage
from tests.support import judged_tables, synthetic


class TestStageRun:
    def test_writes_tables(self, tmp_path: Path) -> None:
        """A judged table gives every CSV, the paper tables and status ok, all in the result."""
        cfg = judged_tables.project(tmp_path, synthetic.synthetic_judged(6, 60))
        result = stage.run(cfg)
        out = cfg.run_dir() / "07_analysis"
        status = json.loads((out / "status.json").read_text())
        assert status["status"] == "ok" and result.ok and result.folder == out and result.reason == ""
        assert (
            (out / "main_grid.csv").is_file()
            and (out / "table02.csv").is_file()
            and (out / "annotation_sample.html").is_file()
        )
        assert status["tables"] == sorted(result.tables) and result.rows == status["rows"] == 6 * 3 * 60
        assert {f"{name}.csv" for name in result.tables} <= set(result.files())
        assert isinstance(result.paper_tables["table02"], pl.DataFrame) and isinstance(
            result.paper_tables["table10"], str
        )
        assert result.annotators == () and result.tables["annotation_sample"].height > 0
        means, counts, assoc = result.headline()
        assert set(means["metric"]) == {"car", "attempt", "accuracy"} and counts.height and assoc.height
        assert result.explain() is result.tables["notes"]

    def test_no_input(self, tmp_path: Path) -> None:
        """Without a judged table the stage records why and still writes the facts, Tables 11 and 12
        and the run health (what it could not count named in its ``missing`` rows)."""
        cfg = judged_tables.project(tmp_path, None)
        result = stage.run(cfg)
        out = cfg.run_dir() / "07_analysis"
        assert json.loads((out / "status.json").read_text())["status"] == "no_input"
        assert (out / "table11.csv").is_file() and (out / "table12.csv").is_file() and (out / "facts.csv").is_file()
        assert result.status == "no_input" and not result.ok and "judged.parquet" in result.reason
        assert sorted(result.tables) == ["facts", "run_health"] and result.rows == 0
        assert "missing" in result.tables["run_health"]["measure"].to_list() and (out / "run_health.csv").is_file()
        assert result.headline() == [] and result.explain() == result.reason

    def test_frozen(self, tmp_path: Path) -> None:
        """The result cannot be changed after the stage returns it."""
        result = stage.run(judged_tables.project(tmp_path, None))
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.status = "ok"  # type: ignore[misc]

    def test_reads_annotators(self, tmp_path: Path) -> None:
        """Annotators' labels in data/annotations/<run>/ give Table 10 (human_agreement)."""
        cfg = judged_tables.project(tmp_path, synthetic.synthetic_judged(6, 60))
        sample = stage.run(cfg).tables["annotation_sample"]
        folder = annotation.annotation_dir(cfg)
        folder.mkdir(parents=True)
        for name, flip in (("ann1", False), ("ann2", True)):
            rows = [
                f"{item},{'DENY' if flip else (label or '')},{score if score is not None else ''}"
                for item, label, score in zip(
                    sample["item_id"], sample["judge_label"], sample["judge_score"], strict=True
                )
            ]
            (folder / f"{name}.csv").write_text("item_id,label,score\n" + "\n".join(rows) + "\n")
        result = stage.run(cfg)
        assert result.annotators == ("ann1", "ann2") and result.tables["human_agreement"].height
        assert isinstance(result.paper_tables["table10"], pl.DataFrame)
