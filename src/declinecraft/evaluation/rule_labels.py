"""Deterministic reading of responses and judge outputs (Appendix I, J.3): no model involved.

- :func:`rule_label` labels a response ABSTAIN / DENY / ANSWER from explicit phrases, in the
  style of the rule-based classifier of the Evidence Sufficiency Benchmark (ESB: Zhang and Wu,
  "Do LLMs Know When Evidence is Insufficient? An Evidence Sufficiency Benchmark for
  Answer-Abstention Calibration in Retrieval-Augmented Generation", §5.2 and §8: explicit refusal
  phrases), extended with DeclineCraft's third class, premise
  denial. It is the cross-check of the LLM response judge (agreement and Cohen's kappa in
  06_judge); it is never used to fill in a label the judge did not give. With
  ``scheme="esb"`` it gives ESB's own three classes instead (ANSWER / ABSTAIN / INVALID), for
  :mod:`declinecraft.views.evidence`.
- :func:`parse_label` and :func:`parse_score` read the response judge's and the accuracy judges'
  raw outputs. Anything that is not exactly one label / one of 0, 0.5, 1 is ``None`` (unparsable),
  never a guess.

``judge.rule_label`` is the public name (docs/layout.md); it is this function, re-exported.
"""

from __future__ import annotations

import re

LABELS: tuple[str, ...] = ("ABSTAIN", "DENY", "ANSWER")
#: The classes of ``rule_label(..., scheme="esb")`` (ESB §5.2).
ESB_LABELS: tuple[str, ...] = ("ANSWER", "ABSTAIN", "INVALID")
SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)

# --- premise denial: the named thing itself is said not to exist --------------------------------

_GAME = r"(?:vanilla\s+)?(?:minecraft|the\s+(?:base\s+|vanilla\s+)?game)\b"
# "not in Minecraft" but not "not in Minecraft: Bedrock Edition" / "Minecraft Dungeons" (it exists there)
_GAME_END = _GAME + r"(?!\s*[:\-]?\s*(?:bedrock|java|pocket|education|dungeons|legends|earth|story)\b)"
_THING = (
    r"(?:item|block|mob|entity|creature|biome|enchantment|feature|thing|object|structure|"
    r"(?:music\s+)?disc|potion|effect|armou?r|weapon|tool|food|plant|material|mechanic|variant|"
    r"in-game\s+\w+|game\s+\w+)s?\b"
)
_DENIALS = [
    # "does not exist", "doesn't exist in Minecraft" — but not "does not exist in the Nether"
    r"\b(?:does|do|did)(?:\s+not|n't)\s+(?:actually\s+|really\s+|currently\s+)?exist\b"
    r"(?!\s+(?:in|on|at|within|inside|under|near|as)\s+(?!" + _GAME + r"))",
    r"\b(?:is|are|was|were)(?:\s+not|n't)\s+(?:an?\s+)?(?:real|actual|existing|valid|recogni[sz]ed|"
    r"standard|official|known|vanilla|genuine)\s+(?:minecraft\s+)?" + _THING,
    r"\b(?:is|are)(?:\s+not|n't)\s+(?:real|recogni[sz]ed)\b",
    r"\bnot\s+(?:an?\s+)?(?:part\s+of|in|found\s+in|present\s+in|included\s+in|available\s+in|"
    r"featured\s+in|a\s+(?:real\s+)?(?:thing|feature)\s+in)\s+" + _GAME_END,
    r"\bthere\s+(?:is|are)\s+no\s+(?!way\b|need\b|reason\b|information\b|mention\b|data\b|details?\b)"
    r"(?:[\w'’\"\-]+\s+){1,5}(?:in|within)\s+" + _GAME_END,
    r"\bno\s+such\s+" + _THING,
    r"\b(?:non-?existent|fictional|made[- ]up|fan[- ]made)\b",
]

# --- refusal: the response says it does not know / the sources do not say ------------------------

_SOURCES = r"(?:context|text|passages?|documents?|sources?|excerpts?|information|wiki|data)"
_REFUSALS = [
    r"\b(?:i|we)\s+(?:do(?:\s+not|n't)|did(?:\s+not|n't))\s+know\b",
    r"\b(?:i'm|i\s+am)\s+not\s+(?:sure|aware|certain|familiar)\b",
    r"\bnot\s+aware\s+of\b",
    r"\b" + _SOURCES + r"\b[^.!?\n]{0,60}?\b(?:does|do|did)(?:\s+not|n't)\s+(?:seem\s+to\s+)?(?:contain|mention|"
    r"include|provide|say|specify|cover|state|describe|give|have|discuss|address|list|answer)\b",
    r"\b(?:no|not\s+enough|insufficient)\s+(?:specific\s+|relevant\s+|such\s+)?(?:information|details?|data|mention)\b",
    r"\b(?:i|we)\s+(?:cannot|can't|can\s+not|could(?:\s+not|n't)|am\s+unable\s+to|was\s+unable\s+to|"
    r"are\s+unable\s+to|am\s+not\s+able\s+to)\s+(?:find|confirm|determine|verify|answer|say|provide|tell|give|"
    r"locate|assist|help|know|be\s+sure)\b",
    r"\bunable\s+to\s+(?:find|confirm|determine|verify|answer|provide|locate)\b",
    r"\bit\s+is\s+not\s+possible\s+to\s+(?:determine|answer|say|know|confirm)\b",
    r"\b(?:i|we)\s+(?:would\s+)?need\s+to\s+know\b",
    r"\b(?:knowledge|training)[\s-]*(?:cut-?off|cutoff|date)\b",
    r"\b(?:newer|more\s+recent)\s+than\s+my\b",
    r"\bbeyond\s+my\s+(?:knowledge|training)\b",
    r"\b(?:i|we)\s+(?:have\s+no|do(?:\s+not|n't)\s+have)\s+(?:any\s+)?(?:specific\s+)?(?:information|knowledge|"
    r"details|data|access)\b",
    r"\bnot\s+(?:mentioned|covered|described|specified|stated|included|found|listed)\s+in\s+(?:the|my|any)\b",
]

# --- answering anyway after a refusal: a guessed value or an analogy offered as the answer ---------

_GUESS = (
    r"\b(?:most\s+likely|likely|probably|presumably|my\s+best\s+guess|i\s+would\s+guess|i'd\s+guess|"
    r"assum(?:e|ing)|based\s+on\s+(?:similar|other|comparable|related)|similar\s+to|it\s+would\s+be)\b"
)
# A guess about why the thing is unknown ("it was probably added later") is not an answer.
_NOVELTY = (
    r"\b(?:added|update|updates|version|snapshot|mod|mods|modded|knowledge|cut-?off|newer|release|"
    r"released|exist|exists)\b"
)

#: ESB's refusals that DeclineCraft's list lacks: the evidence is called insufficient (the
#: abstention sentence of the ESB prompts P2 and P3 among them). Used only by ``scheme="esb"``.
ESB_REFUSALS: tuple[str, ...] = (
    (
        r"\b(?:evidence|context|passages?|sources?|information)\s+(?:is|are|was|were)\s+(?:insufficient|"
        r"not\s+(?:sufficient|enough)|inconclusive)\b"
    ),
    r"\b(?:insufficient|not\s+enough|no\s+(?:sufficient|relevant))\s+evidence\b",
    r"\b(?:cannot|can't|can\s+not)\s+be\s+(?:determined|answered|confirmed)\s+(?:from|with|based\s+on)\b",
)

_DENY_RE = [re.compile(p, re.I) for p in _DENIALS]
_ESB_REFUSE_RE = [re.compile(p, re.I) for p in ESB_REFUSALS]
_REFUSE_RE = [re.compile(p, re.I) for p in _REFUSALS]
_GUESS_RE = re.compile(_GUESS, re.I)
_NOVELTY_RE = re.compile(_NOVELTY, re.I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def _clean(text: str) -> str:
    text = _THINK.sub(" ", text or "")
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"[*_`#>]+", " ", text)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def rule_label(response: str, *, scheme: str = "declinecraft") -> str:
    """Label a response "ABSTAIN", "DENY" or "ANSWER" by explicit phrases (deterministic).

    Rules, in order (App. I's definitions; phrase matching in the style of ESB §5.2, the
    Evidence Sufficiency Benchmark paper named in the module docstring):
      1. DENY if any sentence states that the thing does not exist or is not in the game
         ("does not exist", "is not a real item", "not part of vanilla Minecraft", "there is no X
         in Minecraft", "not a standard item"), even after an abstention sentence.
      2. ABSTAIN if some sentence declines ("I do not know", "the provided context does not
         contain the answer", "I would need to know", "after my knowledge cutoff") and no other
         sentence then answers anyway with a guess ("most likely", "probably", "based on similar
         ...").
      3. ANSWER otherwise — including a refusal followed by a guessed answer, and an empty
         response or one that is only a thinking trace (it never declines; App. I: "A response
         that never declines is not ABSTAIN").

    ``scheme="esb"`` returns ESB's classes (§5.2: Answer, Abstain, Invalid) from the same rules:
    INVALID when no letter is left once thinking and markup are removed (empty or malformed);
    ABSTAIN when the rules give ABSTAIN with the refusal phrases above plus :data:`ESB_REFUSALS`
    (the evidence is said to be insufficient); ANSWER otherwise, a premise denial (DENY) included:
    it makes a claim about the game instead of saying that the evidence does not suffice.

    Raises:
        ValueError: an unknown ``scheme``.
    """
    if scheme not in ("declinecraft", "esb"):
        raise ValueError(f"rule_label scheme must be 'declinecraft' or 'esb', got {scheme!r}")
    text = _clean(response)
    if scheme == "esb":
        if not re.search(r"[^\W\d_]", text):
            return "INVALID"
        label = _declines(_sentences(text), [*_REFUSE_RE, *_ESB_REFUSE_RE])
        return "ABSTAIN" if label == "ABSTAIN" else "ANSWER"
    return _declines(_sentences(text), _REFUSE_RE)


def _declines(sentences: list[str], refusals: list[re.Pattern[str]]) -> str:
    """Rules 1-3 of :func:`rule_label` over cleaned sentences, with the given refusal phrases."""
    if any(rx.search(s) for s in sentences for rx in _DENY_RE):
        return "DENY"
    refusing = [any(rx.search(s) for rx in refusals) for s in sentences]
    if not any(refusing):
        return "ANSWER"
    guessed = any(
        _GUESS_RE.search(s) and not _NOVELTY_RE.search(s)
        for s, refuses in zip(sentences, refusing, strict=True)
        if not refuses
    )
    return "ANSWER" if guessed else "ABSTAIN"


# --- judge outputs -------------------------------------------------------------------------------

_LABEL_WORD = re.compile(r"\b(ABSTAIN|DENY|ANSWER)\b")
_LABEL_LINE = re.compile(
    r"^(?:final\s+)?(?:label|answer|classification|category)?\s*[:=\-]?\s*"
    r"(abstain|deny|answer)\s*[.!]?$",
    re.I,
)


def _strip_markup(line: str) -> str:
    return re.sub(r"[*_`\"'\[\]()]+", "", line).strip()


def parse_label(raw: str | None) -> str | None:
    """Read the response judge's output; return the label or ``None`` when unparsable.

    Accepted: the label alone in any case, with optional "Label:" prefix, markup or final period
    on the first non-empty line ("ABSTAIN", "Label: Abstain.", "**DENY**"), followed by anything
    ("ABSTAIN\\n\\nBecause ..."). Otherwise, the output must contain exactly one distinct label
    written in capitals ("The correct label is DENY"). Two different labels, no label, or an
    empty output are unparsable: ``None``.
    """
    text = _THINK.sub(" ", raw or "").strip()
    if not text:
        return None
    first = _strip_markup(text.splitlines()[0])
    match = _LABEL_LINE.match(first)
    if match:
        return match.group(1).upper()
    found = set(_LABEL_WORD.findall(text))
    return found.pop() if len(found) == 1 else None


_SCORE_LINE = re.compile(
    r"^(?:final\s+)?(?:score|grade|rating)?\s*[:=\-]?\s*(\d+(?:\.\d+)?)\s*(?:/\s*1(?:\.0+)?)?\s*[.!]?$", re.I
)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?!\w|\.\d|\s*/\s*[02-9])")


def _as_score(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if value in SCORES else None


def parse_score(raw: str | None) -> float | None:
    """Read an accuracy judge's output; return 0.0, 0.5 or 1.0, or ``None`` when unparsable.

    Accepted: the number alone on the first non-empty line ("1.0", "0.5", "0", "Score: 1",
    "**0.5**", "1.0/1"), followed by anything; otherwise exactly one number anywhere, which must
    be 0, 0.5 or 1. Any other value (0.75, 2), several different numbers, or words only are
    unparsable: ``None``.
    """
    text = _THINK.sub(" ", raw or "").strip()
    if not text:
        return None
    match = _SCORE_LINE.match(_strip_markup(text.splitlines()[0]))
    if match:
        return _as_score(match.group(1))
    numbers = {float(n) for n in _NUMBER.findall(text)}
    return _as_score(str(numbers.pop())) if len(numbers) == 1 else None
