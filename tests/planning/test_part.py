"""Tests for declinecraft.planning.part: one kind of planned call and the sizes a plan works from."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.core import config
from declinecraft.planning import part


def a_part(what: str, low: int, high: int) -> part.Part:
    return part.Part("06_judge", "m", what, low, high, prompt_chars=100, output_tokens=5, budget=16)


class TestPart:
    def test_exact_and_expected(self) -> None:
        """A count is exact when its bounds meet; a judge's bound (each item asked twice at most)
        counts each item once, any other call at its upper bound."""
        assert a_part("oracle", 14, 14).exact and not a_part("judge_response", 0, 168).exact
        assert a_part("judge_response", 0, 168).expected == 84 and a_part("reflect", 14, 28).expected == 28


class TestSizes:
    def test_stand_in_at_targets(self, project: Path) -> None:
        """Before stage 04 the plan works from the verify targets, ids a… and u… in two halves."""
        sizes = part.sizes(config.load(project / "params" / "default.yaml"))
        assert (sizes.answerable, sizes.unanswerable, sizes.from_benchmark) == (10, 4, False)
        assert sizes.frame["id"][0] == "a00000" and part.halves(sizes.frame) == (10, 4)


class TestDistinctQueries:
    def test_same_text_one_call(self) -> None:
        """Two questions of the same text make one call (with the scenario, or the asked question alone)."""
        frame = pl.DataFrame(
            {"question": ["S1 Q?", "S2 Q?", "S1 Q?"], "asked_question": ["Q?", "Q?", "Q?"], "id": ["a", "b", "c"]}
        )
        assert (part.distinct_queries(frame, True), part.distinct_queries(frame, False)) == (2, 1)
        assert part.distinct_queries(frame.drop("question"), True) == 3  # a stand-in counts its rows


class TestSizesOfCalls:
    def test_chunk_chars(self) -> None:
        """A chunk in a prompt is cut only when the cut is positive, plus its header."""
        assert part.chunk_chars(1500, 800) == 800 + part.CHUNK_OVERHEAD
        assert part.chunk_chars(1500, 0) == 1500 + part.CHUNK_OVERHEAD

    def test_output_of(self) -> None:
        """Typical output tokens, thinking added, never above the budget."""
        assert part.output_of("answer", 256, thinking=False) == 256
        assert part.output_of("reflect", 256, thinking=False) == part.OUTPUT_TOKENS["reflect"]
        assert part.output_of("reflect", 16_000, thinking=True) == part.OUTPUT_TOKENS["reflect"] + part.THINK_TOKENS
