"""Tests for declinecraft.paper.health_table: the run-health table whole, summed for the body when
it is long, and whole again as a table across pages for the appendix."""

from __future__ import annotations

import polars as pl

from declinecraft.analysis import run_health
from declinecraft.paper import health_table


def _many(models: int) -> pl.DataFrame:
    """Cut answers of ``models`` models under single-shot RAG: model i cut i of 10 (the last the most)."""
    frame = pl.DataFrame(
        {
            "model": [f"m-{i:02d}" for i in range(models)],
            "condition": ["single"] * models,
            "numerator": list(range(models)),
            "denominator": [10] * models,
        }
    )
    return run_health.finish(frame, "truncated", run_health.ANSWER_STAGE)


def _scored(models: int) -> pl.DataFrame:
    """Answerable questions scored per model: model i has 10 - i of 10 (the last the fewest)."""
    frame = pl.DataFrame(
        {
            "model": [f"m-{i:02d}" for i in range(models)],
            "condition": ["single"] * models,
            "numerator": [10 - i for i in range(models)],
            "denominator": [10] * models,
        }
    )
    return run_health.finish(frame, "accuracy_questions", run_health.ANALYSIS_STAGE)


class TestWhole:
    def test_one_row_per_model(self) -> None:
        """The whole table has a row per check and model, each a count of its n."""
        tex = health_table.health_tex(_many(3), min_n=6)
        assert tex.count("Answers cut at the output budget &") == 3
        assert "m-02 &  & 2 of 10 &" in tex

    def test_empty(self) -> None:
        """No counts: one sentence saying why, not an empty table."""
        assert "No run-health counts" in health_table.health_tex(run_health.empty(), min_n=6)


class TestSummary:
    def test_summed_with_the_worst(self) -> None:
        """Each check is one row: its counts summed over the models and the model that fares worst,
        the one with most cut answers or fewest questions scored (with the small-n caveat)."""
        frame = pl.concat([_many(5), _scored(5)])
        tex = health_table.summary_tex(frame, min_n=8)
        assert "Answers cut at the output budget & 5 &  & 10 of 50; most: m-04, 4 of 10 &" in tex
        assert "fewest: m-04, 6 of 10 (n = 6 questions, not interpretable at this n)" in tex
        assert len(health_table.summary_rows(frame, min_n=8)) == 2

    def test_nothing_wrong_names_no_model(self) -> None:
        """A check no model failed is its sum alone."""
        frame = _many(3).with_columns(numerator=pl.lit(0, pl.Int64))
        assert "0 of 30 &" in health_table.summary_tex(frame, min_n=6)
        assert "most:" not in health_table.summary_tex(frame, min_n=6)


class TestModelsTable:
    def test_longtable(self) -> None:
        """The appendix's table breaks across pages: a longtable with its header repeated, one row
        per model."""
        tex = health_table.models_tex(_many(45), min_n=6)
        assert "\\begin{longtable}" in tex and "\\endhead" in tex
        assert tex.count("Answers cut at the output budget &") == 45
        assert len(health_table.model_rows(_many(45), min_n=6)) > health_table.BODY_ROWS
