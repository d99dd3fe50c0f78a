"""Builders for the verification tests: drafted candidates, a scripted verifier and a fixed search."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from declinecraft.construction import generate
from declinecraft.llm.calls import Call, Reply


def draft(i: int, answerable: bool, **kw: object) -> dict[str, object]:
    """A drafted candidate with every column of generate.DRAFT_SCHEMA."""
    row: dict[str, object] = {c: None for c in generate.DRAFT_SCHEMA}
    half = "a" if answerable else "u"
    row.update(
        id=f"{half}{i:04d}",
        index=i,
        answerable=answerable,
        generator="gen",
        status="drafted",
        step="",
        reason="",
        notes=[],
        scenario_chunk_ids=["p1", "p2", "p3"],
        scenario=f"I ride horse {i}.",
        target_chunk_id=f"t{i}",
        target_title=f"Page {i}",
        target_url=f"https://wiki/Page_{i}",
        comparison_chunk_ids=["p1"],
        fact=f"FACT{i}",
        asked_question=f"What does thing {i} do?",
    )
    row.update(kw)
    row["question"] = f"{row['scenario']} {row['asked_question']}"
    return row


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=generate.DRAFT_SCHEMA)


class Verifier:
    """A fake verifier: ``stated``/``answers`` map a fact to the text it replies."""

    def __init__(self, stated: Callable[[str], str], answers: Callable[[str], str]) -> None:
        self.rules = {"verify_stated": stated, "verify_answers": answers}
        self.calls: list[Call] = []

    def __call__(self, calls: list[Call]) -> list[Reply]:
        self.calls.extend(calls)
        out = []
        for c in calls:
            text = self.rules[c.prompt](c.fields.get("fact") or c.fields["answer"])
            out.append(
                Reply("", error=text[6:]) if text.startswith("ERROR:") else Reply(text, cache_key=f"k-{c.prompt}")
            )
        return out


def fixed_search(queries: list[str], where: str, k: int) -> list[list[str]]:
    return [["p1", "p2"][:k] for _ in queries]
