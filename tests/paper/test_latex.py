"""Tests for declinecraft.paper.latex: escaping and number formatting for LaTeX."""

from __future__ import annotations

import pytest

from declinecraft.paper import latex


class TestEscape:
    @pytest.mark.parametrize(
        ("text", "tex"),
        [
            ("\\", "\\textbackslash{}"),
            ("{", "\\{"),
            ("}", "\\}"),
            ("$", "\\$"),
            ("&", "\\&"),
            ("#", "\\#"),
            ("^", "\\textasciicircum{}"),
            ("_", "\\_"),
            ("~", "\\textasciitilde{}"),
            ("%", "\\%"),
        ],
    )
    def test_each_special(self, text: str, tex: str) -> None:
        """Every special character of running text prints as itself."""
        assert latex.escape(f"a{text}b") == f"a{tex}b"

    def test_single_pass(self) -> None:
        """The braces an escape inserts are not escaped again, and plain text is untouched."""
        assert latex.escape("\\{") == "\\textbackslash{}\\{"
        assert latex.escape("Qwen3 30B-A3B (thinking), 1.5") == "Qwen3 30B-A3B (thinking), 1.5"

    def test_none_and_numbers(self) -> None:
        """None is empty; other values are printed first."""
        assert latex.escape(None) == "" and latex.escape(2.5) == "2.5"


class TestEscapeMarked:
    def test_superscript(self) -> None:
        """Role marks become a math superscript; underscores are escaped."""
        assert latex.escape_marked("a_b^{GR}") == "a\\_b$^{\\mathrm{GR}}$"

    def test_braces_elsewhere(self) -> None:
        """Only a trailing ``^{...}`` is a mark; other braces and carets are escaped."""
        assert latex.escape_marked("a^{b} c") == "a\\textasciicircum{}\\{b\\} c"
        assert latex.escape_marked("x {y}") == "x \\{y\\}"


class TestEscapeSymbols:
    def test_subscripts(self) -> None:
        """C_pre and R_lambda print as math subscripts, not with a literal underscore; the rest is escaped."""
        assert latex.escape_symbols("pages in C_pre & R_lambda") == "pages in $C_{\\mathrm{pre}}$ \\& $R_\\lambda$"
