"""Tests for declinecraft.views.evidence.values: key values, conflicting copies and value matching."""

from __future__ import annotations

import numpy as np
import pytest

from declinecraft.views.evidence import values
from declinecraft.views.evidence.values import KeyValue
from tests.support import esb, negation_sentences

FACT = "The golem presses a button every 20 seconds; it wanders slowly and glows."


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


class TestStates:
    @pytest.mark.parametrize(
        ("text", "gold", "conflict"),
        [
            pytest.param(*row, marks=pytest.mark.xfail(strict=True, reason="known miss"))
            if row[0] in negation_sentences.KNOWN_MISSES
            else row
            for row in negation_sentences.VALUE_TABLE + negation_sentences.HELD_OUT_VALUE
        ],
    )
    def test_sentence_table(self, text: str, gold: bool, conflict: bool) -> None:
        """A value under a negation ("it does not drop X; it drops Y") or rejected is not stated."""
        assert (values.states(text, "20 seconds"), values.states(text, "35 seconds")) == (gold, conflict)

    def test_matching_is_contains(self) -> None:
        """Without a negation it matches like contains: plurals, case, never inside a longer number."""
        assert values.states("drops 3 copper ingots", "Copper Ingot")
        assert not values.states("every 120 seconds", "20 seconds") and not values.states("", "x")


class TestRules:
    def test_number_with_unit(self) -> None:
        """The fact's number, with its unit when the chunk has the phrase; the change is absent from the chunk."""
        kv = values.number_value("It presses a button every 20 seconds.", "How often?", esb.CHUNK, rng())
        assert kv is not None and (kv.kind, kv.original, kv.unit) == ("number", "20", "seconds")
        assert kv.altered in values.altered_numbers("20") and not values.contains(esb.CHUNK, kv.altered_string)

    def test_number_in_question_is_not_the_answer(self) -> None:
        """A number the question already states is skipped; the next one is taken."""
        kv = values.number_value(
            "After 20 seconds it drops 3 copper ingots.", "What after 20 seconds?", esb.CHUNK, rng()
        )
        assert kv is not None and (kv.original, kv.unit) == ("3", "copper")

    def test_number_absent_from_chunk(self) -> None:
        """A number the target chunk does not state cannot be altered in it."""
        assert values.number_value("It has 7 lives.", "How many?", esb.CHUNK, rng()) is None

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
            esb.CHUNK,
            esb.TITLES,
            own_title="Copper Golem",
            related=related,
            rng=rng(),
        )
        assert kv == KeyValue("name", "Copper Ingot", "Gold Nugget")

    def test_named_item_pool_falls_back_to_all_titles(self) -> None:
        """Without a usable related title any other title that the chunk does not name is used."""
        kv = values.name_value(
            "It drops a Copper Ingot.", "What?", esb.CHUNK, esb.TITLES, own_title="Copper Golem", related=[], rng=rng()
        )
        assert kv is not None and kv.altered in {"Iron Ingot", "Gold Nugget", "Button"}

    def test_rule_order(self) -> None:
        """A number wins over a named item; nothing alterable gives None."""
        kv = values.rule_value(
            "It drops 3 copper ingots.",
            "What?",
            esb.CHUNK,
            esb.TITLES,
            own_title="Copper Golem",
            related=["Gold Nugget"],
            rng=rng(),
        )
        assert kv is not None and kv.kind == "number"
        assert (
            values.rule_value(
                "It is friendly.", "Is it?", esb.CHUNK, esb.TITLES, own_title="Copper Golem", related=[], rng=rng()
            )
            is None
        )

    def test_answer_string_without_chunk(self) -> None:
        """T's answer string: the first number with its unit, else the longest title, else None."""
        assert values.answer_string("It carries 4 players.", "How many?", esb.TITLES) == "4 players"
        assert values.answer_string("It drops a Gold Nugget.", "What?", esb.TITLES) == "Gold Nugget"
        assert values.answer_string("It is new.", "What?", esb.TITLES) is None


class TestCopies:
    def test_number_copy(self) -> None:
        """Every statement of the phrase is altered; the check passes."""
        kv = KeyValue("number", "20", "35", "seconds")
        copy = values.conflicting_copy(esb.CHUNK, kv)
        assert "every 35 seconds" in copy and "20" not in copy and values.copy_problem(copy, kv) is None

    def test_name_copy_keeps_case_and_plural(self) -> None:
        """'copper ingots' becomes 'gold nuggets'."""
        copy = values.conflicting_copy(esb.CHUNK, KeyValue("name", "Copper Ingot", "Gold Nugget"))
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
        assert values.copy_problem(values.conflicting_copy(esb.CHUNK, kv), kv) == problem


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
        value, why = values.model_value(raw, FACT, esb.CHUNK)
        assert why == reason and (value is None) == (reason is not None)
