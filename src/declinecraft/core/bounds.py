"""The range of every number in the params blocks, checked when a params file is loaded.

So ``k: -3`` or ``max_tokens: -1`` is refused by ``make check-params`` (and before any stage runs)
with the file and the key named, instead of failing deep inside a stage, or (``max_tokens: -1``)
reaching a server that reads it as "no limit". Every int and float field of every block has an
annotation ``Annotated[int, POSITIVE]`` naming its range in the params dataclass of its block
(a stage's declaration, :mod:`declinecraft.core.stages`); a test checks that a new field cannot be
added without one.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Any

#: Largest output budget or context size accepted, in tokens (no served model reads more).
MAX_TOKENS = 1_000_000


@dataclass(frozen=True)
class Bound:
    """An inclusive range (``None`` = unbounded on that side)."""

    low: float | None = None
    high: float | None = None
    above: bool = False
    """The value must be strictly greater than ``low`` (a rate, a timeout, a confidence level)."""
    below: bool = False
    """The value must be strictly less than ``high``."""

    def allows(self, value: float) -> bool:
        """Whether ``value`` lies in the range (never NaN or infinite)."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return False
        return self.high is None or (value < self.high if self.below else value <= self.high)

    def describe(self) -> str:
        """The range in words: ``>= 1 and <= 1e+06``."""
        low = "" if self.low is None else f"{'>' if self.above else '>='} {self.low:g}"
        high = "" if self.high is None else f"{'<' if self.below else '<='} {self.high:g}"
        return " and ".join(p for p in (low, high) if p)


COUNT = Bound(0)
"""A count or size where 0 is meaningful (0 = none, or all, or the other setting: see the field)."""
POSITIVE = Bound(1)
TOKENS = Bound(1, MAX_TOKENS)
TOKENS_OR_0 = Bound(0, MAX_TOKENS)
"""A budget where 0 means "take another setting" (the field's docstring says which)."""
TEMPERATURE = Bound(0, 2)
PROPORTION = Bound(0, 1)
LEVEL = Bound(0, 1, above=True, below=True)
"""A confidence level or significance threshold: strictly between 0 and 1."""
SECONDS = Bound(0, above=True)


def of(cls: type) -> dict[str, Bound]:
    """The range of each number field of a params dataclass, from its annotation."""
    hints = typing.get_type_hints(cls, include_extras=True)
    found = {}
    for f in dataclasses.fields(cls):
        extras = getattr(hints[f.name], "__metadata__", ())
        if bound := next((m for m in extras if isinstance(m, Bound)), None):
            found[f.name] = bound
    return found


def check(block: str, values: Any, where: str) -> list[str]:
    """Return one message per number of a block that is out of its range, or an empty list.

    Args:
        block: the block's name (``answer``).
        values: the built block (a params dataclass).
        where: the prefix of every message (``<params file>: answer``).
    """
    problems = []
    for name, bound in of(type(values)).items():
        value = getattr(values, name)
        if value is None:  # an optional number left unset (e.g. no budget)
            continue
        items = list(enumerate(value)) if isinstance(value, tuple) else [(None, value)]
        for index, item in items:
            if not bound.allows(item):
                key = name if index is None else f"{name}[{index}]"
                problems.append(f"{where}.{key}: {item!r} is out of range (needs {bound.describe()})")
    problems += _relations(block, values, where)
    return problems


def _relations(block: str, values: Any, where: str) -> list[str]:
    """Ranges that depend on another key of the block."""
    if block == "corpus" and values.chunk_overlap >= values.chunk_size > 0:
        return [f"{where}.chunk_overlap: {values.chunk_overlap} must be below chunk_size ({values.chunk_size})"]
    if block == "generate" and values.target_draw > values.target_pool:
        return [f"{where}.target_draw: {values.target_draw} must be at most target_pool ({values.target_pool})"]
    return []


def numeric_fields(cls: type) -> set[str]:
    """The int and float fields (and tuples of them) of a params block: each needs a bound."""
    hints = typing.get_type_hints(cls)
    numbers = (int, float)
    optional = {int | None, float | None}
    return {
        f.name
        for f in dataclasses.fields(cls)
        if hints[f.name] in numbers
        or hints[f.name] in optional
        or (typing.get_origin(hints[f.name]) is tuple and typing.get_args(hints[f.name])[0] in numbers)
    }
