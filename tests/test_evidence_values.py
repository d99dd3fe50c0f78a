"""Key values, conflicting copies and value matching (declinecraft.views.evidence.values, .conflicts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import polars as pl
import pytest

from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.views.evidence import conflicts, values
from declinecraft.views.evidence.values import KeyValue

CHUNK = "[Page: Copper Golem]\nThe copper golem presses a button every 20 seconds. It drops 3 copper ingots."
FACT = "The golem presses a button every 20 seconds; it wanders slowly and glows."
TITLES = ["Copper Golem", "Copper Ingot", "Iron Ingot", "Gold Nugget", "Button", "Ore"]
NO_BUTTON = [t for t in TITLES if t != "Button"]


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


class TestContains:
    @pytest.mark.parametrize(
        ("text", "value", "want"),
        [
            ("every 20 seconds", "20 seconds", True),
            ("every 120 seconds", "20 seconds", False),  # inside a longer number
            ("version 1.20.5", "20", False),
            ("drops 3 copper ingots", "Copper Ingot", True),  # plural and case
            ("a copperingot", "Copper Ingot", False),
            ("", "x", False),
            ("anything", "  ", False),
        ],
    )
    def test_matching(self, text: str, value: str, want: bool) -> None:
        """Whole tokens at the start, case-insensitive; plurals match; numbers never match inside numbers."""
        assert values.contains(text, value) is want


class TestRules:
    def test_number_with_unit(self) -> None:
        """The fact's number, with its unit when the chunk has the phrase; the change is absent from the chunk."""
        kv = values.number_value("It presses a button every 20 seconds.", "How often?", CHUNK, rng())
        assert kv is not None and (kv.kind, kv.original, kv.unit) == ("number", "20", "seconds")
        assert kv.altered in values.altered_numbers("20") and not values.contains(CHUNK, kv.altered_string)

    def test_number_in_question_is_not_the_answer(self) -> None:
        """A number the question already states is skipped; the next one is taken."""
        kv = values.number_value("After 20 seconds it drops 3 copper ingots.", "What after 20 seconds?", CHUNK, rng())
        assert kv is not None and (kv.original, kv.unit) == ("3", "copper")

    def test_number_absent_from_chunk(self) -> None:
        """A number the target chunk does not state cannot be altered in it."""
        assert values.number_value("It has 7 lives.", "How many?", CHUNK, rng()) is None

    def test_altered_numbers(self) -> None:
        """Replacements keep the format (commas, decimals), differ and stay positive."""
        assert values.altered_numbers("20")[:3] == ["40", "60", "10"]
        assert "2,000" in values.altered_numbers("1,000")
        assert all("." in n for n in values.altered_numbers("0.5"))
        assert "1" not in values.altered_numbers("1")

    def test_named_item(self) -> None:
        """The longest title the fact and chunk name, never the own page, swapped for a related title."""
        related = ["Gold Nugget", "Copper Golem"]
        kv = values.name_value(
            "It drops a Copper Ingot.",
            "What does it drop?",
            CHUNK,
            TITLES,
            own_title="Copper Golem",
            related=related,
            rng=rng(),
        )
        assert kv == KeyValue("name", "Copper Ingot", "Gold Nugget")

    def test_named_item_pool_falls_back_to_all_titles(self) -> None:
        """Without a usable related title any other title that the chunk does not name is used."""
        kv = values.name_value(
            "It drops a Copper Ingot.", "What?", CHUNK, TITLES, own_title="Copper Golem", related=[], rng=rng()
        )
        assert kv is not None and kv.altered in {"Iron Ingot", "Gold Nugget", "Button"}

    def test_rule_order(self) -> None:
        """A number wins over a named item; nothing alterable gives None."""
        kv = values.rule_value(
            "It drops 3 copper ingots.",
            "What?",
            CHUNK,
            TITLES,
            own_title="Copper Golem",
            related=["Gold Nugget"],
            rng=rng(),
        )
        assert kv is not None and kv.kind == "number"
        assert (
            values.rule_value(
                "It is friendly.", "Is it?", CHUNK, TITLES, own_title="Copper Golem", related=[], rng=rng()
            )
            is None
        )

    def test_answer_string_without_chunk(self) -> None:
        """T's answer string: the first number with its unit, else the longest title, else None."""
        assert values.answer_string("It carries 4 players.", "How many?", TITLES) == "4 players"
        assert values.answer_string("It drops a Gold Nugget.", "What?", TITLES) == "Gold Nugget"
        assert values.answer_string("It is new.", "What?", TITLES) is None


class TestCopies:
    def test_number_copy(self) -> None:
        """Every statement of the phrase is altered; the check passes."""
        kv = KeyValue("number", "20", "35", "seconds")
        copy = values.conflicting_copy(CHUNK, kv)
        assert "every 35 seconds" in copy and "20" not in copy and values.copy_problem(copy, kv) is None

    def test_name_copy_keeps_case_and_plural(self) -> None:
        """'copper ingots' becomes 'gold nuggets'."""
        copy = values.conflicting_copy(CHUNK, KeyValue("name", "Copper Ingot", "Gold Nugget"))
        assert copy.endswith("drops 3 gold nuggets.") and "copper ingot" not in copy

    @pytest.mark.parametrize(
        ("kv", "problem"),
        [
            (
                KeyValue("model", "copper", "copper golem"),
                "original_value_present",
            ),  # the replacement holds the original
            (KeyValue("model", "lava", "water"), "altered_value_absent"),  # nothing to replace
        ],
    )
    def test_failed_checks(self, kv: KeyValue, problem: str) -> None:
        """A copy that still holds the original value, or lacks the altered one, fails with its reason."""
        assert values.copy_problem(values.conflicting_copy(CHUNK, kv), kv) == problem


class TestModelValue:
    @pytest.mark.parametrize(
        ("raw", "reason"),
        [
            ('{"original": "presses a button", "altered": "pulls a lever"}', None),
            ('```json\n{"original": "every 20 seconds", "altered": "every hour"}\n```', None),
            ("no idea", "unparsable"),
            ('["x"]', "unparsable"),
            ('{"original": "", "altered": ""}', "no_alterable_value"),
            ('{"original": "glows", "altered": "dims"}', "original_not_in_target"),
            ('{"original": "drops 3", "altered": "drops 5"}', "original_not_in_fact"),
            ('{"original": "button", "altered": "button"}', "no_alteration"),
        ],
    )
    def test_reasons(self, raw: str, reason: str | None) -> None:
        """The model's words must be in the target chunk and really change; otherwise a reason."""
        value, why = values.model_value(raw, FACT, CHUNK)
        assert why == reason and (value is None) == (reason is not None)


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
    CHUNKS: ClassVar[dict[str, Chunk]] = {"c1": Chunk("c1", "Copper Golem", "u", CHUNK)}

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
        a = conflicts.find_values(questions(), self.CHUNKS, titles=TITLES, related={}, ask=None, seed=0)
        b = conflicts.find_values(questions()[::-1], self.CHUNKS, titles=TITLES, related={}, ask=None, seed=0)
        assert a.equals(b)
