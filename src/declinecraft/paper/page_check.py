"""Checks of the built PDF's pages, as a reader sees them: text off the page, text over text,
pages left nearly blank.

:func:`problems` reads every word's box from the PDF (``pdftotext -bbox-layout``, poppler) and
reports, naming the page and the words:

- a word outside the page, or past the side margins by more than :data:`TOLERANCE_PT` (a table
  or figure wider than the text block);
- a word in the top or bottom :data:`EDGE_PT` of the page, where nothing but the margin belongs;
- two words printed over each other (a page number over a table, labels over labels inside a
  figure). Boxes of neighbouring lines of small type touch; two words count as overlapping only
  when their boxes share more than :data:`OVERLAP_HEIGHT` of the lower one's height and more
  than :data:`OVERLAP_WIDTH` of the narrower one's width.

It also renders every page small in gray (``pdftoppm``, poppler) and names a page, other than the
last, whose printed matter ends above :data:`MIN_FILL` of the page's height (the page number's band
left out): a near-blank page, where a float that did not fit or a heading without text pushed the
rest on. A page where a part of the paper ends (the two-column body before the one-column
appendices, the appendices before the list of what the run does not produce) ends where its part
does: ``paper/main.tex`` marks it with a named destination :data:`PART_END` (``\\hypertarget``,
read back with ``pdfinfo -dests``), and it is not counted as near-blank.

The paper stage writes the problems to ``10_paper/page_checks.csv`` and prints them.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

#: The side margins of ``paper/main.tex`` (``geometry``: margin=0.75in), in points.
MARGIN_PT = 54.0
#: How far a word may reach into a side margin (an overfull line by a few points is not a defect).
TOLERANCE_PT = 6.0
#: The band at the top and bottom of the page that holds no text (the page number sits above it).
EDGE_PT = 18.0
#: Shares of height and width two boxes must share to count as printed over each other.
OVERLAP_HEIGHT = 0.6
OVERLAP_WIDTH = 0.3
#: A page other than the last whose printed matter ends above this share of its height is near-blank.
MIN_FILL = 0.5
#: The band at the bottom of the page that holds the page number, in points (left out of the fill).
NUMBER_BAND_PT = 60.0
#: Gray level (0 black, 255 white) below which a pixel counts as printed.
INK = 200
#: Resolution of the rendering the fill is measured on, dots per inch.
FILL_DPI = 20


class PageCheckError(RuntimeError):
    """The PDF's words could not be read (pdftotext failed on it)."""


@dataclass(frozen=True)
class Word:
    """One word's box on a page, in points from the top left."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Page:
    """One page: its number, size and words."""

    number: int
    width: float
    height: float
    words: tuple[Word, ...]


def _poppler(tool: str) -> str:
    """The path of one of poppler's tools.

    Raises:
        PageCheckError: it is missing.
    """
    exe = shutil.which(tool)
    if exe is None:
        raise PageCheckError(f"{tool} missing (Debian package poppler-utils; make setup installs it)")
    return exe


def pages(pdf: Path) -> list[Page]:
    """Every page of ``pdf`` with its words' boxes.

    Raises:
        PageCheckError: pdftotext is missing or fails on ``pdf``.
    """
    exe = _poppler("pdftotext")
    proc = subprocess.run(
        [exe, "-bbox-layout", str(pdf), "-"], capture_output=True, text=True, errors="replace", check=False
    )
    if proc.returncode != 0:
        raise PageCheckError(f"pdftotext failed on {pdf}: {proc.stderr.strip()[:300]}")
    return _parse(proc.stdout)


#: A page's opening tag and a word's tag in pdftotext's ``-bbox-layout`` output. Read with regular
#: expressions, not an XML parser: a PDF's text can hold characters that make the output invalid XML.
PAGE = re.compile(r'<page width="([0-9.]+)" height="([0-9.]+)">')
WORD = re.compile(r'<word xMin="([-0-9.]+)" yMin="([-0-9.]+)" xMax="([-0-9.]+)" yMax="([-0-9.]+)">(.*?)</word>', re.S)


def _parse(text: str) -> list[Page]:
    """The pages of pdftotext's ``-bbox-layout`` output, each with its printable words."""
    starts = list(PAGE.finditer(text))
    out = []
    for number, (start, end) in enumerate(zip(starts, [*starts[1:], None], strict=True), 1):
        body = text[start.end() : end.start() if end else len(text)]
        found = (Word(html.unescape(m[5]), *(float(v) for v in m.groups()[:4])) for m in WORD.finditer(body))
        # A "word" with no printable letter (a control code standing for a glyph the font lacks) has
        # a box of the glyph's full height, not of what is printed; it is left out.
        words = tuple(w for w in found if any(c.isprintable() and not c.isspace() for c in w.text))
        out.append(Page(number, float(start[1]), float(start[2]), words))
    return out


def _over(a: Word, b: Word) -> bool:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    if width <= 0 or height <= 0:
        return False
    return height > OVERLAP_HEIGHT * min(a.y1 - a.y0, b.y1 - b.y0) and width > OVERLAP_WIDTH * min(
        a.x1 - a.x0, b.x1 - b.x0
    )


def page_problems(page: Page) -> list[str]:
    """What a reader would see wrong on one page (see the module docstring); [] when none."""
    out = []
    for w in page.words:
        if w.x0 < 0 or w.y0 < 0 or w.x1 > page.width or w.y1 > page.height:
            out.append(f"page {page.number}: '{w.text}' is outside the page")
        elif w.x0 < MARGIN_PT - TOLERANCE_PT or w.x1 > page.width - MARGIN_PT + TOLERANCE_PT:
            out.append(f"page {page.number}: '{w.text}' runs into the side margin")
        elif w.y0 < EDGE_PT or w.y1 > page.height - EDGE_PT:
            out.append(f"page {page.number}: '{w.text}' is at the page's top or bottom edge")
    out += [
        f"page {page.number}: '{a.text}' and '{b.text}' are printed over each other"
        for a, b in combinations(page.words, 2)
        if _over(a, b)
    ]
    return out


#: The header of a binary gray image: magic, width, height, maximum value and one white-space byte.
PGM_HEADER = re.compile(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s")


def read_pgm(data: bytes) -> np.ndarray:
    """A binary 8-bit gray image (PGM, ``P5``, as ``pdftoppm -gray`` writes it) as rows of pixels."""
    header = PGM_HEADER.match(data)
    if header is None or int(header[3]) > 255:
        raise PageCheckError("pdftoppm wrote no 8-bit gray image (PGM P5)")
    width, height = int(header[1]), int(header[2])
    pixels = data[header.end() : header.end() + width * height]
    if len(pixels) < width * height:
        raise PageCheckError(f"pdftoppm wrote a short image ({len(pixels)} of {width * height} pixels)")
    return np.frombuffer(pixels, dtype=np.uint8).reshape(height, width)


def fill(image: np.ndarray, height_pt: float = 792.0) -> float:
    """How far down the page its printed matter reaches (0 top, 1 bottom), the page number's band
    left out."""
    keep = int(image.shape[0] * (1 - NUMBER_BAND_PT / height_pt))
    rows = np.flatnonzero((image[:keep] < INK).any(axis=1))
    return float(rows.max() + 1) / image.shape[0] if rows.size else 0.0


def fills(pdf: Path) -> list[float]:
    """:func:`fill` of every page of ``pdf``, from a small gray rendering.

    Raises:
        PageCheckError: pdftoppm is missing or fails on ``pdf``.
    """
    exe = _poppler("pdftoppm")
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.run(
            [exe, "-gray", "-r", str(FILL_DPI), str(pdf), f"{folder}/p"], capture_output=True, check=False
        )
        if proc.returncode != 0:
            raise PageCheckError(f"pdftoppm failed on {pdf}: {proc.stderr.decode(errors='replace').strip()[:300]}")
        # pdftoppm numbers pages with as many digits as the last one needs: the names sort in page order.
        return [fill(read_pgm(path.read_bytes())) for path in sorted(Path(folder).glob("p-*.pgm"))]


#: The name (a prefix) of the destinations ``paper/main.tex`` puts where a part of the paper ends.
PART_END = "dc.partend"


def part_ends(pdf: Path) -> set[int]:
    """The pages (from 1) where ``pdf`` marks the end of a part (:data:`PART_END`).

    Raises:
        PageCheckError: pdfinfo is missing or cannot read the PDF.
    """
    proc = subprocess.run([_poppler("pdfinfo"), "-dests", str(pdf)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise PageCheckError(f"pdfinfo failed on {pdf}: {proc.stderr.strip()[:300]}")
    return {int(line.split()[0]) for line in proc.stdout.splitlines()[1:] if f'"{PART_END}' in line}


def blank_problems(page_fills: list[float], ends: set[int] | frozenset[int] = frozenset()) -> list[str]:
    """The near-blank pages among ``page_fills`` (every page but the last and the pages in ``ends``,
    where a part of the paper ends; see :data:`MIN_FILL`)."""
    return [
        f"page {number}: nearly blank (printed matter ends {share:.0%} down the page)"
        for number, share in enumerate(page_fills[:-1], 1)
        if share < MIN_FILL and number not in ends
    ]


def problems(pdf: Path) -> list[str]:
    """Every page problem of ``pdf``, in page order (the near-blank pages last); [] when none."""
    words = [problem for page in pages(pdf) for problem in page_problems(page)]
    return words + blank_problems(fills(pdf), part_ends(pdf))
