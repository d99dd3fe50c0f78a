"""Tests for declinecraft.views.evidence.validation: the validation sample."""

from __future__ import annotations

import polars as pl

from declinecraft.views.evidence import validation


class TestValidationSample:
    def test_stratified(self) -> None:
        """Per level at most per_level classified responses, levels in order, contexts joined, the
        annotator's columns empty; an unclassified response is never drawn."""
        rows = [
            ("r1", "L1", "ANSWER"),
            ("r2", "L1", "ANSWER"),
            ("r3", "L1", "ABSTAIN"),
            ("r4", "L3", "ANSWER"),
            ("r5", "L3", None),
        ]
        judged = pl.DataFrame(
            [
                {
                    "response_id": r,
                    "instance_id": f"i{lv}",
                    "level": lv,
                    "order": "",
                    "model": "m",
                    "prompt": "P1",
                    "question_id": "q",
                    "query": "Q?",
                    "response": "x",
                    "esb_judge": c,
                    "l5_type": None,
                }
                for r, lv, c in rows
            ],
            schema_overrides={"esb_judge": pl.String, "l5_type": pl.String},
        )
        instances = pl.DataFrame({"instance_id": ["iL1", "iL3"], "context": ["ctx1", "ctx3"]})
        sheet = validation.validation_sample(judged, instances, per_level=2, seed=0)
        assert sheet["level"].to_list() == ["L1", "L1", "L3"] and sheet["item_id"][2] == "r4"
        assert set(sheet["context"]) == {"ctx1", "ctx3"} and set(sheet["human_class"]) == {""}
        assert sheet.columns == [
            "item_id",
            "level",
            "order",
            "model",
            "prompt",
            "question_id",
            "query",
            "context",
            "response",
            "esb_judge",
            "l5_type",
            "level_valid",
            "human_class",
        ]  # what the model read and said, our class, and ESB 7.7's two checks for the annotator
