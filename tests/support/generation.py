"""Builders for the generation tests: synthetic chunk tables, a lexical search and a scripted generator
that answers every step."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import polars as pl

from declinecraft.llm.calls import Call, Reply

PRE_PAGES = ["Horse", "Armor", "Cave", "Nether portal", "Obsidian", "Panda", "Bamboo", "Cake", "Boat", "Fishing"]


POST_PAGES = ["Copper Golem", "Happy Ghast", "Harness", "Java Edition 1.21.9"]


def chunk_table(pages: list[str], corpus: str, per_page: int = 2) -> pl.DataFrame:
    """Synthetic chunks: ``per_page`` chunks per page, each naming its page twice."""
    rows = [
        {
            "chunk_id": f"{corpus}-{p.lower().replace(' ', '_')}-{i}",
            "title": p,
            "text": f"[Page: {p}] The {p.lower()} part {i} says {p.lower()} things about {p.lower()}.",
            "url": f"https://wiki/{p}",
            "revision_id": 1,
            "timestamp": "2025-01-01",
            "corpus": corpus,
        }
        for p in pages
        for i in range(per_page)
    ]
    return pl.DataFrame(rows)


def lexical_search(pre: pl.DataFrame, post: pl.DataFrame) -> Callable[..., list[list[str]]]:
    """A deterministic stand-in for dense search: rank chunks by shared words, then by id."""
    tables = {"pre": pre, "post": post}

    def search(queries: list[str], where: str, k: int) -> list[list[str]]:
        table = tables.get(where, pre)
        out = []
        for q in queries:
            words = set(re.findall(r"[a-z]+", q.lower()))
            scored = sorted(
                zip(table["chunk_id"], table["text"], strict=True),
                key=lambda r: (-len(words & set(re.findall(r"[a-z]+", r[1].lower()))), r[0]),
            )
            out.append([cid for cid, _ in scored[:k]])
        return out

    return search


class Scripted:
    """A fake generator: one handler per prompt name, each mapping the call's fields to text."""

    def __init__(self, **handlers: Callable[[dict[str, str]], str | Reply]) -> None:
        self.handlers = handlers
        self.calls: list[Call] = []

    def __call__(self, calls: list[Call]) -> list[Reply]:
        out = []
        for call in calls:
            self.calls.append(call)
            reply = self.handlers[call.prompt](call.fields)
            out.append(reply if isinstance(reply, Reply) else Reply(reply, cache_key=f"key-{len(self.calls)}"))
        return out


def page_of(text: str) -> str:
    return re.search(r"\[Page: ([^\]]+)\]", text).group(1)  # type: ignore[union-attr]


def good_model(**overrides: Callable[[dict[str, str]], str | Reply]) -> Scripted:
    """A generator that always answers in format, unless a handler is overridden."""
    handlers: dict[str, Callable[[dict[str, str]], str | Reply]] = {
        "generate_scenario": lambda f: f"Scenario: I am looking after my {page_of(f['context']).lower()}.",
        "generate_facts": lambda f: json.dumps(
            {"facts": [f"The {page_of(f['new'])} has {n} hearts." for n in range(3)]}
        ),
        "generate_question": lambda f: f"How many hearts does the {f['fact'].split(' has ')[0][4:]} have?",
    }
    return Scripted(**(handlers | overrides))
