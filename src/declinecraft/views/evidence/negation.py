"""Negation by scope: which stretches of a response a negator governs (the L5 readers).

The conflict reader (:func:`declinecraft.views.evidence.classes.is_conflict_aware`) and the value
reader (:func:`declinecraft.views.evidence.values.states`) ask whether a word stands under a
negation. A negator governs the words after it up to the end of its scope, not a fixed number of
words:

- negators: ``no``, ``not``, ``n't`` (``don't``, ``can't``), ``cannot``, ``never``, ``without``,
  ``neither``, ``nor``, ``none``, ``nothing``, ``nobody``, ``nowhere``, and ``rather than`` /
  ``instead of`` (what follows them is the rejected alternative);
- a scope ends at the end of its clause: ``.`` ``!`` ``?`` ``;`` ``:`` a comma (unless it
  separates the items of a list: "no conflict, contradiction or discrepancy"), a dash or a line
  break, or a word that opens a new clause (:data:`SCOPE_ENDS`: ``but``, ``however``, ``although``,
  ``so``, ``because``, ``since``, ``as``, ``and``, ``which``, ``whether``, ``if``, ...). So in
  "it does not drop X; it drops Y" only X is negated, in "not X but Y" only X, and in "I am not
  sure whether the passages conflict" the conflict is not (the clause after ``whether`` is an open
  question, not a denial);
- pseudo-negations negate no content (:data:`PSEUDO`): "not surprisingly", "not only", "no doubt".

The rules are a small, readable approximation of a parser's negation scope; their error rate on the
hand-written sentence table of the tests is in docs/views.md.
"""

from __future__ import annotations

import re

NEGATORS = frozenset(
    {"no", "not", "never", "cannot", "without", "neither", "nor", "none", "nothing", "nobody", "nowhere"}
)
"""Single words that open a negation scope (a word ending in ``n't`` does too)."""
NEGATOR_PAIRS = frozenset({("rather", "than"), ("instead", "of")})
"""Two-word negators: the alternative after them is rejected."""
PSEUDO = frozenset(
    {
        ("not", "surprisingly"),
        ("not", "unexpectedly"),
        ("not", "only"),
        ("not", "just"),
        ("not", "merely"),
        ("no", "doubt"),
        ("no", "matter"),
        ("nothing", "but"),
    }
)
"""Negator-word pairs that negate no content."""
SCOPE_ENDS = frozenset(
    {
        "but",
        "however",
        "yet",
        "although",
        "though",
        "whereas",
        "while",
        "so",
        "because",
        "since",
        "as",
        "and",
        "which",
        "who",
        "whether",
        "if",
        "except",
        "therefore",
        "thus",
    }
)
"""Words that open a new clause and so end a negation scope."""

_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\d+(?:[.,]\d+)*|[.!?](?=\s|$)|[;:,\n—–]|\s-\s")
_PUNCTUATION_ENDS = frozenset({".", "!", "?", ";", ":", ",", "\n", "—", "–", "-"})


def _is_negator(word: str) -> bool:
    return word in NEGATORS or word.endswith(("n't", "n’t"))


def _ends_scope(word: str) -> bool:
    return word.strip() in _PUNCTUATION_ENDS or word in SCOPE_ENDS


#: Words that continue a list after a comma ("no conflict, contradiction or discrepancy").
_LIST_WORDS = frozenset({"or", "nor"})
#: Longest list item read as one (a comma followed by a longer stretch ends the scope).
_LIST_ITEM = 3


def _continues_list(tokens: list[tuple[str, int, int]], comma: int) -> bool:
    """Whether the comma at ``tokens[comma]`` separates items of a list ("X, Y or Z", "X, Y, Z"):
    at most :data:`_LIST_ITEM` words, none opening a clause, then another comma or "or"/"nor"."""
    for word, _, _ in tokens[comma + 1 : comma + 2 + _LIST_ITEM]:
        if word == "," or word in _LIST_WORDS:
            return True
        if _ends_scope(word) or not word[:1].isalnum():
            return False
    return False


def scopes(text: str) -> list[tuple[int, int]]:
    """The character spans of ``text`` that a negator governs (from the word after it to the end
    of its scope), in order."""
    tokens = [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text or "")]
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for i, (word, begin, end) in enumerate(tokens):
        following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if (word, following) in PSEUDO:
            continue
        if (word, following) in NEGATOR_PAIRS:
            start = tokens[i + 1][2] if start is None else start
        elif _ends_scope(word) and not (word == "," and start is not None and _continues_list(tokens, i)):
            if start is not None:
                spans.append((start, begin))
                start = None
        elif _is_negator(word) and start is None:
            start = end
    if start is not None:
        spans.append((start, len(text)))
    return spans


def is_negated(text: str, position: int, spans: list[tuple[int, int]] | None = None) -> bool:
    """Whether the character at ``position`` of ``text`` stands in a negation scope (``spans``:
    :func:`scopes` of ``text``, computed when not given)."""
    for low, high in scopes(text) if spans is None else spans:
        if low <= position < high:
            return True
    return False


def clause_after(text: str, position: int) -> str:
    """The rest of the clause that ``position`` stands in (up to its first scope end)."""
    for m in _TOKEN.finditer(text, position):
        if _ends_scope(m.group().lower()):
            return text[position : m.start()]
    return text[position:]
