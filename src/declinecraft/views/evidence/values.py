"""A fact's key value, the conflicting copy of its chunk (L5), and matching a value in text.

The key value is what the question asks for: the part of the fact that an altered copy changes
so that it contradicts the target chunk (ESB Table 1, L5 conflicting evidence). Rules, in order:

1. a number of the fact (not also in the question) that the target chunk states; with the word
   after it ("20 seconds") when the chunk has that phrase, so the answer string is specific. The
   altered number is a seeded pick among simple changes (x2, x3, +1, ...) whose phrase the target
   chunk does not hold;
2. a named item: the longest page title of C_pre (not the target page's own, not in the
   question) that the fact and the target chunk name. The altered item is a seeded pick among
   the titles of pages the retriever returned for the question (related things), else any title,
   that the target chunk does not name;
3. else the generator model picks the words and their replacement (:func:`model_value`, prompt
   ``esb_conflict``, ours), which must occur in the target chunk.

Matching is case-insensitive on whole tokens at the start; a value ending in a letter also
matches its plural ("iron ingot" holds "Iron Ingot"), so a copy that kept "iron ingots" still
holds the original value and fails its check. A number never matches inside a longer number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from declinecraft.llm.responses import FormatError, parse_json
from declinecraft.views.evidence import negation

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_NUMBER_TOKEN = re.compile(rf"(?<![\w.,])({_NUMBER})(?![\w]|[.,]\d)")
_NEXT_WORD = re.compile(r"\s+([A-Za-z][A-Za-z-]+)")
#: Words after a number that are not its unit ("3 to 5 blocks", "2 or more").
_NOT_UNITS = frozenset(
    {
        "a",
        "an",
        "and",
        "or",
        "to",
        "of",
        "in",
        "on",
        "at",
        "the",
        "than",
        "per",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
    }
)
_CHANGES = ((2, 0), (3, 0), (0.5, 0), (1, 1), (1, 2), (1, 5), (4, 0), (1, 10))
"""(factor, addend) pairs of the number rule: new = old * factor + addend."""
MIN_TITLE = 4
"""Shorter page titles are never named items (too many false matches)."""


@dataclass(frozen=True)
class KeyValue:
    """The value a conflicting copy alters."""

    kind: str
    """"number", "name" (rules) or "model" (picked by the generator model)."""
    original: str
    """The value as the fact and the target chunk state it ("20", "Iron Ingot")."""
    altered: str
    """Its replacement in the conflicting copy."""
    unit: str = ""
    """The word after a number ("seconds"), part of both strings; "" for other kinds."""

    @property
    def answer_string(self) -> str:
        """What must be present in L1 and L5, and absent from L2 (its answer sentences are cut),
        L3, L4, T and the conflicting copy."""
        return f"{self.original} {self.unit}" if self.unit else self.original

    @property
    def altered_string(self) -> str:
        """What must be present in the copy."""
        return f"{self.altered} {self.unit}" if self.unit else self.altered


def _pattern(value: str, *, tail: bool = False) -> re.Pattern[str]:
    """A case-insensitive pattern of ``value``; ``tail`` captures a plural ending (for replacing)."""
    body = r"\s+".join(re.escape(t) for t in value.split())
    head = r"(?<![\w.,])" if value[:1].isdigit() else r"(?<!\w)"
    if value[-1:].isdigit():
        end = r"(?![\w]|[.,]\d)"
    else:
        end = r"((?:e?s)?)(?!\w)" if tail else ""
    return re.compile(head + body + end, re.I)


def contains(text: str, value: str) -> bool:
    """True when ``text`` states ``value`` (see the module docstring for the matching rule)."""
    value = value.strip()
    if not value or value.split()[0].lower() not in (text or "").lower():
        return False  # cheap test first: the L3 pool checks every chunk of C_pre
    return _pattern(value).search(text) is not None


# A value rejected after it in its clause: "35 seconds is wrong", "20 is not correct".
_REJECTED_AFTER = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:is|are|was|were|seems?)\s+(?:wrong|incorrect|false|mistaken|not\s+(?:right|correct|true))\b",
    re.I,
)


def states(text: str, value: str) -> bool:
    """True when ``text`` states ``value`` outside every negation scope (:mod:`.negation`): "it does
    not drop X; it drops Y" states Y, not X; "Y rather than X", "Y instead of X", "not X but Y" and
    "neither X nor Y" likewise; a value rejected in its own clause ("X is wrong") is not stated.
    Matching is :func:`contains`'s."""
    value = value.strip()
    if not contains(text, value):
        return False
    spans = negation.scopes(text)
    for m in _pattern(value).finditer(text):
        if negation.is_negated(text, m.start(), spans):
            continue
        if _REJECTED_AFTER.search(negation.clause_after(text, m.end())):
            continue
        return True
    return False


def _cased(found: str, new: str) -> str:
    if found.islower():
        return new.lower()
    return new.upper() if found.isupper() and len(found) > 1 else new


def conflicting_copy(text: str, value: KeyValue) -> str:
    """The chunk text with every statement of the answer string replaced by the altered string."""
    rx = _pattern(value.answer_string, tail=True)

    def swap(match: re.Match[str]) -> str:
        suffix = match.group(1) if rx.groups else ""
        return _cased(match.group(0)[: len(match.group(0)) - len(suffix or "")], value.altered_string) + (suffix or "")

    return rx.sub(swap, text)


def copy_problem(copy: str, value: KeyValue) -> str | None:
    """Why a conflicting copy fails ESB §4.4's check, or None: the altered value must be present
    and the original value absent."""
    if not contains(copy, value.altered_string):
        return "altered_value_absent"
    if contains(copy, value.answer_string):
        return "original_value_present"
    return None


# --- the rules -----------------------------------------------------------------------------------


def _numbers(text: str) -> list[str]:
    return [m.group(1) for m in _NUMBER_TOKEN.finditer(text)]


def _unit_after(fact: str, number: str) -> str:
    match = _NUMBER_TOKEN.search(fact)
    while match and match.group(1) != number:
        match = _NUMBER_TOKEN.search(fact, match.end())
    after = _NEXT_WORD.match(fact, match.end()) if match else None
    word = after.group(1) if after else ""
    return "" if len(word) < 2 or word.lower() in _NOT_UNITS else word


def _format(value: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if "." in like else 0
    text = f"{value:,.{decimals}f}" if "," in like else f"{value:.{decimals}f}"
    return text


def altered_numbers(number: str) -> list[str]:
    """Candidate replacements of a number (same format, positive, different), in rule order."""
    old = float(number.replace(",", ""))
    out = []
    for factor, addend in _CHANGES:
        new = old * factor + addend
        if "." not in number and new != int(new):
            continue
        text = _format(new, number)
        if new > 0 and text != number and text not in out:
            out.append(text)
    return out


def _pick(options: Sequence[str], rng: np.random.Generator) -> str | None:
    return options[int(rng.integers(len(options)))] if options else None


def number_value(fact: str, question: str, chunk: str, rng: np.random.Generator) -> KeyValue | None:
    """Rule 1: the first number of the fact, not in the question, that the chunk states."""
    asked = set(_numbers(question))
    for number in dict.fromkeys(_numbers(fact)):
        if number in asked:
            continue
        unit = _unit_after(fact, number)
        if unit and not contains(chunk, f"{number} {unit}"):
            unit = ""
        if not contains(chunk, number):
            continue
        options = [n for n in altered_numbers(number) if not contains(chunk, f"{n} {unit}".strip())]
        choice = _pick(options, rng)
        if choice:
            return KeyValue("number", number, choice, unit)
    return None


def named_items(text: str, titles: Iterable[str]) -> list[str]:
    """The page titles ``text`` names, longest first (a cheap substring test before the regex)."""
    low = text.lower()
    found = [t for t in titles if len(t) >= MIN_TITLE and t.lower() in low and contains(text, t)]
    return sorted(dict.fromkeys(found), key=lambda t: (-len(t), t))


def name_value(
    fact: str,
    question: str,
    chunk: str,
    titles: Sequence[str],
    *,
    own_title: str,
    related: Sequence[str],
    rng: np.random.Generator,
) -> KeyValue | None:
    """Rule 2: the longest title the fact and the chunk name, swapped for a related title."""
    for name in named_items(fact, titles):
        if name.lower() == own_title.lower() or contains(question, name) or not contains(chunk, name):
            continue
        for pool in (related, titles):
            options = sorted(
                {
                    t
                    for t in pool
                    if len(t) >= MIN_TITLE
                    and t.lower() != own_title.lower()
                    and not contains(chunk, t)
                    and not contains(t, name)
                    and not contains(name, t)
                }
            )
            choice = _pick(options, rng)
            if choice:
                return KeyValue("name", name, choice)
    return None


def rule_value(
    fact: str,
    question: str,
    chunk: str,
    titles: Sequence[str],
    *,
    own_title: str,
    related: Sequence[str],
    rng: np.random.Generator,
) -> KeyValue | None:
    """The key value by rule 1, else rule 2, else None (the model may then pick one)."""
    return number_value(fact, question, chunk, rng) or name_value(
        fact, question, chunk, titles, own_title=own_title, related=related, rng=rng
    )


def answer_string(fact: str, question: str, titles: Sequence[str]) -> str | None:
    """The key value's answer string of a fact without a chunk to check it against (the T
    condition's C_post facts): the first number (with its unit) or longest title not in the
    question; None when the fact has neither."""
    asked = set(_numbers(question))
    for number in dict.fromkeys(_numbers(fact)):
        if number not in asked:
            unit = _unit_after(fact, number)
            return f"{number} {unit}" if unit else number
    names = [n for n in named_items(fact, titles) if not contains(question, n)]
    return names[0] if names else None


def model_value(raw: str | None, fact: str, chunk: str) -> tuple[KeyValue | None, str | None]:
    """Read the conflict model's JSON ``{"original": ..., "altered": ...}``.

    Returns the value, or None with the reason: ``unparsable``, ``no_alterable_value`` (the model
    found none), ``original_not_in_fact`` / ``original_not_in_target`` (its words are not in the
    fact or not in the target chunk) or ``no_alteration`` (the replacement is empty or holds the
    original).
    """
    try:
        data: Any = parse_json(raw or "")
    except FormatError:
        return None, "unparsable"
    if not isinstance(data, dict):
        return None, "unparsable"
    original = str(data.get("original") or "").strip().strip("\"'")
    altered = str(data.get("altered") or "").strip().strip("\"'")
    if not original:
        return None, "no_alterable_value"
    if not contains(fact, original):
        return None, "original_not_in_fact"
    if not contains(chunk, original):
        return None, "original_not_in_target"
    if not altered or contains(altered, original) or contains(original, altered):
        return None, "no_alteration"
    return KeyValue("model", original, altered), None
