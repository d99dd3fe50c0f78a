"""Tests of the views in the paper: every macro the sections use is defined, missing views are skipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.paper import views

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def cfg(tmp_path: Path):  # noqa: ANN201
    """A run whose views have not run yet (their stage folders are empty)."""
    (tmp_path / "params").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "params" / "default.yaml").write_text((ROOT / "params" / "default.yaml").read_text())
    (tmp_path / "params" / "models.yaml").write_text((ROOT / "params" / "models.yaml").read_text())
    return config.load(tmp_path / "params" / "default.yaml")


class TestViewMacros:
    def test_sections_use_defined_macros(self, cfg) -> None:  # noqa: ANN001
        """Every \\Kg*/\\Esb* macro in paper/main.tex is one the views define (n/a without output)."""
        used = set(re.findall(r"\\((?:Kg|Esb)[A-Za-z]+)", (ROOT / "paper" / "main.tex").read_text()))
        defined = {name for name, _, _ in views.view_macros(cfg)}
        assert used and used <= defined, sorted(used - defined)

    @pytest.mark.parametrize(("block", "prefix", "heading"), [
        ("know2guess", "Kg", "Know2Guess's protocol"), ("evidence", "Esb", "Evidence sufficiency")])  # fmt: skip
    def test_switched_off_view_leaves_its_section_out(self, cfg, block: str, prefix: str, heading: str) -> None:  # noqa: ANN001
        """A view switched off in the params sets its switch macro to 0, and every line of the paper
        that uses the view's macros sits inside the section that switch guards."""
        import dataclasses

        off = dataclasses.replace(cfg, blocks=cfg.blocks | {block: dataclasses.replace(getattr(cfg, block), enabled=False)})
        assert dict((n, v) for n, v, _ in views.view_macros(off))[f"{prefix}Enabled"] == "0"
        assert dict((n, v) for n, v, _ in views.view_macros(cfg))[f"{prefix}Enabled"] == "1"
        tex = (ROOT / "paper" / "main.tex").read_text()
        start = tex.index(f"\\ifnum\\{prefix}Enabled=1")
        end = tex.index("\\fi\n", start)
        guarded, outside = tex[start:end], tex[:start] + tex[end:]
        assert f"\\section{{{heading}" in guarded and "\\ifnum" not in guarded[1:]
        assert not re.findall(rf"\\{prefix}(?!Enabled)[A-Za-z]+", outside)

    def test_tex_lines(self) -> None:
        """Each macro becomes one \\newcommand line, text escaped."""
        tex = views.view_numbers_tex([("KgX", "a\\_b", "what")])
        assert "\\newcommand{\\KgX}{a\\_b}  % what" in tex


class TestViewFigures:
    def test_skipped_with_reason(self, cfg, tmp_path: Path) -> None:  # noqa: ANN001
        """Without the views' outputs no figure is drawn, and each says which file is missing."""
        rows = views.write_view_figures(cfg, tmp_path / "figs", formats=("png",), dpi=50)
        assert len(rows) == len(views.FIGURES) and all("missing" in r["reason"] for r in rows)
        assert not list((tmp_path / "figs").glob("*.png"))
