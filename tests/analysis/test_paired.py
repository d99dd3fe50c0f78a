"""Tests for declinecraft.analysis.paired: the paired tests and their corrections."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.analysis import paired
from tests.support import judged_tables


class TestPairedAbstention:
    def test_mcnemar_counts(self) -> None:
        """12 abstentions lost and none gained: p = 2 * 0.5**12."""
        rows = judged_tables.unanswerable(
            "m", "single", ["ABSTAIN"] * 12 + ["ANSWER"] * 3
        ) + judged_tables.unanswerable("m", "iterative", ["DENY"] * 12 + ["ANSWER"] * 3)
        out = paired.paired_abstention(
            judged_tables.responses(rows), group=["model"], column="condition", base="single", other="iterative"
        )
        row = out.row(0, named=True)
        assert (row["lost"], row["gained"], row["n_pairs"]) == (12, 0, 15)
        assert row["p"] == pytest.approx(2 * 0.5**12) and row["direction"] == "decrease"

    def test_lenient(self) -> None:
        """Under the lenient rule DENY counts as abstaining, so nothing is lost."""
        rows = judged_tables.unanswerable("m", "single", ["ABSTAIN"] * 5) + judged_tables.unanswerable(
            "m", "iterative", ["DENY"] * 5
        )
        out = paired.paired_abstention(
            judged_tables.responses(rows),
            group=["model"],
            column="condition",
            base="single",
            other="iterative",
            lenient=True,
        )
        assert out["p"][0] == 1.0 and out["note"][0] == "no discordant pairs"

    def test_budget_pairs_left_out(self) -> None:
        """A budget-exhausted response on either side drops the pair."""
        rows = judged_tables.unanswerable("m", "single", ["ABSTAIN", None, "ABSTAIN"]) + judged_tables.unanswerable(
            "m", "iterative", ["ANSWER", "ANSWER", None]
        )
        out = paired.paired_abstention(
            judged_tables.responses(rows), group=["model"], column="condition", base="single", other="iterative"
        )
        assert out["n_pairs"][0] == 1 and out["lost"][0] == 1


class TestWithBh:
    def test_per_family(self) -> None:
        """q values come from stats.benjamini_hochberg within each family."""
        table = pl.DataFrame({"family": ["a", "a", "b"], "p": [0.01, 0.04, 0.04]})
        out = paired.with_bh(table, alpha=0.05)
        assert out["q"].to_list() == pytest.approx([0.02, 0.04, 0.04])
        assert out["significant"].to_list() == [True, True, True]


class TestMainGridTests:
    def test_thinking_in_family(self) -> None:
        """Thinking on vs off joins the main-grid family when a model has both settings."""
        rows = []
        for thinking, labs in (("off", ["ABSTAIN"] * 8), ("on", ["DENY"] * 8)):
            for cond in ("no_rag", "single", "iterative"):
                rows += judged_tables.unanswerable("m", cond, labs, thinking) + judged_tables.answerable(
                    "m", cond, 2, thinking
                )
        out = paired.main_grid_tests(judged_tables.responses(rows))
        think = out.filter(pl.col("comparison") == "thinking_on_vs_off")
        assert think.height == 3 and set(out["family"]) == {"main_grid"}
        assert (think["lost"] == 8).all()


class TestAblationTests:
    def test_absent_ablation(self) -> None:
        """A run without the ablation gives an empty table with the paired columns."""
        out = paired.ablation_tests(pl.DataFrame(), family="x", column="pipeline", base="hybrid")
        assert out.height == 0 and out.columns == list(paired.PAIRED_COLUMNS)

    def test_pipelines(self, synth: dict[str, pl.DataFrame]) -> None:
        """Five alternative pipelines against hybrid for each of the ablation configurations."""
        pipes = synth["paired_tests"].filter(pl.col("family") == "pipeline_ablation")
        assert pipes.height == 5 * 10 and pipes["q"].is_not_nan().all()


class TestThinkingTransitionsTable:
    def test_counts(self) -> None:
        """Per model and condition: the transition counts of stats.thinking_transitions."""
        off = ["ABSTAIN"] * 6 + ["DENY"] * 2 + ["ANSWER"]
        on = ["DENY"] * 5 + ["ANSWER"] + ["ABSTAIN", "DENY", "ABSTAIN"]
        rows = judged_tables.unanswerable("m", "no_rag", off, "off") + judged_tables.unanswerable(
            "m", "no_rag", on, "on"
        )
        out = paired.thinking_transitions_table(judged_tables.responses(rows)).row(0, named=True)
        assert (out["a_to_d"], out["d_to_a"], out["a_to_x"], out["x_to_a"], out["n"]) == (5, 1, 1, 1, 9)
        assert out["net_shift"] == pytest.approx(4 / 9)

    def test_no_pairs(self) -> None:
        """Without thinking pairs the table is empty but has every column."""
        out = paired.thinking_transitions_table(
            judged_tables.responses(judged_tables.unanswerable("m", "no_rag", ["ABSTAIN"]))
        )
        assert out.height == 0 and "sig_ad" in out.columns


class TestSignificanceCounts:
    def test_counts(self) -> None:
        """Significant increases and decreases are counted per comparison."""
        table = pl.DataFrame(
            {
                "family": ["f"] * 3,
                "comparison": ["c"] * 3,
                "p": [0.01, 0.01, 0.5],
                "significant": [True, True, False],
                "direction": ["increase", "decrease", "increase"],
            }
        )
        row = paired.significance_counts(table).row(0, named=True)
        assert (row["n_tests"], row["n_increase"], row["n_decrease"]) == (3, 1, 1)
