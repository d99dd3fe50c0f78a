"""Tests for declinecraft.paper.number_sources: the getters that read each quoted number off the
analysis tables, on small hand-made tables."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.paper import number_sources

TABLES = {
    "condition_means": pl.DataFrame(
        {"condition": ["single", "no_rag"], "metric": ["car", "car"], "mean": [0.25, None], "note": ["", "no models"]}
    ),
    "main_grid": pl.DataFrame(
        {
            "condition": ["single", "single", "no_rag"],
            "model": ["a", "b", "a"],
            "thinking": ["off", "off", "off"],
            "car": [0.1, 0.4, 0.9],
            "config_label": ["A", "B", "A"],
        }
    ),
    "judge_agreement": pl.DataFrame(
        {
            "judge_a": ["all", "score_x", "score_x"],
            "judge_b": [None, "score_y", "score_z"],
            "kappa": [0.5, 0.6, 0.7],
            "mean_diff": [None, 0.05, -0.2],
        }
    ),
    "empty": pl.DataFrame({"x": []}),
}


class TestTable:
    def test_missing_or_empty(self) -> None:
        """A table the run lacks, or an empty one, is Missing with the reason."""
        assert number_sources.table(TABLES, "main_grid").height == 3
        for name in ("absent", "empty"):
            with pytest.raises(number_sources.Missing, match=f"no {name} results in this run"):
                number_sources.table(TABLES, name)


class TestOne:
    def test_value_or_note(self) -> None:
        """The first matching row's value; a null value is Missing with the row's note, no row Missing too."""
        means = number_sources.table(TABLES, "condition_means")
        assert number_sources.one(means, "mean", "x", condition="single") == 0.25
        with pytest.raises(number_sources.Missing, match="mean car: no models"):
            number_sources.one(means, "mean", "mean car", condition="no_rag")
        with pytest.raises(number_sources.Missing, match="no row for iterative"):
            number_sources.one(means, "mean", "iterative", condition="iterative")


class TestGetters:
    def test_mean(self) -> None:
        """``mean`` reads condition_means for its condition and metric."""
        assert number_sources.mean("single")(TABLES) == 0.25
        with pytest.raises(number_sources.Missing):
            number_sources.mean("no_rag")(TABLES)

    def test_counts(self) -> None:
        """Rows and distinct values matching a filter."""
        assert number_sources.count_rows("main_grid", "configs", condition="single")(TABLES) == 2
        assert number_sources.n_unique("main_grid", "model")(TABLES) == 2

    def test_grid_extreme(self) -> None:
        """Minimum and maximum over single-shot configurations only (the no-RAG 0.9 is not one)."""
        assert (
            number_sources.grid_extreme("car", "min")(TABLES),
            number_sources.grid_extreme("car", "max")(TABLES),
        ) == (0.1, 0.4)

    def test_widest_judge_pair(self) -> None:
        """The pair whose mean difference is farthest from 0, named as Table 5 names it."""
        assert number_sources.widest_judge_pair("judges")(TABLES) == "x vs z"
        assert number_sources.widest_judge_pair("mean_diff")(TABLES) == -0.2
        assert number_sources.judge_agreement("kappa")(TABLES) == 0.5

    def test_frontier(self) -> None:
        """The configuration that reaches the attempt-rate requirement, by its printed label; none is Missing."""
        frontier = pl.DataFrame(
            {"condition": ["single", "single"], "best_at_min_attempt": [False, True], "model": ["a", "b"]}
        )
        t = {**TABLES, "frontier": frontier.with_columns(thinking=pl.lit("off"), car=pl.Series([0.1, 0.4]))}
        assert (number_sources.frontier("single", "label")(t), number_sources.frontier("single", "car")(t)) == (
            "B",
            0.4,
        )
        with pytest.raises(number_sources.Missing, match="no no_rag configuration reaches"):
            number_sources.frontier("no_rag", "car")(t)
