"""Tests for declinecraft.analysis.examples: the example rows of the paper."""

from __future__ import annotations

import polars as pl

from declinecraft.analysis import examples
from tests.support import judged_tables


class TestExampleRows:
    def frame(self, labels: dict[str, list[str]]) -> pl.DataFrame:
        rows = []
        for qid, labs in labels.items():
            for (model, condition), lab in zip(
                [("m1", "single"), ("m1", "no_rag"), ("m2", "single")], labs, strict=False
            ):
                rows.append((model, "off", condition, qid, False, lab, None))
        rows.append(("m1", "off", "single", "a0", True, "ANSWER", 1.0))
        frame = judged_tables.responses(rows)
        return frame.with_columns(
            question=pl.lit("Q ") + pl.col("question_id"),
            reference=pl.lit("ref"),
            response=pl.col("model") + pl.lit(" ") + pl.col("condition") + pl.lit(" ") + pl.col("label"),
        )

    def test_three_labels(self) -> None:
        """The question whose responses carry all three labels is chosen, single-shot first."""
        frame = self.frame({"u0": ["ABSTAIN", "ABSTAIN", "ANSWER"], "u1": ["DENY", "ABSTAIN", "ANSWER"]})
        out = examples.example_rows(frame, seed=3)
        assert out["part"].to_list() == [
            "Answerable",
            "",
            "Unanswerable",
            "Abstention",
            "Premise denial",
            "Confabulation",
        ]
        assert out["text"].to_list()[2:] == ["Q u1", "m1 no_rag ABSTAIN", "m1 single DENY", "m2 single ANSWER"]

    def test_missing_label(self) -> None:
        """Without a premise denial the table says so and counts the run's denials; seeded choice."""
        frame = self.frame({"u0": ["ABSTAIN", "ANSWER"], "u1": ["ANSWER", "ABSTAIN"]})
        a, b = (examples.example_rows(frame, seed=s)["question_id"][-1] for s in (0, 0))
        deny = examples.example_rows(frame, seed=0).filter(pl.col("part") == "Premise denial").row(0, named=True)
        assert a == b and deny["source"] == "(missing)" and "0 of its 4 labelled" in deny["text"]
