"""Tests for declinecraft.views.evidence.conflicts: finding each question's key values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import polars as pl

from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.views.evidence import conflicts
from tests.support import esb

NO_BUTTON = [t for t in esb.TITLES if t != "Button"]


class Ask:
    def __init__(self, text: str, **reply: object) -> None:
        self.text, self.reply, self.calls = text, reply, []

    def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.calls += list(calls)
        return [Reply(self.text, cache_key="k", **self.reply) for _ in calls]  # type: ignore[arg-type]


def questions() -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "id": "q1",
                "answerable": True,
                "question": "How often?",
                "asked_question": "How often?",
                "fact": "It presses a button every 20 seconds.",
                "target_chunk_id": "c1",
            },
            {
                "id": "q2",
                "answerable": True,
                "question": "Is it?",
                "asked_question": "Is it?",
                "fact": "The golem presses buttons.",
                "target_chunk_id": "c1",
            },  # no rule applies without the title Button
            {
                "id": "q3",
                "answerable": True,
                "question": "?",
                "asked_question": "?",
                "fact": "x",
                "target_chunk_id": "gone",
            },
            {
                "id": "u1",
                "answerable": False,
                "question": "?",
                "asked_question": "?",
                "fact": "y",
                "target_chunk_id": "p",
            },
        ]
    )


class TestFindValues:
    CHUNKS: ClassVar[dict[str, Chunk]] = {"c1": Chunk("c1", "Copper Golem", "u", esb.CHUNK)}

    def test_rule_then_model(self) -> None:
        """Rules first; the model only for the rest; unknown targets and unanswerable questions skipped."""
        ask = Ask('{"original": "presses buttons", "altered": "rings bells"}')
        got = conflicts.find_values(questions(), self.CHUNKS, titles=NO_BUTTON, related={}, ask=ask, seed=0)
        rows = {r["question_id"]: r for r in got.iter_rows(named=True)}
        assert sorted(rows) == ["q1", "q2"] and [c.prompt for c in ask.calls] == ["esb_conflict"]
        assert (rows["q1"]["source"], rows["q1"]["kind"]) == ("rule", "number")
        # the chunk says "presses a button", not the model's "presses buttons"
        assert (rows["q2"]["source"], rows["q2"]["reason"]) == ("model", "original_not_in_target")

    def test_rules_only_and_failures(self) -> None:
        """Without a model the rest gets a reason; a failed model call is a reason too."""
        got = conflicts.find_values(questions(), self.CHUNKS, titles=NO_BUTTON, related={}, ask=None, seed=0)
        assert got.filter(pl.col("question_id") == "q2")["reason"].to_list() == ["no_rule_value"]
        failed = conflicts.find_values(
            questions(), self.CHUNKS, titles=NO_BUTTON, related={}, ask=Ask("", error="HTTP 500"), seed=0
        )
        assert failed.filter(pl.col("question_id") == "q2")["reason"].to_list() == ["model_error"]

    def test_seeded(self) -> None:
        """The draws depend on the seed and the question only."""
        a = conflicts.find_values(questions(), self.CHUNKS, titles=esb.TITLES, related={}, ask=None, seed=0)
        b = conflicts.find_values(questions()[::-1], self.CHUNKS, titles=esb.TITLES, related={}, ask=None, seed=0)
        assert a.equals(b)
