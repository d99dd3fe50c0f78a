"""What a model reads: retrieved chunks formatted as the ``{context}`` of a prompt (App. J.2).

Answering and judging both show chunks to a model (the answer prompt, the oracle's reference
context), so the formatting lives here once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Chunk:
    """What the answer prompt shows of a chunk (J.2: each chunk with its page title and URL)."""

    chunk_id: str
    title: str
    url: str
    text: str


#: ``lookup(chunk_ids)`` -> the chunks, in order; raises KeyError for an id not in the index.
Lookup = Callable[[Sequence[str]], list[Chunk]]


def format_context(chunks: Sequence[Chunk], chunk_chars: int = 0) -> str:
    """List the chunks for ``{context}``, each with its page title and URL (App. J.2).

    ``chunk_chars`` > 0 cuts each chunk's text to that many characters (``answer.context_chars``).
    """

    def body(text: str) -> str:
        text = text.strip()
        return text[:chunk_chars].rstrip() if chunk_chars > 0 else text

    return "\n\n".join(f"[{i}] {c.title} ({c.url})\n{body(c.text)}" for i, c in enumerate(chunks, start=1))


def context_of(chunk_ids: Sequence[str], lookup: Lookup, question_id: str, chunk_chars: int = 0) -> str:
    """The formatted context of a question's chunks.

    Raises:
        ValueError: a chunk id is not in the index (names the question and the chunk).
    """
    try:
        chunks = lookup(list(chunk_ids))
    except KeyError as exc:
        raise ValueError(f"question {question_id!r}: retrieved {exc.args[0]}") from exc
    return format_context(chunks, chunk_chars)


def chunks_by_id(rows: Iterable[Mapping[str, Any]]) -> dict[str, Chunk]:
    """Chunk-table rows (``chunk_id``, ``title``, ``url``, ``text``) as :class:`Chunk` by id."""
    return {r["chunk_id"]: Chunk(r["chunk_id"], r["title"] or "", r["url"] or "", r["text"]) for r in rows}
