"""Tests for declinecraft.paper.numbers: the paper's macros, their formatting, reported against reproduced."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import paper_tables
from declinecraft.paper import numbers


class TestCompute:
    def test_reasons(self, results: dict[str, pl.DataFrame]) -> None:
        """Defined numbers print; undefined ones say n/a with a reason."""
        computed = numbers.compute(results)
        row = computed.filter(pl.col("macro") == "CprePages").row(0, named=True)
        assert row["text"] == "n/a" and "corpus_stats" in row["reason"]
        assert computed.filter(pl.col("macro") == "SigUpSingle")["text"][0] != "n/a"

    def test_benchmark_sizes(self, results: dict[str, pl.DataFrame]) -> None:
        """The benchmark's size per half comes from the verify stage's fates (the kept candidates),
        apart from how many questions were evaluated; the drafts per half count every fate."""
        fates = pl.DataFrame(
            {
                "generator": ["g"] * 4,
                "answerable": [True, True, False, False],
                "fate": ["kept", "rejected_answers", "kept", "rejected_stated"],
                "n": [6, 10, 8, 1],
            }
        )
        computed = numbers.compute(results | {"audit_fates": fates})
        text = dict(zip(computed["macro"], computed["text"], strict=True))
        assert (text["BenchAnswerable"], text["BenchUnanswerable"]) == ("6", "8")
        assert (text["DraftsAnswerable"], text["DraftsUnanswerable"]) == ("16", "9")
        assert text["NAnswerable"] != "n/a"

    def test_text_escaped(self, results: dict[str, pl.DataFrame]) -> None:
        """A model name quoted in the text is escaped for LaTeX (braces and tildes included)."""
        leak = results["leakage_model"].head(1).with_columns(model=pl.lit("m_{x}~1"), accuracy=pl.lit(0.5))
        computed = numbers.compute({"leakage_model": leak})
        text = dict(zip(computed["macro"], computed["text"], strict=True))
        assert text["LeakTopModel"] == "m\\_\\{x\\}\\textasciitilde{}1" and text["LeakTopAcc"] == "50.0"

    def test_small_n_caveat(self, results: dict[str, pl.DataFrame]) -> None:
        """A mean from fewer questions than the threshold prints with its n and the caveat (and
        \\pc keeps its percent sign on the value); from enough questions, as the plain number."""
        plain = numbers.compute(results).filter(pl.col("macro") == "CARnoragMean").row(0, named=True)
        assert plain["text"] == numbers.fmt(plain["value"], "pct") and plain["small"] == ""
        strict = numbers.compute(results, min_n=10_000).filter(pl.col("macro") == "CARnoragMean").row(0, named=True)
        n = int(strict["n"])
        assert strict["text"] == f"\\dcsmall{{{plain['text']}}}{{{n} questions}}"
        assert strict["small"] == f"n = {n} questions, not interpretable at this n" and strict["reason"] == ""

    def test_small_n_accuracy(self, results: dict[str, pl.DataFrame]) -> None:
        """Accuracy scored on one answerable question is no finding: "n = 1 question"."""
        grid = results["main_grid"].with_columns(accuracy_n=pl.lit(1, pl.Int64))
        row = (
            numbers.compute({**results, "main_grid": grid})
            .filter(pl.col("macro") == "AccSingleMean")
            .row(0, named=True)
        )
        assert row["text"].startswith("\\dcsmall{") and row["text"].endswith("{1 question}")

    def test_small_n_style_auc(self) -> None:
        """The style AUC from two questions a half carries the caveat (an AUC ranks pairs across the
        halves, so the smaller half is its n); from thirty a half it does not."""

        def auc(n: int) -> str:
            style = pl.DataFrame(
                {
                    "variant": ["style_only", "full"],
                    "auc": [0.25, 0.4],
                    "n_answerable": [n // 2] * 2,
                    "n_unanswerable": [n - n // 2] * 2,
                }
            )
            computed = numbers.compute({"audit_style": style})
            return computed.filter(pl.col("macro") == "StyleAUCStyle")["text"][0]

        assert auc(4) == "\\dcsmall{0.25}{2 questions in the smaller half}" and auc(60) == "0.25"

    def test_small_n_p_kept(self, results: dict[str, pl.DataFrame]) -> None:
        """A p value (printed in math mode) keeps its text; its n is recorded for the words."""
        row = (
            numbers.compute(results, min_n=10_000).filter(pl.col("macro") == "PCARSingleMinusNorag").row(0, named=True)
        )
        assert "dcsmall" not in row["text"] and row["n"] is not None and "not interpretable" in row["small"]

    def test_no_input(self) -> None:
        """Without input every number is n/a with the given reason."""
        computed = numbers.compute({}, no_input="no judged table")
        assert set(computed["text"]) == {"n/a"} and computed["reason"].str.contains("no judged table").all()

    def test_shares_carry_their_n(self) -> None:
        """Every percent, point or kappa the prose can state as a finding names what it rests on,
        so the small-n rule can print it with its n. Not findings: the run's own share of cut
        answers (run health) and Table 10's kappas (their n is the annotators' sheet, printed with the
        table)."""
        exempt = {"BudgetExhaustedShare"} | {
            f"Human{who}{part}" for who in ("HH", "JH", "JM") for part in ("One", "Two")
        }
        bare = [n.macro for n in numbers.NUMBERS if n.fmt in {"pct", "pts", "kappa"} and n.n is None]
        assert set(bare) <= exempt, sorted(set(bare) - exempt)

    def test_lost_abstentions_small_n(self, results: dict[str, pl.DataFrame]) -> None:
        """The share of lost abstentions that became denials prints with how many were lost."""
        row = numbers.compute(results, min_n=10_000).filter(pl.col("macro") == "ThinkLostToDenial").row(0, named=True)
        assert row["text"].startswith("\\dcsmall{") and row["text"].endswith(" abstentions lost}")

    def test_judge_difference_is_table_5s(self) -> None:
        """The text's judge difference is Table 5's pair farthest from 0, with Table 5's sign and names."""
        agreement = pl.DataFrame(
            {
                "judge_a": ["score_a", "score_a", "score_b", "all"],
                "judge_b": ["score_b", "score_c", "score_c", "all"],
                "rows": [8, 8, 8, 8],
                "mean_diff": [0.05, -0.147, 0.1, None],
                "kappa": [0.1, 0.2, 0.3, 0.4],
                "exact": [0.5, 0.5, 0.5, 0.5],
            }
        )
        computed = numbers.compute({"judge_agreement": agreement}, min_n=1)
        text = dict(zip(computed["macro"], computed["text"], strict=True))
        table = paper_tables.table05({"judge_agreement": agreement})
        assert isinstance(table, pl.DataFrame)
        assert text["JudgeLeniencyPair"] == "a vs c" and text["JudgeLeniencySpread"] == "\\textminus 14.7"
        assert table.filter(pl.col("judges") == "a vs c")["mean_diff"][0] == pytest.approx(-14.7)

    def test_unique_macros(self) -> None:
        """Macro names are unique and letters only."""
        names = [n.macro for n in numbers.NUMBERS]
        assert len(names) == len(set(names)) and all(n.isalpha() for n in names)


class TestFmt:
    @pytest.mark.parametrize(
        ("value", "kind", "text"),
        [
            (0.5642, "pct", "56.4"),
            (-0.1, "pts", "\\textminus 10.0"),
            (0.6, "rho", "+0.60"),
            (0.0004, "p", "<0.001"),
            (3404, "int", "3{,}404"),
        ],
    )
    def test_kinds(self, value: float, kind: str, text: str) -> None:
        """Percent, signed points, rho, p and integers print as in the paper."""
        assert numbers.fmt(value, kind) == text


class TestNumbersTex:
    def test_newcommand(self) -> None:
        """One newcommand per number; n/a lines carry their reason as a comment."""
        tex = numbers.numbers_tex(numbers.compute({}, no_input="x"))
        assert (
            "\\newcommand{\\CARsingleMean}{n/a}  % mean CAR with single-shot RAG -- n/a: no condition_means "
            "results in this run (x)"
        ) in tex


class TestReportedVsReproduced:
    def test_rows(self) -> None:
        """Each headline number appears beside its reported value, as a macro."""
        computed = numbers.compute({}, no_input="x")
        tex = numbers.reported_vs_reproduced(computed, {"car_mean_single_shot": {"value": 56.4, "unit": "percent"}})
        assert "56.4 & \\CARsingleMean" in tex

    def test_spans_pages(self) -> None:
        """Table R is a longtable whose header repeats on every page (a hundred rows fit no page)."""
        computed = numbers.compute({}, no_input="x")
        tex = numbers.reported_vs_reproduced(computed, {"car_mean_single_shot": {"value": 56.4, "unit": "percent"}})
        assert "\\begin{longtable}" in tex and "\\end{longtable}" in tex and "tabular" not in tex
        assert tex.count("Quantity & Paper & This run") == 2 and "\\endhead" in tex and "\\label{tab:reported}" in tex

    def test_text_value_escaped(self) -> None:
        """A reported value that is text is escaped; a negative number gets a real minus."""
        computed = numbers.compute({}, no_input="x")
        tex = numbers.reported_vs_reproduced(
            computed, {"car_mean_no_rag": {"value": "~40%"}, "car_mean_single_shot": {"value": -2}}
        )
        assert "\\textasciitilde{}40\\% & \\CARnoragMean" in tex and "\\textminus 2 & \\CARsingleMean" in tex

    def test_symbols_as_subscripts(self) -> None:
        """ "pages in C_pre" prints C_pre as a subscript, never with a literal underscore."""
        computed = numbers.compute({}, no_input="x")
        tex = numbers.reported_vs_reproduced(computed, {"c_pre_pages": {"value": 3404, "unit": "pages"}})
        assert "pages in $C_{\\mathrm{pre}}$ & 3404 & \\CprePages" in tex and "C\\_pre" not in tex


class TestNumbering:
    def test_original_numbers_and_view_series(self, root: Path) -> None:
        """main.tex prints the original's number for each of its figures and tables (figNN_*,
        tableNN), the views' own K and E series in order, and a letter for ours."""
        tex = (root / "paper" / "main.tex").read_text(encoding="utf-8")
        calls = re.findall(r"\\(?:dcfigure|dcfigurewide|dctable)(?:\[([^\]]*)\])?\{([A-Za-z0-9_]+)\}", tex)
        assert calls and all(number for number, _ in calls), "a figure or table without its printed number"
        series: dict[str, list[str]] = {"K": [], "E": []}
        for number, name in calls:
            if match := re.match(r"(?:fig|table)(\d\d)", name):
                assert number == str(int(match.group(1))), name
            elif name.startswith(("k2g_", "esb_")):
                series["K" if name.startswith("k2g_") else "E"].append(number)
            else:
                assert number.isalpha() and number.isupper(), name
        assert series == {k: [f"{k}{i}" for i in range(1, len(v) + 1)] for k, v in series.items()}
        assert len(series["K"]) == 4 and len(series["E"]) == 5
