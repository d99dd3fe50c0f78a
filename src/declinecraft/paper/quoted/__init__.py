"""The numbers the paper's text quotes, as data: ``numbers.tsv`` beside this file, one a line, in
the paper's order.

Each line names the macro, its format, the getter of :mod:`declinecraft.paper.number_sources` (and
its arguments) that reads the value off the analysis tables, the getter of its n, what n counts,
the key of the paper's reported value and what the number is. :func:`load` reads the table into
:class:`declinecraft.paper.number_spec.Number` records; :mod:`declinecraft.paper.numbers` computes
and prints them. Adding a number is adding a line.
"""

from __future__ import annotations

import inspect
import shlex
from pathlib import Path
from typing import Any

from declinecraft.paper import number_sources
from declinecraft.paper.number_spec import Number

#: The table of quoted numbers.
TABLE = Path(__file__).with_name("numbers.tsv")
COLUMNS = ("macro", "fmt", "source", "n", "unit", "reported", "what")


def _argument(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.lstrip("-").isdigit() else text


def getter(spec: str, where: str) -> number_sources.Getter:
    """The getter a table cell names: ``name arg ... key=value`` (a factory of
    :mod:`~declinecraft.paper.number_sources` called with the arguments), or a getter's bare name."""
    name, *words = shlex.split(spec)
    found = getattr(number_sources, name, None)
    if not callable(found) or name.startswith("_"):
        raise ValueError(f"{where}: {name!r} is not a getter of declinecraft.paper.number_sources")
    if not words and list(inspect.signature(found).parameters) == ["t"]:
        return found
    args = [_argument(w) for w in words if "=" not in w]
    kwargs = {k: _argument(v) for k, v in (w.split("=", 1) for w in words if "=" in w)}
    made: number_sources.Getter = found(*args, **kwargs)
    return made


def load(path: Path = TABLE) -> list[Number]:
    """The quoted numbers of a table, in its order (ValueError naming the line for a bad one)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [(i, line) for i, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    if not rows or tuple(rows[0][1].split("\t")) != COLUMNS:
        header = "\t".join(COLUMNS)
        raise ValueError(f"{path}: the first line that is not a comment must be the header {header!r}")
    numbers = []
    for i, line in rows[1:]:
        cells = line.split("\t")
        where = f"{path.name}:{i}"
        if len(cells) != len(COLUMNS):
            raise ValueError(f"{where}: {len(cells)} columns, the table has {len(COLUMNS)}")
        row = dict(zip(COLUMNS, cells, strict=True))
        numbers.append(
            Number(
                row["macro"],
                row["what"],
                getter(row["source"], where),
                row["fmt"],
                row["reported"] or None,
                n=getter(row["n"], where) if row["n"] else None,
                unit=row["unit"] or "questions",
            )
        )
    return numbers


NUMBERS: list[Number] = load()
