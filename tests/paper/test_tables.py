"""Tests for declinecraft.paper.tables: the LaTeX tables."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import paper_tables
from declinecraft.paper import page_check, tables
from tests.support import judged_tables, projects

HAS_TOOLS = all(shutil.which(c) for c in ("pdflatex", "pdftotext"))


class TestWriteTables:
    def test_files(self, tmp_path: Path, results: dict[str, pl.DataFrame]) -> None:
        """Every fillable table is a .tex file; Table 9 and 10 give reasons here; stale ones go."""
        cfg = judged_tables.project(tmp_path, None)
        (tmp_path / "tables").mkdir()
        (tmp_path / "tables" / "table09.tex").write_text("stale")
        rows = tables.write_tables(results, cfg, tmp_path / "tables")
        reasons = {r["name"]: r["reason"] for r in rows}
        assert reasons["table09"] and reasons["table10"] and not reasons["table08"]
        assert (tmp_path / "tables" / "table12.tex").is_file() and not (tmp_path / "tables" / "table09.tex").exists()


class TestToLatex:
    def test_bold_best(self, results: dict[str, pl.DataFrame]) -> None:
        """The best CAR of Table 2 is bold and the header row is there."""
        tex = tables.to_latex("table02", paper_tables.build(results)["table02"])
        assert "\\toprule" in tex and tex.count("\\textbf{") >= 5

    def test_escapes_cells(self) -> None:
        """Text cells are escaped; role marks become a superscript; numbers keep one decimal."""
        frame = pl.DataFrame({"role": ["Judge {A} ~ 100%"], "model": ["m_1^{GR}"]})
        tex = tables.to_latex("table12", frame)
        assert "Judge \\{A\\} \\textasciitilde{} 100\\% & m\\_1$^{\\mathrm{GR}}$ \\\\" in tex

    def test_bold_per_model(self) -> None:
        """Tables 6 and 7 bold the best value of each model in each column, not of the whole column."""
        frame = pl.DataFrame(
            {
                "model": ["A", "A", "B", "B"],
                "k": [1, 5, 1, 5],
                "n_answerable": [6] * 4,
                "n_unanswerable": [7] * 4,
                "car": [50.0, 60.0, 20.0, 10.0],
                "accuracy": [70.0, 65.0, 30.0, 35.0],
                "bal_f1": [1.0, 2.0, 3.0, float("nan")],
            }
        )
        body = tables.to_latex("table06", frame, min_n=6).splitlines()[5:9]
        assert body == [
            "A & 1 & 6 / 7 & 50.0 & \\textbf{70.0} & 1.0 \\\\",
            "A & 5 & 6 / 7 & \\textbf{60.0} & 65.0 & \\textbf{2.0} \\\\",
            "B & 1 & 6 / 7 & \\textbf{20.0} & 30.0 & \\textbf{3.0} \\\\",
            "B & 5 & 6 / 7 & 10.0 & \\textbf{35.0} & -- \\\\",
        ]

    def test_no_bold_below_the_small_n_rule(self) -> None:
        """A best value is bolded only when every row rests on enough of the questions its column
        counts: CAR on the unanswerable ones, accuracy on the answerable ones; each row prints its n."""
        frame = pl.DataFrame(
            {
                "model": ["A", "A"],
                "k": [1, 5],
                "n_answerable": [1, 1],
                "n_unanswerable": [6, 6],
                "car": [50.0, 60.0],
                "accuracy": [0.0, 100.0],
                "bal_f1": [1.0, 2.0],
            }
        )
        body = tables.to_latex("table06", frame, min_n=6).splitlines()[5:7]
        assert body == ["A & 1 & 1 / 6 & 50.0 & 0.0 & 1.0 \\\\", "A & 5 & 1 / 6 & \\textbf{60.0} & 100.0 & 2.0 \\\\"]
        assert "textbf" not in tables.to_latex("table06", frame.drop("n_unanswerable"), min_n=6)
        assert tables.to_latex("table06", frame.drop("n_unanswerable")).count("textbf") == 3

    def test_counted_by(self) -> None:
        """CAR counts unanswerable questions, balanced F1 both halves, the rest the answerable ones."""
        assert tables.counted_by("car_iterative") == ("n_unanswerable",)
        assert tables.counted_by("bal_f1") == ("n_answerable", "n_unanswerable")
        assert tables.counted_by("accuracy_no_rag") == tables.counted_by("attempt") == ("n_answerable",)

    def test_unknown_table(self) -> None:
        """A table without a spec gets one column per frame column, headers escaped."""
        tex = tables.to_latex("table99", pl.DataFrame({"a_b": [1.25], "c": ["x&y"]}))
        assert "a\\_b & c \\\\" in tex and "1.2 & x\\&y \\\\" in tex


#: How paper/main.tex's ``\dctable`` sets a table file: a full-width float, small type, at most the
#: text's width.
FLOAT_SETTING = "\\small\\adjustbox{max width=\\textwidth}{\\input{tables/#2.tex}}"


@pytest.mark.skipif(not HAS_TOOLS, reason="pdflatex or pdftotext is not installed (make setup installs them)")
def test_tables_at_27_models_fit_the_page(tmp_path: Path, paper_sized: dict[str, pl.DataFrame]) -> None:
    """Every table of a run at the paper's size (27 models, 40 configurations, 72 rows in the
    retrieval ablation), set as paper/main.tex sets it in the appendix (one column, in a float at
    most the text's width), stays inside the page: the page check finds nothing on any page, and
    no type is scaled below 6 pt."""
    assert FLOAT_SETTING in (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
    cfg = judged_tables.project(tmp_path, None)
    folder = tmp_path / "tables"
    rows = tables.write_tables(paper_sized, cfg, folder)
    written = [r["name"] for r in rows if not r["reason"]]
    assert {"table02", "table03", "table06", "table07", "table11"} <= set(written)
    built = paper_tables.build(paper_sized, cfg)
    assert max(t.height for t in built.values() if isinstance(t, pl.DataFrame)) >= 72
    body = "".join(
        "\\begin{table*}[p]\\centering\\caption{"
        + name
        + "}"
        + FLOAT_SETTING.replace("#2", name)
        + "\\end{table*}\\clearpage"
        for name in written
    )
    (tmp_path / "paper.tex").write_text(
        "\\documentclass[10pt,twocolumn]{article}\\usepackage[margin=0.75in]{geometry}\\usepackage{mathptmx}"
        "\\usepackage{booktabs,longtable,array,amsmath,xcolor}\\usepackage[export]{adjustbox}"
        f"\\begin{{document}}\\onecolumn {body}\\end{{document}}\n",
        encoding="utf-8",
    )
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "paper.tex"], cwd=tmp_path, capture_output=True, check=True)
    assert page_check.problems(tmp_path / "paper.pdf") == []
    # No table is scaled below 6 pt type (a word's box in Times is 0.89 of its size in points).
    smallest = min(w.y1 - w.y0 for page in page_check.pages(tmp_path / "paper.pdf") for w in page.words)
    assert smallest >= 0.89 * 6
