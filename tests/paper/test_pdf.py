"""Tests for declinecraft.paper.pdf: the PDF build and its errors."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest

from declinecraft.paper import examples_appendix, numbers, pdf, prompts_appendix
from tests.support import projects

HAS_TEX = shutil.which("latexmk") is not None
SCHEMA = {"reported": pl.String, "macro": pl.String}


class TestBuildPdf:
    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_error_lines(self, tmp_path: Path) -> None:
        """A LaTeX error fails with the log's first error line and leaves no PDF or junk."""
        (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}\n")
        with pytest.raises(pdf.PaperBuildError, match="Undefined control sequence"):
            pdf.build_pdf(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["main.tex"]

    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_reproducible(self, tmp_path: Path) -> None:
        """Two builds of one source, in different folders, are the same bytes, dated by the epoch given."""
        built = []
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "main.tex").write_text(
                "\\documentclass{article}\\begin{document}On \\today.\\end{document}\n"
            )
            built.append(pdf.build_pdf(tmp_path / name, epoch=1788825600))
        first, second = (p.read_bytes() for p in built if p is not None)
        assert first == second
        assert b"/CreationDate (D:20260908000000Z)" in first and b"/ID" not in first

    @pytest.mark.skipif(not HAS_TEX, reason="latexmk is not installed")
    def test_undefined_reference(self, tmp_path: Path) -> None:
        """A \\ref to a label nothing defines fails the build, naming the label."""
        (tmp_path / "main.tex").write_text(
            "\\documentclass{article}\\begin{document}\\section{A}\\label{sec:a}See \\ref{sec:a} and "
            "\\ref{sec:nowhere}.\\end{document}\n"
        )
        with pytest.raises(pdf.PaperBuildError, match="never defines: sec:nowhere$"):
            pdf.build_pdf(tmp_path)

    def test_no_latexmk(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without latexmk the build is skipped (None), not failed."""
        monkeypatch.setattr(shutil, "which", lambda _: None)
        assert pdf.build_pdf(tmp_path) is None


class TestUndefinedReferences:
    def test_from_the_log(self) -> None:
        """Each undefined label once, in the log's order; a log without the warning gives none."""
        log = (
            "LaTeX Warning: Reference `app:j2' on page 3 undefined on input line 12.\n"
            "LaTeX Warning: Reference `fig:x' on page 4 undefined on input line 40.\n"
            "LaTeX Warning: Reference `app:j2' on page 9 undefined on input line 99.\n"
        )
        assert pdf.undefined_references(log) == ["app:j2", "fig:x"]
        assert pdf.undefined_references("Output written on main.pdf (3 pages).") == []


class TestMainTex:
    """paper/main.tex keeps the original's structure and every reference resolves."""

    TEX = (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
    #: The original's numbered sections (seeds/000: 1 Introduction ... 6 Limitations), in order.
    ORIGINAL = ["Introduction", "Related work", "The benchmark", "Results", "Conclusion", "Limitations"]

    def test_original_numbers(self) -> None:
        """The body numbers only the original's six sections, in its order (ours are lettered), and
        Limitations has the original's five subsections 6.1-6.5."""
        assert re.findall(r"^\\dcorigsection\{([^}]*)\}", self.TEX, flags=re.M) == self.ORIGINAL
        assert re.findall(r"^\\dcoursection\{([^}]*)\}", self.TEX, flags=re.M) == ["RH", "K2G", "ESB", "RN"]
        body = self.TEX.split("\\appendix")[0].split("\\begin{document}")[1]
        assert not re.findall(r"^\\section\{", body, flags=re.M)
        limitations = body.split("\\dcorigsection{Limitations}")[1].split("\\dcoursection")[0]
        assert len(re.findall(r"\\subsection\{", limitations)) == 5

    def test_every_ref_resolves(self, tmp_path: Path) -> None:
        """Every \\ref of main.tex names a label that main.tex defines, or one its figure and table
        macros or the generated prompts and examples appendices define."""
        labels = set(re.findall(r"\\label\{([^}]+)\}", self.TEX))
        labels |= {f"fig:{stem}" for stem in re.findall(r"\\dcfigure(?:wide)?(?:\[[^\]]*\])?\{([^}]+)\}", self.TEX)}
        labels |= {f"tab:{stem}" for stem in re.findall(r"\\dctable(?:\[[^\]]*\])?\{([^}]+)\}", self.TEX)}
        generated = "".join(
            (
                prompts_appendix.prompts_tex(projects.REPO / "params" / "prompts"),
                examples_appendix.examples_tex(None, max_questions=1, max_chars=10, why_missing="none"),
                numbers.reported_vs_reproduced(pl.DataFrame({"reported": [], "macro": []}, schema=SCHEMA), {}),
            )
        )
        labels |= set(re.findall(r"\\label\{([^}]+)\}", generated))
        refs = set(re.findall(r"\\ref\{([^}]+)\}", self.TEX)) - {"prompt:#1"}
        refs |= {f"prompt:{name}" for name in re.findall(r"\\dcprompt\{([a-z_]+)\}", self.TEX)}
        assert refs and refs <= labels, sorted(refs - labels)
