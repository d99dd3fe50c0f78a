"""Tests for declinecraft.paper.pdf: the PDF build and its errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from declinecraft.paper import pdf

HAS_TEX = shutil.which("latexmk") is not None


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

    def test_no_latexmk(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without latexmk the build is skipped (None), not failed."""
        monkeypatch.setattr(shutil, "which", lambda _: None)
        assert pdf.build_pdf(tmp_path) is None
