"""L2's partial support: the target chunk with the sentences that state the answer cut.

ESB's L2 is "weaker but still useful" support, "partial or noisy retrieval" (§3, §4.1). Our rule:

1. Split the target chunk into sentences (after ``.``, ``!`` or ``?`` and at line breaks; a
   leading ``[Page: ...]`` line is kept as it is).
2. A sentence states the answer when it holds the question's answer string (the key value,
   :mod:`.values`); without an answer string, when it holds at least half of the fact's content
   words (three letters or more, a short stop list left out), the best-matching sentences only.
3. Cut every such sentence. What remains is the partial chunk: the same page on the same
   subject, which implies the answer's context without stating it. It is shown beside the
   retrieved neighbours, as L2 was before.

The partial chunk fails (L2 dropped, counted) when no sentence states the answer, or when the cut
leaves no sentence. The level's quality check is that the answer string is absent from the whole
L2 context (kept, counted when a neighbour states it).
"""

from __future__ import annotations

import re

from declinecraft.views.evidence import values

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOP = frozenset(
    {
        "the",
        "and",
        "its",
        "their",
        "with",
        "for",
        "from",
        "that",
        "this",
        "are",
        "was",
        "were",
        "has",
        "have",
        "can",
        "will",
        "into",
        "onto",
        "when",
        "which",
        "also",
        "than",
        "they",
        "them",
        "each",
        "every",
        "not",
    }
)
#: Share of the fact's content words a sentence must hold to state it (rule 2, no answer string).
MIN_OVERLAP = 0.5


def sentences(text: str) -> tuple[str, list[str]]:
    """The chunk's ``[Page: ...]`` header line (or "") and its sentences, in order."""
    header = ""
    body = text
    if text.startswith("[Page:"):
        header, _, body = text.partition("\n")
    return header, [s.strip() for s in _SENTENCE_END.split(body) if s.strip()]


def _content(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def answer_sentences(parts: list[str], answer: str | None, fact: str) -> list[int]:
    """Indices of the sentences that state the answer (rule 2 of the module docstring)."""
    if answer:
        return [i for i, s in enumerate(parts) if values.contains(s, answer)]
    words = _content(fact)
    if not words:
        return []
    overlap = [len(words & _content(s)) / len(words) for s in parts]
    best = max(overlap, default=0.0)
    return [i for i, o in enumerate(overlap) if o == best] if best >= MIN_OVERLAP else []


def partial_chunk(text: str, answer: str | None, fact: str) -> tuple[str | None, str]:
    """The target chunk with its answer sentences cut, and what happened.

    Returns ``(text, "")`` on success, else ``(None, problem)`` with problem
    ``no_answer_sentence`` (no sentence states the answer) or ``nothing_left`` (every sentence
    does).
    """
    header, parts = sentences(text)
    cut = set(answer_sentences(parts, answer, fact))
    if not cut:
        return None, "no_answer_sentence"
    kept = [s for i, s in enumerate(parts) if i not in cut]
    if not kept:
        return None, "nothing_left"
    body = " ".join(kept)
    return (f"{header}\n{body}" if header else body), ""
