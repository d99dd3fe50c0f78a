"""A seeded MediaWiki XML export of the paper's size for the simulated run (no MediaWiki needed).

Every page documents one invented thing (a block, mob, item or mechanic) named ``<Root> <Kind>``.
C_pre's things (created 2022-10-22 to 2025-03-31) and C_post's (created 2025-04-02 to
2026-09-06) use disjoint kinds (:data:`PRE_KINDS`, :data:`POST_KINDS`), so a question about a
thing says by its name which side it came from: :func:`is_post` is how the simulated models
decide that a question is about something after their cut-off. Each sentence names its subject,
so the generator's facts and questions do too; every sentence of a C_post page names a C_pre
thing it is compared with. Pages are written in short paragraphs and end where a chunk of stage
01 closes, so no chunk is short (a chunk of a few words sits near every query of the model-free
hash embedder). At scale 1: 2,642 C_pre pages (11,569 chunks of 1,500 characters; the paper:
11,612) and 170 C_post pages (574 chunks), as in the paper (§3.1, App. D).
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

import polars as pl

from declinecraft.corpus import corpora

#: The paper's corpus (§3.1): pages at scale 1.
PRE_PAGES = 2642
POST_PAGES = 170
PRE_KINDS = ("Stone", "Bloom", "Shard", "Lantern", "Beetle", "Moss", "Forge", "Totem", "Root", "Slime")
POST_KINDS = ("Coil", "Glint", "Husk", "Spire", "Drifter", "Cube")
#: Chunks a page is cut into: C_pre 4.4 a page on average (the paper: 11,612 of 2,642 pages);
#: C_post 1-3, one page in ten 10-30 (the paper: 712 of 170 pages, median 2).
PRE_CHUNKS = (2, 3, 4, 4, 5, 5, 6, 6)
POST_CHUNKS = (1, 2, 2, 2, 3, 3)
#: How often a sentence without a link gets one: a C_post page names the older things it is
#: compared with, which is what a scenario about those things retrieves it by.
PRE_LINKED = 0.0
POST_LINKED = 1.0
_SYLLABLES = tuple(
    "ar bel cor dun el fen gar hol ith jor kel lum mor nar or pel quor rav sil tor ul vor wen yr zan".split()
)
_NAME = re.compile(r"\b([A-Z][a-z]+) (" + "|".join(PRE_KINDS + POST_KINDS) + r")\b")
_SECTIONS = ("Obtaining", "Usage", "Behavior", "Crafting", "Generation", "Mechanics")
_SENTENCES = (
    "The {name} can be found in {place} at heights between {a} and {b}.",
    "Breaking a {name} with a {tool} drops {n} {item} items.",
    "A {name} gives off a light level of {n} when placed next to {other}.",
    "The {name} has {a} health points and deals {n} damage on hard difficulty.",
    "Players can craft a {name} from {n} {item} and one {other} on a crafting table.",
    "When powered by redstone, the {name} pushes entities {n} blocks away over {a} ticks.",
    "The {name} spawns in groups of {n} to {b} in {place} during the night.",
    "Using a {tool} on the {name} takes {a} seconds and wears the tool down by {n} points.",
    "Villagers at level {n} trade one {name} for {a} emeralds.",
    "The {name} can be smelted in a furnace into {n} {item}, giving {a} experience.",
    "A {name} placed under {other} makes it grow {n} times faster.",
    "The {name} floats on water and breaks after {a} seconds in lava.",
)
_PLACES = ("the Overworld", "the Nether", "the End", "lush caves", "deep dark caves", "swamps", "deserts", "taigas")
_TOOLS = ("pickaxe", "axe", "shovel", "hoe", "sword", "shears")
_ITEMS = ("iron nugget", "gold nugget", "stick", "string", "bone meal", "redstone dust", "copper ingot", "flint")


def is_post(text: str) -> bool:
    """Whether ``text`` names a C_post thing (one created after the cut-off)."""
    return any(kind in POST_KINDS for _, kind in _NAME.findall(text))


def subject(text: str, *, last: bool = False) -> str:
    """The first (or ``last``) thing ``text`` names (``"block"`` when it names none)."""
    found = [m.group(0) for m in _NAME.finditer(text)]
    return (found[-1] if last else found[0]) if found else "block"


def _names(rng: random.Random, n: int, kinds: tuple[str, ...], taken: set[str]) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        root = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 3)))).capitalize()
        name = f"{root} {rng.choice(kinds)}"
        if name not in taken:
            taken.add(name)
            names.append(name)
    return names


def _sentence(rng: random.Random, name: str, others: list[str], linked: float) -> str:
    """One sentence about ``name``; one without a link gets one at the rate ``linked``."""
    template = rng.choice(_SENTENCES)
    if "{other}" not in template and rng.random() < linked:
        template = template.removesuffix(".") + ", unlike the {other}."
    return template.format(
        name=name,
        place=rng.choice(_PLACES),
        tool=rng.choice(_TOOLS),
        item=rng.choice(_ITEMS),
        other=f"[[{rng.choice(others)}]]",
        n=rng.randint(1, 9),
        a=rng.randint(10, 64),
        b=rng.randint(65, 120),
    )


def _page(
    rng: random.Random, name: str, others: list[str], chunks: int, *, linked: float, size: int, overlap: int
) -> str:
    """The wikitext of a page that stage 01 cuts into exactly ``chunks`` chunks of ``size`` characters
    with ``overlap``, none of them short: short paragraphs (2-3 sentences), cut after the paragraph
    that closes the last chunk (chunking is greedy, so a prefix keeps its chunks)."""
    first = f"The {name} is a thing of the game. "
    wiki: list[str] = []
    plain: list[str] = []
    headings = rng.sample(_SECTIONS, len(_SECTIONS))
    while sum(map(len, plain)) < (chunks + 1) * size:
        sentences = " ".join(_sentence(rng, name, others, linked) for _ in range(rng.randint(2, 3)))
        shown = sentences.replace("[[", "").replace("]]", "")  # what stage 01's cleaning leaves
        if len(wiki) > 1 and rng.random() < 0.4:  # a new section
            heading = headings[len(wiki) % len(headings)]
            wiki.append(f"== {heading} ==\n{sentences}")
            plain.append(f"{heading}\n{shown}")
        elif not wiki:  # the lead paragraph
            wiki.append(first.replace(name, f"'''{name}'''", 1) + sentences)
            plain.append(first + shown)
        else:
            wiki.append(sentences)
            plain.append(shown)
    text = "\n\n".join(plain)
    ends, offset = set(), -2
    for part in plain:
        offset += len(part) + 2
        ends.add(offset)
    start, end = 0, 0
    cut = corpora.chunk(pl.DataFrame({"title": [name], "text": [text]}), size, overlap)["text"]
    for body in (c.partition("\n")[2] for c in cut[:chunks]):
        start = text.index(body, start)
        end = start + len(body)
    if end not in ends:
        raise AssertionError(f"{name}: a chunk ends inside a paragraph")
    return "\n\n".join(wiki[: sorted(ends).index(end) + 1])


def _revision(page_id: int, title: str, when: datetime, text: str) -> str:
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <revision>\n      <id>{page_id * 10}</id>\n      <timestamp>{when:%Y-%m-%dT%H:%M:%SZ}</timestamp>\n"
        "      <contributor>\n        <username>Simulated</username>\n        <id>1</id>\n      </contributor>\n"
        "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text xml:space="preserve" bytes="{len(text.encode())}">{escape(text)}</text>\n'
        "    </revision>\n  </page>\n"
    )


def _when(rng: random.Random, first: str, last: str) -> datetime:
    start, end = datetime.fromisoformat(first).replace(tzinfo=UTC), datetime.fromisoformat(last).replace(tzinfo=UTC)
    return start + timedelta(seconds=rng.randrange(int((end - start).total_seconds())))


def write_dump(
    target: Path, *, scale: int = 1, seed: int = 0, chunk_size: int = 1500, chunk_overlap: int = 250
) -> dict[str, int]:
    """Write the export to ``target`` (1/``scale`` of the paper's pages, each cut by stage 01 into
    whole chunks of ``chunk_size`` with ``chunk_overlap``); returns the page counts."""
    rng = random.Random(f"simulated-wiki:{seed}")
    taken: set[str] = set()
    pre = _names(rng, max(PRE_PAGES // scale, 20), PRE_KINDS, taken)
    post = _names(rng, max(POST_PAGES // scale, 8), POST_KINDS, taken)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n')
        out.write("  <siteinfo>\n    <sitename>Simulated Wiki</sitename>\n    <namespaces>\n")
        out.write('      <namespace key="0" case="first-letter" />\n    </namespaces>\n  </siteinfo>\n')
        for i, name in enumerate(pre):
            text = _page(
                rng, name, pre, rng.choice(PRE_CHUNKS), linked=PRE_LINKED, size=chunk_size, overlap=chunk_overlap
            )
            out.write(_revision(1000 + i, name, _when(rng, "2022-10-22", "2025-03-31T23:00:00"), text))
        for i, name in enumerate(post):
            chunks = rng.randint(10, 30) if rng.random() < 0.1 else rng.choice(POST_CHUNKS)
            text = _page(rng, name, pre, chunks, linked=POST_LINKED, size=chunk_size, overlap=chunk_overlap)
            out.write(_revision(100_000 + i, name, _when(rng, "2025-04-02", "2026-09-06"), text))
        out.write("</mediawiki>\n")
    tmp.replace(target)
    return {"pre_pages": len(pre), "post_pages": len(post)}
