"""Does a figure's caption name what the figure draws?

:func:`captions` reads every ``\\dcfigure``/``\\dcfigurewide`` caption of ``paper/main.tex``;
:func:`axis_quantities` lists the quantities a drawn figure puts on its axes (its axis labels);
:func:`unnamed` returns those its caption never names. A quantity counts as named when its
caption holds one of its content words (compared by their first letters, so "abstentions"
names "abstention"), or the expansion of one of the paper's abbreviations (``CAR``). Units in
parentheses and words such as "share" or "rate" name nothing by themselves.

The rule is deliberately loose: it catches a caption written for another figure, or one that
promises a quantity the figure does not draw, not a caption's style.

A caption also names parts of a figure that a run may not draw (an interval, a frontier, a prompt,
a count; :mod:`declinecraft.core.drawn_parts`). It writes them as ``\\dcdrawn{stem/part}{text}``,
printed only when the figure drew ``part`` (:func:`resolve`); :func:`promised` finds a part the
resolved caption names (:data:`PROMISES`) that the figure did not draw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set

from matplotlib.figure import Figure

#: Abbreviations of the paper, expanded in captions before matching.
ABBREVIATIONS = {
    "car": "correct abstention rate",
    "ece": "expected calibration error",
    "b-ece": "expected calibration error",
    "rag": "retrieval",
    "r_λ": "reliability",
}
#: Words that name no quantity on their own.
GENERIC = frozenset(
    "the of and per with from for each all on in at by to a an or vs share rate number count mean value values "
    "percent points pts axis".split()
)
#: How many leading letters two words must share to count as the same word.
STEM = 6
#: LaTeX in captions written as the text it prints.
LATEX = {"\\lambda": "λ", "\\rho": "ρ", "\\kappa": "κ", "--": "-", "~": " "}


def _balanced(text: str, start: int) -> tuple[str, int]:
    """The brace group opening at ``text[start]`` and the index after it."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1 : i], i + 1
    raise ValueError(f"unbalanced braces after offset {start}")


def captions(tex: str) -> dict[str, str]:
    """Every figure's caption in ``tex`` (``paper/main.tex``), keyed by its file stem."""
    out = {}
    for match in re.finditer(r"\\dcfigure(?:wide)?(?:\[[^\]]*\])?(?=\{)", tex):
        stem, end = _balanced(tex, match.end())
        caption, _ = _balanced(tex, end)
        out[stem] = caption
    return out


def axis_quantities(fig: Figure) -> list[str]:
    """The distinct axis labels of ``fig`` (x and y of every axis), in drawing order."""
    labels = [label.strip() for ax in fig.axes for label in (ax.get_xlabel(), ax.get_ylabel()) if label.strip()]
    return list(dict.fromkeys(labels))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-zα-ωλρκ0-9\-]+", text.lower())


def _plain(caption: str) -> str:
    text = caption
    for latex, plain in LATEX.items():
        text = text.replace(latex, plain)
    text = re.sub(r"\\[a-zA-Z]+\*?", " ", text).replace("$", " ").replace("{", " ").replace("}", " ").lower()
    for short, long in ABBREVIATIONS.items():
        text = re.sub(rf"(?<![a-z]){re.escape(short)}(?![a-z])", f"{short} {long}", text)
    return text


def _content(label: str) -> list[str]:
    words = [w for w in _words(_plain(label)) if w not in GENERIC and (len(w) >= 3 or not w.isascii())]
    return words


def named(caption: str, quantity: str) -> bool:
    """Whether ``caption`` names ``quantity`` (see the module docstring)."""
    said = {w[:STEM] for w in _words(_plain(caption))}
    main = re.sub(r"\([^)]*\)", " ", quantity)
    parts = [main, *re.findall(r"\(([^)]*)\)", quantity)]
    return any(w[:STEM] in said for part in parts for w in _content(part)) or not any(_content(p) for p in parts)


def unnamed(caption: str, quantities: Iterable[str]) -> list[str]:
    """The quantities ``caption`` never names, as problems for ``figure_checks.csv``."""
    return [f"caption does not name '{q}'" for q in quantities if not named(caption, q)]


#: The parts a caption may name (:mod:`declinecraft.core.drawn_parts`) and the words that name them.
PROMISES = {
    "interval": r"\binterval",
    "frontier": r"\bfrontier",
    "counts": r"\$n\$",
    "unscored": r"\bno score\b",
    **{prompt: rf"\b{prompt}\b" for prompt in ("P1", "P2", "P3", "P4", "P5", "J2")},
}
_DRAWN = re.compile(r"\\dcdrawn(?=\{)")


def resolve(caption: str, drawn: Set[str]) -> str:
    """``caption`` as printed for a figure that drew ``drawn``: each ``\\dcdrawn{stem/part}{text}``
    becomes ``text`` when ``part`` is drawn, else nothing."""
    out, at = [], 0
    for match in _DRAWN.finditer(caption):
        if match.start() < at:
            continue
        name, end = _balanced(caption, match.end())
        text, end = _balanced(caption, end)
        out += [caption[at : match.start()], resolve(text, drawn) if name.rpartition("/")[2] in drawn else ""]
        at = end
    return "".join(out) + caption[at:]


def promised(caption: str, drawn: Set[str]) -> list[str]:
    """The parts the (resolved) ``caption`` names that the figure did not draw, as problems."""
    return [
        f"caption names '{part}', which the figure does not draw"
        for part, words in PROMISES.items()
        if part not in drawn and re.search(words, caption)
    ]
