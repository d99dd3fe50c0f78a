"""Tests for declinecraft.evaluation.leaderboard: the table `make evaluate` prints."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import config
from declinecraft.evaluation import leaderboard
from tests.support import projects


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A project with the repository's default params and model registry."""
    return projects.copy_project(tmp_path / "project")


def summary(rows: list[dict]) -> pl.DataFrame:
    """A 07_analysis/summary.csv-like frame: one row per model on several settings."""
    base = {
        "thinking": "off",
        "pipeline": "hybrid",
        "k": 5,
        "scenario": True,
        "prompt_variant": "default",
        "accuracy": 0.5,
        "accuracy_low": 0.4,
        "accuracy_high": 0.6,
    }
    return pl.DataFrame([{**base, **r} for r in rows])


class TestLeaderboard:
    def write(self, root: Path, rows: list[dict]) -> config.RunConfig:
        cfg = config.load(root / "params" / "default.yaml")
        cfg.stage_dir("analysis").mkdir(parents=True)
        summary(rows).write_csv(cfg.stage_dir("analysis") / "summary.csv")
        return cfg

    def test_rows_and_rank(self, root: Path) -> None:
        """Only the single-shot row at the run's k counts; Bal. F1 = 2A/(2+A-C) ranks the models,
        its range spans the two Wilson intervals."""
        cfg = self.write(
            root,
            [
                {
                    "model": "a",
                    "condition": "single",
                    "car": 0.2,
                    "car_low": 0.1,
                    "car_high": 0.3,
                    "attempt": 0.9,
                    "attempt_low": 0.8,
                    "attempt_high": 0.95,
                },
                {
                    "model": "b",
                    "condition": "single",
                    "car": 0.8,
                    "car_low": 0.7,
                    "car_high": 0.9,
                    "attempt": 0.9,
                    "attempt_low": 0.8,
                    "attempt_high": 0.95,
                },
                {
                    "model": "b",
                    "condition": "no_rag",
                    "pipeline": "none",
                    "k": 0,
                    "car": 1.0,
                    "car_low": 1.0,
                    "car_high": 1.0,
                    "attempt": 1.0,
                    "attempt_low": 1.0,
                    "attempt_high": 1.0,
                },
            ],
        )
        table = leaderboard.leaderboard(cfg)
        assert table["model"].to_list() == ["b", "a"] and table["rank"].to_list() == [1, 2]
        assert table["bal_f1"][0] == pytest.approx(2 * 0.9 / (2 + 0.9 - 0.8))
        assert table["bal_f1_low"][0] == pytest.approx(2 * 0.8 / (2 + 0.8 - 0.7))
        text = leaderboard.render(table, highlight="a")
        assert text.splitlines()[2].startswith(">") and "20.0 [10.0, 30.0]" in text

    def test_condition_rows(self, root: Path) -> None:
        """Every condition's row of the main setting is kept; other k, prompts and no scenario are not."""
        rate = {"car": 0.5, "car_low": 0.4, "car_high": 0.6, "attempt": 0.5, "attempt_low": 0.4, "attempt_high": 0.6}
        cfg = self.write(
            root,
            [
                {"model": "a", "condition": "no_rag", "pipeline": "none", "k": 0, **rate},
                {"model": "a", "condition": "single", **rate},
                {"model": "a", "condition": "iterative", **rate},
                {"model": "a", "condition": "single", "k": 10, **rate},
                {"model": "a", "condition": "single", "prompt_variant": "temporal", **rate},
                {"model": "a", "condition": "single", "scenario": False, **rate},
            ],
        )
        rows = leaderboard.condition_rows(cfg)
        assert rows["condition"].to_list() == ["no_rag", "single", "iterative"]
        assert leaderboard.run_rows(cfg).height == 1

    def test_published_rows(self) -> None:
        """Table 2's published rows are read from paper_reported.yaml, their Bal. F1 as published."""
        table = leaderboard.published_rows(projects.REPO)
        row = table.filter(pl.col("model") == "Gemma 4 31B", pl.col("thinking") == "off").row(0, named=True)
        assert (row["car"], row["car_low"], row["bal_f1"]) == pytest.approx((0.833, 0.787, 0.901))
        assert table.height == 6 and set(table["thinking"]) == {"on", "off"}

    def test_paper_benchmark(self, root: Path) -> None:
        """The published rows join only a run that is, or derives from, the paper's run."""
        (root / "params" / "paper.yaml").write_text("description: paper\n")
        (root / "params" / "mine.yaml").write_text("base: paper\n")
        assert leaderboard.is_paper_benchmark(config.load(root / "params" / "mine.yaml"))
        assert not leaderboard.is_paper_benchmark(config.load(root / "params" / "default.yaml"))

    def test_missing_analysis(self, root: Path) -> None:
        """Without the analysis the error names summary.csv."""
        with pytest.raises(FileNotFoundError, match="07_analysis/summary.csv"):
            leaderboard.leaderboard(config.load(root / "params" / "default.yaml"))

    def test_nan_accuracy(self, root: Path) -> None:
        """A setting without accuracy prints n/a instead of a number."""
        cfg = self.write(
            root,
            [
                {
                    "model": "a",
                    "condition": "single",
                    "car": 0.5,
                    "car_low": 0.4,
                    "car_high": 0.6,
                    "attempt": 0.5,
                    "attempt_low": 0.4,
                    "attempt_high": 0.6,
                    "accuracy": math.nan,
                }
            ],
        )
        assert "n/a" in leaderboard.render(leaderboard.leaderboard(cfg))
