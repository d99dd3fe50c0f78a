"""Tests for declinecraft.views.evidence.partial: partial-support contexts."""

from __future__ import annotations

import polars as pl

from declinecraft.views.evidence import levels, partial
from tests.support import esb


class TestPartialSupport:
    def test_answer_sentence_cut(self) -> None:
        """The sentence holding the answer string goes; the header and the other sentences stay."""
        text = "[Page: Golem]\nThe golem has 20 health points. It is made of Iron. It walks slowly."
        assert partial.partial_chunk(text, "20 health", "It has 20 health.") == (
            "[Page: Golem]\nIt is made of Iron. It walks slowly.",
            "",
        )

    def test_fact_overlap_without_answer_string(self) -> None:
        """Without an answer string, the sentence holding most (at least half) of the fact's content
        words goes: {wolves, loyal} -> "Wolves are loyal to players." (2 of 2), not "Wolves eat." (1 of 2)."""
        text = "Wolves eat bones. Wolves are loyal to players. They live in forests."
        assert partial.partial_chunk(text, None, "Wolves are loyal.") == ("Wolves eat bones. They live in forests.", "")
        assert partial.partial_chunk("Cats purr.", None, "Wolves are loyal.") == (None, "no_answer_sentence")

    def test_nothing_left(self) -> None:
        """A chunk whose every sentence states the answer has no partial form."""
        assert partial.partial_chunk("It has 20 health. Really, 20 health.", "20 health", "") == (None, "nothing_left")

    def test_level_dropped_and_counted(self) -> None:
        """A one-sentence target gives no L2: a problem row and a failed quality check."""
        one = {**esb.CHUNKS, "t1": esb.chunk("t1", "Golem", "The golem has 20 health points.")}
        built = levels.build(
            esb.question(),
            one,
            retrieved={"q": ["o1", "t1"]},
            titles=["Golem", "Ore"],
            k=3,
            key_values=esb.key_values("20", "40", "number", "health"),
        )
        assert "L2" not in built.instances["level"].to_list()
        assert esb.problems(built)["partial_nothing_left"] == "L2 dropped"
        q = built.quality.filter(pl.col("check") == "answer_sentence_cut").row(0, named=True)
        assert (q["n_checked"], q["n_failed"]) == (1, 1)
