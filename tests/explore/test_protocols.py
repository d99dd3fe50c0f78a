"""Tests for declinecraft.explore.protocols: Know2Guess decisions beside the judged responses."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft import explore


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": ["m", "m", "m"],
            "thinking": ["off"] * 3,
            "setting": ["no_rag", "single", "iterative"],
            "question_id": ["q1"] * 3,
            "label": ["ANSWER", "ABSTAIN", "ANSWER"],
        }
    )


class TestWithKnow2Guess:
    def test_joins_standard_strict(self, tmp_path: Path) -> None:
        """The standard-prompt, strict-parser decision lands on the no-RAG and single-shot rows only."""
        rows = [
            ("m", "off", c, p, parser, "q1", state, conf, ans)
            for c, state in (("no_rag", "ANSWER"), ("single", "ABSTAIN_DONT_KNOW"))
            for p in ("standard", "compact")
            for parser, conf, ans in (("strict", 0.9, "x"), ("normalized", 0.1, "y"))
        ]
        pl.DataFrame(
            rows,
            schema=[
                "model",
                "thinking",
                "condition",
                "prompt",
                "parser",
                "question_id",
                "state",
                "confidence",
                "answer",
            ],
            orient="row",
        ).write_csv(tmp_path / "know2guess_decisions.csv")
        out = explore.with_know2guess(_frame(), tmp_path)
        assert out["k2g_state"].to_list() == ["ANSWER", "ABSTAIN_DONT_KNOW", None]
        assert out["k2g_confidence"].to_list() == [0.9, 0.9, None] and out.height == 3

    def test_without_the_view(self, tmp_path: Path) -> None:
        """Before the view has run the columns are there, all null."""
        out = explore.with_know2guess(_frame(), tmp_path / "08_know2guess")
        assert out["k2g_state"].null_count() == 3 and set(explore.protocols.KNOW2GUESS_COLUMNS) <= set(out.columns)
