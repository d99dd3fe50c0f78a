"""Tests for declinecraft.paper.number_spec: what a quoted number is."""

from __future__ import annotations

import dataclasses

import pytest

from declinecraft.paper import number_spec
from declinecraft.paper.number_spec import CAVEAT_FORMATS, Number
from declinecraft.paper.quoted import NUMBERS

#: The formats :class:`Number` documents.
FORMATS = {"pct", "pts", "int", "rho", "p", "kappa", "text", "num"}


class TestNumber:
    def test_defaults(self) -> None:
        """A number is a percentage of questions, with no n and no reported counterpart unless given."""
        number = Number("X", "something", lambda t: 1)
        assert (number.fmt, number.unit, number.n, number.reported) == ("pct", "questions", None, None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            number.fmt = "int"  # type: ignore[misc]

    def test_quoted_numbers_use_known_formats(self) -> None:
        """Every number the paper quotes has one of the documented formats and a unique macro."""
        assert NUMBERS and {n.fmt for n in NUMBERS} <= FORMATS
        macros = [n.macro for n in NUMBERS]
        assert len(macros) == len(set(macros))

    def test_caveat_formats(self) -> None:
        """The small-n caveat goes in place for running-text formats; p values and rho keep their text."""
        assert CAVEAT_FORMATS <= FORMATS and not {"p", "rho"} & CAVEAT_FORMATS
        assert number_spec.SMALL_N_MACRO == "dcsmall"
