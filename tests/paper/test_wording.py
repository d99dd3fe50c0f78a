"""Tests for declinecraft.paper.wording and of the prose in paper/main.tex that uses it: no sentence
states a finding in fixed words, and each word follows the numbers printed next to it."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft.paper import numbers, wording
from declinecraft.paper.number_sources import SCHEMA
from tests.support import projects

MAIN = projects.REPO / "paper" / "main.tex"


def macro_frame(**values: tuple[float | None, str]) -> pl.DataFrame:
    """A numbers table: every macro the words read is n/a unless given as (value, fmt)."""
    needed = set(re.findall(r'"([A-Z][A-Za-z]+)"', Path(wording.__file__).read_text()))
    rows = []
    for macro in sorted(needed | set(values)):
        value, kind = values.get(macro, (None, "num"))
        text = "n/a" if value is None else numbers.fmt(value, kind)
        rows.append(dict(macro=macro, what="", value=value, text=text, reason="", reported="", fmt=kind))
    return pl.DataFrame(rows, schema=SCHEMA)


def words(frame: pl.DataFrame, **kwargs: object) -> dict[str, str]:
    out = wording.words(frame, alpha=0.05, **kwargs)
    return dict(zip(out["macro"], out["text"], strict=True))


class TestChange:
    @pytest.mark.parametrize(
        ("before", "after", "word"),
        [
            (0.171, 0.564, "raises it to"),
            (0.564, 0.171, "lowers it to"),
            (0.0, 0.0, "leaves it at"),
            (0.0001, 0.0004, "leaves it at"),
            (None, 0.5, "gives"),
        ],
    )
    def test_direction(self, before: float | None, after: float, word: str) -> None:
        """Up, down, the same when the two means print alike (never 'rises from 0.0% to 0.0%'), n/a;
        with the change's test below alpha."""
        got = words(
            macro_frame(CARnoragMean=(before, "pct"), CARsingleMean=(after, "pct"), PCARSingleMinusNorag=(0.01, "p"))
        )
        assert got["DirCARSingle"] == word

    @pytest.mark.parametrize("p", [0.65, 0.05, None])
    def test_no_comparative_without_significance(self, p: float | None) -> None:
        """A change whose test has p >= alpha (or no test) gets no comparative word."""
        got = words(
            macro_frame(CARnoragMean=(0.171, "pct"), CARsingleMean=(0.564, "pct"), PCARSingleMinusNorag=(p, "p"))
        )
        assert got["DirCARSingle"] == "gives"


class TestSign:
    @pytest.mark.parametrize(
        ("change", "word"),
        [(-0.14, "lowers"), (0.02, "raises"), (0.0004, "does not change"), (-0.0004, "does not change")],
    )
    def test_thinking(self, change: float, word: str) -> None:
        """A mean change that prints as +0.0 or -0.0 points is no change."""
        got = words(macro_frame(ThinkCARNorag=(change, "pts"), ThinkCARPNorag=(0.01, "p")))
        assert got["DirThinkNorag"] == word

    def test_not_significant(self) -> None:
        """A thinking change with p >= alpha shifts CAR without a direction."""
        got = words(macro_frame(ThinkCARNorag=(-0.14, "pts"), ThinkCARPNorag=(0.3, "p")))
        assert got["DirThinkNorag"] == "shifts, without a significant direction,"


class TestSignificance:
    @pytest.mark.parametrize(
        ("p", "word"),
        [(0.001, "significant"), (0.05, "not significant"), (0.3, "not significant"), (None, "not testable")],
    )
    def test_word(self, p: float | None, word: str) -> None:
        """p below alpha is significant; n/a is not testable."""
        assert words(macro_frame(PCARSingleMinusNorag=(p, "p")))["SigCARSingle"] == word


class TestAssociation:
    def test_positive(self) -> None:
        """A significant positive rank correlation on enough models."""
        got = words(macro_frame(RhoAccTotal=(0.6, "rho"), PAccTotal=(0.005, "p"), NAccTotal=(20, "int")))
        assert got["AssocAccTotal"] == "significant and positive"

    def test_none(self) -> None:
        """p at or above alpha is not significant."""
        got = words(macro_frame(RhoCARTotal=(-0.24, "rho"), PCARTotal=(0.31, "p"), NOpenWeight=(20, "int")))
        assert got["AssocCARTotal"] == "not significant"

    def test_too_few(self) -> None:
        """Four models cannot test a rank correlation (the claims check's rule), whatever p says."""
        got = words(macro_frame(RhoCARTotal=(-1.0, "rho"), PCARTotal=(0.0, "p"), NOpenWeight=(4, "int")))
        assert got["AssocCARTotal"] == "not testable"


class TestSmallN:
    def test_change_below(self) -> None:
        """Means from fewer questions than the rule's threshold state no direction: "gives"."""
        frame = macro_frame(CARnoragMean=(0.2, "pct"), CARsingleMean=(0.6, "pct"))
        small = frame.with_columns(n=pl.when(pl.col("macro").str.starts_with("CAR")).then(4.0))
        assert words(small)["DirCARSingle"] == "gives"

    def test_change_above(self) -> None:
        """The same means from enough questions, with a significant test, are a finding: "raises it to"."""
        frame = macro_frame(CARnoragMean=(0.2, "pct"), CARsingleMean=(0.6, "pct"), PCARSingleMinusNorag=(0.01, "p"))
        enough = frame.with_columns(n=pl.when(pl.col("macro").str.starts_with("CAR")).then(300.0))
        assert words(enough)["DirCARSingle"] == "raises it to"

    def test_significance_below(self) -> None:
        """A Wilcoxon p over two configurations is not testable, whatever it says."""
        frame = macro_frame(PCARSingleMinusNorag=(0.001, "p")).with_columns(n=pl.lit(2.0))
        assert words(frame)["SigCARSingle"] == "not testable"

    def test_threshold_from_params(self) -> None:
        """A set analysis.min_n raises the threshold: 300 questions are not enough for 500."""
        frame = macro_frame(CARnoragMean=(0.2, "pct"), CARsingleMean=(0.6, "pct")).with_columns(n=pl.lit(300.0))
        out = wording.words(frame, alpha=0.05, min_n=500)
        assert dict(zip(out["macro"], out["text"], strict=True))["DirCARSingle"] == "gives"

    def test_association_param(self) -> None:
        """analysis.min_n above the rank test's minimum makes 20 models too few."""
        frame = macro_frame(RhoAccTotal=(0.6, "rho"), PAccTotal=(0.005, "p"), NAccTotal=(20, "int"))
        out = wording.words(frame, alpha=0.05, min_n=30)
        assert dict(zip(out["macro"], out["text"], strict=True))["AssocAccTotal"] == "not testable"


class TestThinkingFlag:
    def test_flag(self) -> None:
        """ThinkingPairs is 1 only without a reason; ThinkingWhy carries the reason, escaped."""
        assert words(macro_frame())["ThinkingPairs"] == "1"
        got = words(macro_frame(), thinking_problem="no model with switchable thinking (answer.thinking: off)")
        assert got["ThinkingPairs"] == "0" and got["ThinkingWhy"].startswith("no model")


class TestMainTex:
    def test_no_fixed_findings(self) -> None:
        """The paper's findings are not hard-coded as headings or verbs."""
        text = MAIN.read_text(encoding="utf-8")
        for phrase in (
            "Retrieval raises abstention",
            "No clear link",
            "CAR rises from",
            "lowers the mean to",
            "barely moves",
            "by contrast",
        ):
            assert phrase not in text, phrase

    def test_results_headings_ask(self) -> None:
        """Every results subsection after the setup states a question, up to the original's 4.5,
        which names its models."""
        results = MAIN.read_text(encoding="utf-8").split("\\dcorigsection{Results}")[1].split("\\dcoursection{")[0]
        headings = re.findall(r"\\subsection\{(.+?)\}\n", results)
        assert len(headings) == 5 and all(h.endswith("?") for h in headings[1:4])
        assert headings[4] == "Models fine-tuned to abstain"

    def test_counts_pluralised(self) -> None:
        """No "(s)" plural: a count followed by its noun goes through \\dcplural ("1 family", "2 families")."""
        text = MAIN.read_text(encoding="utf-8")
        assert "(s)" not in text and "\\newcommand{\\dcplural}" in text
        assert "\\dcplural{\\FamDenyNorag}{family}{families}" in text
        assert "\\dcplural{\\EsbModels}{model}{models}" in text

    def test_small_n_macro(self) -> None:
        """The small-n caveat macro exists and \\pc keeps the percent sign on the value."""
        text = MAIN.read_text(encoding="utf-8")
        assert "\\DeclareRobustCommand{\\dcsmall}[2]" in text and "not interpretable at this~$n$" in text

    def test_points_after_value(self) -> None:
        """A change in points is written \\pt{\\Macro}, so "points" follows the value, not the caveat."""
        text = MAIN.read_text(encoding="utf-8")
        assert "\\pt{\\KgXCarShiftNoRag}" in text and not re.search(r"\\[A-Za-z]+\{\} points", text)

    def test_every_word_used(self) -> None:
        """Every word macro is used by the prose, and every word macro the prose uses exists."""
        text = MAIN.read_text(encoding="utf-8")
        made = {w.macro for w in wording.WORDS} | {"ThinkingPairs", "ThinkingWhy"}
        used = set(re.findall(r"\\((?:Dir|Sig|Assoc)[A-Z][A-Za-z]*|Thinking(?:Pairs|Why))", text))
        assert made <= used
        assert {u for u in used if not u.startswith(("SigUp", "SigDown", "DirBoth"))} <= made


class TestResultsScope:
    def test_too_small(self) -> None:
        """A run below the small-n rule says in one sentence that the section can test nothing, with its counts."""
        got = words(macro_frame(NAnswerable=(2, "int"), NUnanswerable=(4, "int"), NConfigs=(2, "int")))
        assert got["ResultsScope"].startswith("At this size the section can test nothing: its comparisons rest on 2")
        assert "fewer than the 6 of each" in got["ResultsScope"]
        assert "\\ref{tab:table02}" in got["ResultsScope"]
        assert got["ResultsTestable"] == "0"

    def test_large_enough(self) -> None:
        """Enough questions and configurations: no sentence."""
        got = words(macro_frame(NAnswerable=(700, "int"), NUnanswerable=(300, "int"), NConfigs=(30, "int")))
        assert got["ResultsScope"] == ""
        assert got["ResultsTestable"] == "1"
