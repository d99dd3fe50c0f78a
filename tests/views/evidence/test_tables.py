"""Tests for declinecraft.views.evidence.tables: the view's tables, and on empty input."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views.evidence import tables


class TestMemoryAccuracy:
    def test_by_hand(self) -> None:
        """ESB's error diagnostic: answers at L3-L4, judged against the reference. Three L3/L4 answers
        score 1, 0, 1 and one abstains (left out); an L1 answer does not count -> 2/3 of 3 answers."""
        rows = [
            ("q1", "L3", "ANSWER", 1.0),
            ("q2", "L3", "ANSWER", 0.0),
            ("q1", "L4", "ANSWER", 1.0),
            ("q2", "L4", "ABSTAIN", 0.0),
            ("q1", "L1", "ANSWER", 0.0),
        ]
        frame = pl.DataFrame(
            [
                {
                    "model": "m",
                    "thinking": "off",
                    "prompt": "P1",
                    "order": "",
                    "question_id": q,
                    "instance_id": f"{q}{lv}",
                    "level": lv,
                    "esb_judge": c,
                    "abstained": c == "ABSTAIN",
                    "answered": c == "ANSWER",
                    "accuracy": a,
                    "known_wrong": None,
                    "gold_adopted": None,
                    "l5_type": None,
                }
                for q, lv, c, a in rows
            ],
            schema_overrides={"known_wrong": pl.Boolean, "gold_adopted": pl.Boolean, "l5_type": pl.String},
        )
        r = tables.summary(frame, tables.Boot(100)).row(0, named=True)
        assert r["memory_accuracy"] == pytest.approx(2 / 3) and (r["n_memory_answers"], r["n_memory_accuracy"]) == (
            3,
            3,
        )


class TestTablesEmpty:
    def test_no_responses(self) -> None:
        """A run without responses gives empty tables, not an error."""
        frame = pl.DataFrame(
            schema={
                "model": pl.String,
                "thinking": pl.String,
                "prompt": pl.String,
                "level": pl.String,
                "order": pl.String,
                "question_id": pl.String,
                "instance_id": pl.String,
                "esb_judge": pl.String,
                "abstained": pl.Boolean,
                "answered": pl.Boolean,
                "accuracy": pl.Float64,
                "known_wrong": pl.Boolean,
                "gold_adopted": pl.Boolean,
                "l5_type": pl.String,
            }
        )
        boot = tables.Boot(100)
        assert tables.curve(frame, boot).is_empty() and tables.summary(frame, boot).is_empty()
        assert tables.position_bias(frame).is_empty() and tables.prompt_effects(frame).is_empty()
        assert tables.l5_types(frame).is_empty()
