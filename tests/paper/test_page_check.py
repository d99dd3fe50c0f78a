"""Tests for declinecraft.paper.page_check: text off the page, text over text and near-blank pages,
on hand-made pages and on a PDF that TeX builds with each defect."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from declinecraft.paper import page_check
from declinecraft.paper.page_check import Page, Word
from tests.support import projects

LETTER = (612.0, 792.0)


HAS_TOOLS = all(shutil.which(c) for c in ("pdflatex", "pdftotext", "pdftoppm"))


def page(*words: Word) -> Page:
    return Page(1, *LETTER, words)


class TestPageProblems:
    def test_clean_page(self) -> None:
        """Two words side by side inside the text block, and two touching lines, are no problem."""
        clean = page(Word("a", 60, 100, 90, 110), Word("b", 95, 100, 120, 110), Word("c", 60, 107, 90, 117))
        assert page_check.page_problems(clean) == []

    def test_outside_and_margins(self) -> None:
        """A word past the page, one in the side margin and one at the bottom edge are named."""
        found = page_check.page_problems(
            page(Word("far", 600, 100, 640, 110), Word("wide", 540, 100, 570, 110), Word("low", 300, 780, 320, 790))
        )
        assert found == [
            "page 1: 'far' is outside the page",
            "page 1: 'wide' runs into the side margin",
            "page 1: 'low' is at the page's top or bottom edge",
        ]

    def test_printed_over(self) -> None:
        """A page number printed over a table's word is named with both words."""
        found = page_check.page_problems(page(Word("12", 300, 700, 310, 710), Word("Failed", 295, 701, 330, 711)))
        assert found == ["page 1: '12' and 'Failed' are printed over each other"]


def test_output_that_is_not_xml() -> None:
    """pdftotext's output is read even where a PDF's text makes it invalid XML (a control character,
    an escaped ampersand): every page and printable word comes back, unescaped; a word of control
    codes only (a glyph the font lacks, boxed at full height) is left out."""
    text = (
        '<doc><page width="612.0" height="792.0"><word xMin="60" yMin="100" xMax="90" yMax="110">a&amp;b\x01</word>'
        '</page><page width="612.0" height="792.0"><word xMin="1" yMin="2" xMax="3" yMax="4">&lt;x</word>'
        '<word xMin="1" yMin="0" xMax="9" yMax="30">\x19</word></page></doc>'
    )
    found = page_check._parse(text)
    assert [(p.number, [w.text for w in p.words]) for p in found] == [(1, ["a&b\x01"]), (2, ["<x"])]
    assert found[0].words[0] == Word("a&b\x01", 60, 100, 90, 110)


def test_margin_matches_the_paper() -> None:
    """MARGIN_PT is the margin paper/main.tex sets."""
    found = re.search(r"\\usepackage\[margin=([0-9.]+)in", (projects.REPO / "paper" / "main.tex").read_text())
    assert found and float(found.group(1)) * 72 == page_check.MARGIN_PT


@pytest.mark.skipif(not HAS_TOOLS, reason="pdflatex or pdftotext is not installed (make setup installs them)")
def test_built_pdf(tmp_path: Path) -> None:
    """A PDF with a word printed over another and a line too wide for the page gives both
    problems; the same page without them gives none."""
    body = {
        "clean": "Plain words on a page.",
        "broken": "Hello\\llap{World} there.\\par\\noindent\\hbox to 7.6in{\\hfil Beyond}",
    }
    found = {}
    for name, text in body.items():
        (tmp_path / f"{name}.tex").write_text(
            "\\documentclass{article}\\usepackage[margin=0.75in]{geometry}\\pagestyle{empty}"
            f"\\begin{{document}}{text}\\end{{document}}\n"
        )
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", f"{name}.tex"], cwd=tmp_path, capture_output=True, check=True
        )
        found[name] = page_check.problems(tmp_path / f"{name}.pdf")
    assert found["clean"] == []
    assert any("printed over each other" in p for p in found["broken"]), found["broken"]
    assert any("'Beyond'" in p and ("outside the page" in p or "side margin" in p) for p in found["broken"]), found[
        "broken"
    ]


def test_missing_pdftotext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pdftotext the check says what to install."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(page_check.PageCheckError, match="poppler-utils"):
        page_check.pages(tmp_path / "x.pdf")


class TestNearBlank:
    def test_fill(self) -> None:
        """The fill is the lowest printed row's share of the height; the page number's band does not count."""
        image = np.full((792, 10), 255, dtype=np.uint8)
        image[100, 3] = 0
        assert page_check.fill(image) == pytest.approx(101 / 792)
        image[770, 3] = 0  # the page number
        assert page_check.fill(image) == pytest.approx(101 / 792)
        assert page_check.fill(np.full((792, 10), 255, dtype=np.uint8)) == 0.0

    def test_read_pgm(self) -> None:
        """A gray image whose first pixels are white-space bytes reads whole; a short one is an error."""
        pixels = bytes([10, 32, 255, 0, 9, 200])
        image = page_check.read_pgm(b"P5\n3 2\n255\n" + pixels)
        assert image.tolist() == [[10, 32, 255], [0, 9, 200]]
        with pytest.raises(page_check.PageCheckError, match="short image"):
            page_check.read_pgm(b"P5\n3 2\n255\n" + pixels[:4])

    def test_blank_problems(self) -> None:
        """Pages ending above half their height are named, except the last and where a part ends."""
        assert page_check.blank_problems([0.9, 0.3, 0.6, 0.2]) == [
            "page 2: nearly blank (printed matter ends 30% down the page)"
        ]
        assert page_check.blank_problems([0.9, 0.3, 0.6, 0.2], {2}) == []


@pytest.mark.skipif(not HAS_TOOLS, reason="pdflatex, pdftotext or pdftoppm is not installed (make setup installs them)")
def test_built_pdf_near_blank(tmp_path: Path) -> None:
    """A heading and one line, then a page break, is a near-blank page; the same text run on is not,
    nor is that page when it is marked as where a part of the paper ends."""
    filler = " ".join(["Words that fill the page."] * 700)
    body = {"full": f"\\section{{A}} One line. {filler}", "blank": f"\\section{{A}} One line.\\clearpage {filler}"}
    body["part"] = body["blank"].replace("\\clearpage", f"\\hypertarget{{{page_check.PART_END}.body}}{{}}\\clearpage")
    found = {}
    for name, text in body.items():
        (tmp_path / f"{name}.tex").write_text(
            f"\\documentclass{{article}}\\usepackage[margin=0.75in]{{geometry}}\\usepackage{{hyperref}}"
            f"\\begin{{document}}{text}\\end{{document}}\n"
        )
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", f"{name}.tex"], cwd=tmp_path, capture_output=True, check=True
        )
        found[name] = page_check.problems(tmp_path / f"{name}.pdf")
    assert found["full"] == []
    assert [p for p in found["blank"] if "nearly blank" in p] == [found["blank"][-1]]
    assert found["blank"][-1].startswith("page 1: nearly blank")
    assert found["part"] == [p for p in found["blank"] if "nearly blank" not in p]
    assert page_check.part_ends(tmp_path / "part.pdf") == {1}
