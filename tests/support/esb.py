"""Hand-built inputs of the evidence view's tests: a question, its chunks and key values, and a copper golem's chunk."""

from __future__ import annotations

import polars as pl

from declinecraft.evaluation.context import Chunk
from declinecraft.views import evidence
from declinecraft.views.evidence import conflicts, levels


def chunk(cid: str, title: str, text: str) -> Chunk:
    return Chunk(cid, title, f"http://wiki/{cid}", f"[Page: {title}]\n{text}")


CHUNKS = {
    c.chunk_id: c
    for c in [
        chunk("t1", "Golem", "The golem has 20 health points. " + "Filler text. " * 20 + "It is made of Iron."),
        chunk("o1", "Ore", "Ore is mined."),
        chunk("o2", "Ore", "Ore drops 20 health points."),
    ]
}


def question(qid: str = "q", target: str = "t1") -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "id": qid,
                "answerable": True,
                "question": "How much health?",
                "fact": "It has 20 health.",
                "target_chunk_id": target,
                "scenario_chunk_ids": [],
            }
        ],
        schema_overrides={"scenario_chunk_ids": pl.List(pl.String)},
    )


def key_values(original: str, altered: str, kind: str = "model", unit: str = "") -> pl.DataFrame:
    row = conflicts._row("q", "model", evidence.KeyValue(kind, original, altered, unit), None)
    return pl.DataFrame([row], schema=conflicts.SCHEMA)


def problems(built: levels.Levels) -> dict[str, str]:
    return {r["problem"]: r["action"] for r in built.problems.iter_rows(named=True)}


CHUNK = "[Page: Copper Golem]\nThe copper golem presses a button every 20 seconds. It drops 3 copper ingots."


TITLES = ["Copper Golem", "Copper Ingot", "Iron Ingot", "Gold Nugget", "Button", "Ore"]
