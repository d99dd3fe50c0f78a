"""Tests for declinecraft.views.evidence.report: the evidence section's macros from a hand-made
``09_evidence/`` folder (the stage's own run: tests/views/evidence/test_stage.py, TestReaders)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from declinecraft.core import catalogue
from declinecraft.views.evidence import report

#: P1's abstention per level, as hand-set: L2 and L3 alike, L5 below L4, T above L3.
RATES = {"L1": 0.0, "L2": 0.2, "L3": 0.2, "L4": 0.5, "L5": 0.25, "T": 0.9}


def folder(tmp_path: Path, questions: int) -> Path:
    """A view folder with its manifest and a curve from ``questions`` questions per level (L5 asked twice)."""
    manifest = {
        "answerable_built": 3,
        "unanswerable_built": 2,
        "settings": {"k": 3, "models": ["m"], "prompts": ["P1"]},
    }
    (tmp_path / catalogue.EVIDENCE_MANIFEST.name).write_text(json.dumps(manifest))
    pl.DataFrame(
        {
            "model": ["m"] * len(RATES),
            "prompt": ["P1"] * len(RATES),
            "level": list(RATES),
            "abstention": list(RATES.values()),
            "n": [questions * (2 if level == "L5" else 1) for level in RATES],
        }
    ).write_csv(tmp_path / catalogue.EVIDENCE_CURVE.name)
    return tmp_path


def macros(path: Path, **kw: int) -> dict[str, str]:
    return {name: value for name, value, _ in report.macros(path, **kw)}


class TestMacros:
    def test_counts_rates_and_words(self, tmp_path: Path) -> None:
        """Names are letters only; counts come from the manifest, rates print as percent, and the
        direction words follow the rates."""
        got = macros(folder(tmp_path, 10))
        assert all(re.fullmatch(r"[A-Za-z]+", name) for name in got)
        assert (got["EsbAnswerable"], got["EsbUnanswerable"], got["EsbK"], got["EsbDistractors"]) == (
            "3",
            "2",
            "3",
            "2",
        )
        assert got["EsbAbstainLFour"] == "50.0\\%" and got["EsbAbstainLFive"] == "25.0\\%"
        assert got["EsbLFiveVsLFour"] == "lower than" and got["EsbTVsLThree"] == "higher than"
        assert got["EsbBoundaryWord"] == "stays level"

    def test_small_n(self, tmp_path: Path) -> None:
        """From fewer questions than the rule's minimum a rate prints with its n (L5's n counts each
        question once, not once per order) and the words state no direction."""
        got = macros(folder(tmp_path, 4))
        assert got["EsbAbstainLFive"] == "\\dcsmall{25.0\\%}{4 questions}"
        assert got["EsbLFiveVsLFour"] == "beside its rate" and got["EsbBoundaryWord"] == "goes"
        assert macros(tmp_path, min_n=4)["EsbLFiveVsLFour"] == "lower than"

    def test_empty_folder(self, tmp_path: Path) -> None:
        """A view that wrote nothing gives zero counts and n/a rates, no error."""
        got = macros(tmp_path)
        assert (got["EsbAnswerable"], got["EsbK"], got["EsbAbstainLOne"], got["EsbLFiveVsLFour"]) == (
            "0",
            "n/a",
            "n/a",
            "n/a",
        )
