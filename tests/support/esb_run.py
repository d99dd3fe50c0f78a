"""A tiny synthetic run for the evidence view (stage 09): corpus, benchmark, stage 05's retrievals and
stage 06's references.

The world: five answerable questions (a0 number value, a1 named item on a one-chunk page, a2 a
value only the generator finds, a3 a fact with no alterable value, a4 a target chunk missing
from the corpus) and two unanswerable ones (u0 whose retrieved chunk states its answer string,
u1 not)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from declinecraft.core import config
from declinecraft.retrieval.fusion import Hit

CHUNKS = {
    "g1": ("Copper Golem", "The copper golem presses a button every 20 seconds. It drops 3 copper ingots."),
    "g2": ("Copper Golem", "Copper golems oxidize over time and stop moving."),
    "b1": ("Button", "A button emits a redstone signal for a short time."),
    "i1": ("Iron Ingot", "Iron ingots are smelted from raw iron."),
    "n1": ("Gold Nugget", "Nine gold nuggets craft a gold ingot."),
    "f1": ("Furnace", "A furnace smelts items and burns Coal as its fuel. It is crafted from cobblestone."),
    "c1": ("Coal", "Coal is mined from coal ore."),
    "s1": ("Sheep", "Sheep regrow their wool after eating grass. They spawn in plains."),
    "s2": ("Sheep", "Sheep can be dyed."),
    "w1": ("Wolf", "Wolves can be tamed with bones. They live in forests."),
    "t1": ("Torch", "Torches light up caves."),
    "h1": ("Happy Ghast", "Up to 4 players can ride at once."),
    "r1": ("Rail", "Rails carry minecarts."),
}


QUESTIONS = [  # id, answerable, fact, target chunk
    ("a0", True, "The copper golem presses a button every 20 seconds.", "g1"),
    ("a1", True, "A furnace burns Coal as its fuel.", "f1"),
    ("a2", True, "Sheep regrow their wool after eating grass.", "s1"),
    ("a3", True, "Wolves are loyal.", "w1"),
    ("a4", True, "Ghost blocks float.", "zz"),
    ("u0", False, "The happy ghast carries 4 players.", "post1"),
    ("u1", False, "The copper chest holds items.", "post2"),
]


RETRIEVED = {
    "a0": ["b1", "g1", "i1"],
    "a1": ["c1", "f1", "t1"],
    "a2": ["s2", "s1", "w1"],
    "a3": ["w1", "t1", "r1"],
    "a4": ["t1", "r1", "b1"],
    "u0": ["h1", "r1", "t1"],
    "u1": ["g2", "n1", "t1"],
}


class FakeSearch:
    """The retriever for questions stage 05 did not retrieve for."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def __call__(self, queries: Sequence[str], pipeline: str, k: int) -> list[list[Hit]]:
        self.queries += list(queries)
        ids = [re.search(r"\((\w+)\)", q).group(1) for q in queries]  # type: ignore[union-attr]
        return [[Hit(c) for c in RETRIEVED[i][:k]] for i in ids]


#: The evidence block of the test runs (default.yaml's own block is sized for the offline run).
EVIDENCE = {
    "models": "[]",
    "bootstrap_resamples": "200",
    "accuracy_judges": "[]",
    "k": "0",
    "limit_questions": "0",
    "context_chars": "-1",
    "max_tokens": "0",
    "prompts": "[P1, P2, P3, J2]",
    "conflict_model": "''",
}


def make_run(
    project: Path,
    evidence: dict[str, str] | None = None,
    *,
    tested: str = "m1",
    generator: str = "gen",
    judge: str = "j1",
) -> config.RunConfig:
    """Corpus, benchmark, stage 05's retrievals (a0 and u0 only) and stage 06's references."""
    settings = "".join(f"  {k}: {v}\n" for k, v in {**EVIDENCE, **(evidence or {})}.items())
    block = (
        f"answer:\n  models: [{tested}]\n  k: 3\n  context_chars: 0\n  max_tokens: 64\n"
        f"generate:\n  generator: {generator}\njudge:\n  response_judge: {judge}\n  accuracy_judges: [{judge}]\n"
        f"evidence:\n{settings}"
    )
    (project / "params" / "t.yaml").write_text(f"base: default\n{block}")
    cfg = config.load(project / "params" / "t.yaml")
    when = datetime(2024, 1, 1, tzinfo=UTC)
    corpus = cfg.stage_dir("corpus")
    corpus.mkdir(parents=True)
    for half, ids in (("pre", list(CHUNKS)), ("post", ["post1", "post2"])):
        pl.DataFrame(
            {
                "chunk_id": ids,
                "title": [CHUNKS[c][0] if c in CHUNKS else "Happy Ghast" for c in ids],
                "text": [f"[Page: {CHUNKS[c][0]}]\n{CHUNKS[c][1]}" if c in CHUNKS else "new" for c in ids],
                "url": [f"http://wiki/{c}" for c in ids],
                "revision_id": list(range(len(ids))),
                "timestamp": [when] * len(ids),
                "corpus": [half] * len(ids),
            }
        ).write_parquet(corpus / f"chunks_{half}.parquet")
    bench = pl.DataFrame(
        [
            {
                "id": q,
                "answerable": a,
                "asked_question": f"What about {q}?",
                "question": f"I play ({q}). What about {q}?",
                "fact": f,
                "target_chunk_id": t,
                "target_title": CHUNKS.get(t, ("New",))[0],
                "scenario_chunk_ids": [],
            }
            for q, a, f, t in QUESTIONS
        ],
        schema_overrides={"scenario_chunk_ids": pl.List(pl.String)},
    )
    cfg.stage_dir("verify").mkdir(parents=True)
    bench.write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
    cfg.stage_dir("answer").mkdir(parents=True)
    pl.DataFrame(
        [
            {"question_id": q, "pipeline": "hybrid", "k": 5, "scenario": True, "retrieved_ids": RETRIEVED[q]}
            for q in ("a0", "u0")
        ]
    ).write_parquet(cfg.stage_dir("answer") / "retrieved.parquet")
    cfg.stage_dir("judge").mkdir(parents=True)
    pl.DataFrame({"question_id": ["a0", "a1", "a2"], "reference": ["20 seconds", "Coal", None]}).write_parquet(
        cfg.stage_dir("judge") / "references.parquet"
    )
    return cfg
