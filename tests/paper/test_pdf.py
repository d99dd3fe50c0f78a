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

    def test_no_latexmk(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without latexmk the build is skipped (None), not failed."""
        monkeypatch.setattr(shutil, "which", lambda _: None)
        assert pdf.build_pdf(tmp_path) is None
