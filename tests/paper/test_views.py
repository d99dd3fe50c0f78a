"""Tests for declinecraft.paper.views: every macro the sections use is defined, missing views are skipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.paper import views
from tests.support import projects


@pytest.fixture()
def cfg(tmp_path: Path):  # noqa: ANN201
    """A run whose views have not run yet (their stage folders are empty)."""
    (tmp_path / "params").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "params" / "default.yaml").write_text((projects.REPO / "params" / "default.yaml").read_text())
    (tmp_path / "params" / "models.yaml").write_text((projects.REPO / "params" / "models.yaml").read_text())
    return config.load(tmp_path / "params" / "default.yaml")


class TestViewMacros:
    def test_sections_use_defined_macros(self, cfg) -> None:  # noqa: ANN001
        """Every \\Kg*/\\Esb* macro in paper/main.tex is one the views define (n/a without output)."""
        used = set(re.findall(r"\\((?:Kg|Esb)[A-Za-z]+)", (projects.REPO / "paper" / "main.tex").read_text()))
        defined = {name for name, _, _ in views.view_macros(cfg)}
        assert used and used <= defined, sorted(used - defined)

    @pytest.mark.parametrize(
        ("block", "prefix", "heading"),
        [("know2guess", "Kg", "Know2Guess's protocol"), ("evidence", "Esb", "Evidence sufficiency")],
    )
    def test_switched_off_view_leaves_its_section_out(self, cfg, block: str, prefix: str, heading: str) -> None:  # noqa: ANN001
        """A view switched off in the params sets its switch macro to 0, and every line of the paper
        that uses the view's macros sits inside the section that switch guards."""
        import dataclasses

        off = cfg.with_blocks(**{block: dataclasses.replace(cfg.block(block), enabled=False)})
        assert dict((n, v) for n, v, _ in views.view_macros(off))[f"{prefix}Enabled"] == "0"
        assert dict((n, v) for n, v, _ in views.view_macros(cfg))[f"{prefix}Enabled"] == "1"
        tex = (projects.REPO / "paper" / "main.tex").read_text()
        # The section and its item in the reproduction notes: each guarded by the switch.
        blocks, outside, at = [], "", 0
        while (start := tex.find(f"\\ifnum\\{prefix}Enabled=1", at)) >= 0:
            depth, end = 0, start
            for hit in re.finditer(r"\\ifnum|\\fi(?![A-Za-z])", tex[start:]):  # the matching \fi
                depth += 1 if hit.group() == "\\ifnum" else -1
                if depth == 0:
                    end = start + hit.start()
                    break
            blocks.append(tex[start:end])
            outside += tex[at:start]
            at = end
        outside += tex[at:]
        assert re.search(rf"\\(?:section|dcoursection\{{[A-Z0-9]+\}})\{{{re.escape(heading)}", blocks[0])
        assert not re.findall(rf"\\{prefix}(?!Enabled)[A-Za-z]+", outside)

    def test_counts_keep_their_separator(self, cfg) -> None:  # noqa: ANN001
        """A count of thousands prints its separator, not a literal "10{,}000"."""
        got = dict((n, v) for n, v, _ in views.view_macros(cfg))
        assert got["KgPaperResamples"] == "10{,}000"

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


def k2g_folder(folder: Path, *, answerable: int, unanswerable: int) -> Path:
    """A Know2Guess stage folder with one configuration under both conditions (standard prompt)."""
    import polars as pl

    summary = {
        "model": ["m", "m"],
        "thinking": ["off", "off"],
        "condition": ["no_rag", "single"],
        "prompt": ["standard"] * 2,
        "parser": ["strict"] * 2,
        "reliability": [2 / 3, 0.5],
        "reliability_low": [0.4, 0.2],
        "reliability_high": [0.9, 0.8],
        "ece": [0.3, 0.2],
        "n_answerable": [answerable] * 2,
        "n_unanswerable": [unanswerable] * 2,
        "n_answer": [2, 2],
    }
    pl.DataFrame(summary).write_csv(folder / "know2guess_summary.csv")
    return folder


def esb_folder(folder: Path, *, questions: int) -> Path:
    """An evidence stage folder with one model under P1: its summary and sufficiency curve (response
    counts as the stage writes them: L1-L2 two a question, L3-L5 four, L5 two)."""
    import polars as pl

    summary = {
        "model": ["m"],
        "thinking": ["off"],
        "prompt": ["P1"],
        "n_questions": [questions],
        "n_accuracy": [2 * questions],
        "accuracy": [0.75],
        "n_over_answer": [4 * questions],
        "over_answer": [0.5],
        "n_wrong_answer": [questions],
        "wrong_answer": [0.0],
        "b_ece": [2 / 3],
        "b_ece_t": [0.5],
    }
    pl.DataFrame(summary).write_csv(folder / "summary.csv")
    levels = ["L1", "L2", "L3", "L4", "L5", "T"]
    # L5 is asked in both orders: two responses a question.
    curve = {
        "model": "m",
        "thinking": "off",
        "prompt": "P1",
        "level": levels,
        "n": [questions] * 4 + [2 * questions, questions],
    }
    pl.DataFrame({**curve, "abstention": [0.0, 0.0, 0.5, 1.0, 0.25, 0.5]}).write_csv(folder / "curve.csv")
    return folder


class TestSmallN:
    def test_know2guess_below(self, tmp_path: Path) -> None:
        """Reliability and ECE of a configuration scored on five questions carry their n and the
        caveat; the direction word from them says it is not comparable at this n."""
        from declinecraft.views.know2guess import macros

        got = {n: v for n, v, _ in macros.macros(k2g_folder(tmp_path, answerable=2, unanswerable=3), min_n=6)}
        assert got["KgBestNoRagReliability"] == "\\dcsmall{66.7}{5 questions}"
        assert got["KgBestNoRagECE"] == "\\dcsmall{0.30}{2 questions answered}"
        assert got["KgBestNoRagReliabilityLow"] == "40.0"
        assert got["KgRagReliabilityDirection"] == "not comparable at this n"

    def test_know2guess_above(self, tmp_path: Path) -> None:
        """From enough questions the same numbers are findings, printed plainly; the mean shift with
        retrieval, which no test checks, still gets no comparative word."""
        from declinecraft.views.know2guess import collector, macros

        got = {n: v for n, v, _ in macros.macros(k2g_folder(tmp_path, answerable=40, unanswerable=60), min_n=6)}
        assert got["KgBestNoRagReliability"] == "66.7" and got["KgRagReliabilityDirection"] == collector.NOT_TESTED

    def test_evidence_below(self, tmp_path: Path) -> None:
        """Accuracy on L1-L2 and B-ECE from one question: printed with "1 question", no direction words."""
        from declinecraft.views.evidence import report

        got = {n: v for n, v, _ in report.macros(esb_folder(tmp_path, questions=1), min_n=6)}
        assert got["EsbAccuracy"] == "\\dcsmall{75.0\\%}{1 question}"
        assert got["EsbBECE"] == "\\dcsmall{66.7\\%}{1 question}"
        assert got["EsbOverAnswer"] == "\\dcsmall{50.0\\%}{1 question}"
        assert (got["EsbBoundaryWord"], got["EsbLFiveVsLFour"]) == ("goes", "beside its rate")

    def test_evidence_above(self, tmp_path: Path) -> None:
        """From fifty questions the numbers and words are findings."""
        from declinecraft.views.evidence import report

        got = {n: v for n, v, _ in report.macros(esb_folder(tmp_path, questions=50), min_n=6)}
        assert got["EsbAccuracy"] == "75.0\\%" and got["EsbBoundaryWord"] == "rises"
        assert got["EsbLFiveVsLFour"] == "lower than"

    def test_threshold_from_params(self, cfg, tmp_path: Path) -> None:  # noqa: ANN001
        """view_macros applies the run's analysis.min_n (0 = the claims check's minimum, 6)."""
        cfg.stage_dir("know2guess").mkdir(parents=True, exist_ok=True)
        k2g_folder(cfg.stage_dir("know2guess"), answerable=2, unanswerable=3)
        got = {n: v for n, v, _ in views.view_macros(cfg)}
        assert got["KgBestNoRagReliability"].startswith("\\dcsmall{")

    def test_probe_auroc(self, tmp_path: Path) -> None:
        """Know2Guess's probe scored on six test questions (two answerable) is no finding: the AUROC's n is the
        smaller test half, the recall's the unanswerable test questions; the accuracy on 30 is a finding."""
        import polars as pl

        from declinecraft.views.know2guess import macros

        probe = {
            "text": ["question", "asked_question"],
            "auroc": [0.0, 0.5],
            "auprc": [0.5, 0.6],
            "auprc_chance": [2 / 3, 2 / 3],
            "accuracy": [0.8, 0.8],
            "macro_f1": [0.7, 0.7],
            "recall_unanswerable": [0.25, 0.25],
            "false_positive_rate": [0.0, 0.0],
            "n_dev": [3, 3],
            "n_test": [30, 30],
            "n_test_answerable": [2, 2],
            "n_test_unanswerable": [4, 4],
        }
        pl.DataFrame(probe).write_csv(tmp_path / "know2guess_separability.csv")
        got = {n: v for n, v, _ in macros.macros(tmp_path, min_n=6)}
        assert got["KgProbeAUROC"] == "\\dcsmall{0.00}{2 test questions in the smaller half}"
        assert got["KgProbeRecall"] == "\\dcsmall{0.25}{4 unanswerable test questions}"
        assert (got["KgProbeAccuracy"], got["KgProbeChance"], got["KgProbeDev"]) == ("0.80", "0.67", "3")
