"""Scripted stand-ins for answering: a tiny benchmark, its chunks, a search, and models that echo their prompt."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.retrieval.fusion import Hit

CHUNKS = {
    f"c{i}": Chunk(f"c{i}", f"Page {i}", f"https://wiki/Page_{i}", f"[Page: Page {i}]\ntext {i}") for i in range(1, 10)
}


def benchmark(n_ans: int = 2, n_unans: int = 2) -> pl.DataFrame:
    """A tiny benchmark: answerable ids a0.., unanswerable u0.., each with a scenario."""
    rows = []
    for half, n, prefix in ((True, n_ans, "a"), (False, n_unans, "u")):
        for i in range(n):
            qid = f"{prefix}{i}"
            rows.append(
                {
                    "id": qid,
                    "answerable": half,
                    "scenario": f"I am in a cave ({qid}).",
                    "asked_question": f"What is {qid}?",
                    "question": f"I am in a cave ({qid}). What is {qid}?",
                    "target_chunk_id": "c1" if half else "post1",
                    "scenario_chunk_ids": ["c2", "c3"],
                }
            )
    return pl.DataFrame(rows)


class FakeSearch:
    """Ranked lists by query prefix; every chunk gets bm25 rank = position."""

    def __init__(
        self, table: dict[str, list[str]] | None = None, default: Sequence[str] = ("c1", "c2", "c3", "c4")
    ) -> None:
        self.table, self.default, self.calls = table or {}, list(default), []

    def __call__(self, queries: Sequence[str], pipeline: str, k: int) -> list[list[Hit]]:
        self.calls.append((list(queries), pipeline, k))
        return [
            [Hit(c, ranks={"bm25": i}) for i, c in enumerate(self.table.get(q, self.default)[:k], start=1)]
            for q in queries
        ]


def lookup(ids: Sequence[str]) -> list[Chunk]:
    """The chunk table; an unknown id raises KeyError like Retriever.chunks."""
    out = []
    for cid in ids:
        if cid not in CHUNKS:
            raise KeyError(f"chunk {cid!r} is not in the index at /idx")
        out.append(CHUNKS[cid])
    return out


class FakeAsk:
    """A model: reflection calls get ``reflect`` (str or callable), answer calls echo their prompt name."""

    def __init__(self, reflect: str = '{"assessment": "Sufficient"}') -> None:
        self.reflect, self.calls = reflect, []

    def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.calls.extend(calls)
        return [
            Reply(self.reflect if c.prompt == "reflect" else f"answer via {c.prompt}", cache_key=f"k{i}")
            for i, c in enumerate(calls)
        ]


class FakeModels:
    """The model layer: every model answers like :class:`FakeAsk`; counts server releases."""

    def __init__(self, reflect: str = '{"assessment": "Sufficient"}') -> None:
        self.asks: dict[tuple[str, str | None], FakeAsk] = {}
        self.reflect, self.released = reflect, 0

    def thinking_switch(self, model_id: str) -> str:
        return "switchable" if model_id == "think" else "none"

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> FakeAsk:
        return self.asks.setdefault((model_id, thinking), FakeAsk(self.reflect))

    def release(self) -> None:
        self.released += 1
