"""Tests for declinecraft.paper.tables: the LaTeX tables."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.analysis import paper_tables
from declinecraft.paper import tables
from tests.support import judged_tables


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
