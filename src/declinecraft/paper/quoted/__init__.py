"""The numbers the paper's text quotes, one module per part of the paper, in the paper's order.

Each entry is a :class:`declinecraft.paper.number_spec.Number`; :mod:`declinecraft.paper.numbers`
computes and prints them.
"""

from __future__ import annotations

from declinecraft.paper.number_spec import Number
from declinecraft.paper.quoted import ablations, associations, benchmark, checks, headline, thinking

NUMBERS: list[Number] = [
    *benchmark.NUMBERS,
    *headline.NUMBERS,
    *associations.NUMBERS,
    *thinking.NUMBERS,
    *ablations.NUMBERS,
    *checks.NUMBERS,
]
