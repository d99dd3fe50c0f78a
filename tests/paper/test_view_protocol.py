"""Tests for declinecraft.paper.view_protocol: a view whose models did not follow its protocol
prints no behavioural number, and its section says so first."""

from __future__ import annotations

import polars as pl

from declinecraft.analysis import run_health, view_health
from declinecraft.paper import view_protocol


def _decisions(followed: int, n: int) -> pl.DataFrame:
    """Know2Guess replies of one model, ``followed`` of ``n`` with a decision and a confidence."""
    return pl.DataFrame(
        {
            "model": ["m"] * n,
            "thinking": ["off"] * n,
            "parser": ["strict"] * n,
            "issues": [""] * followed + ["no_decision;missing_confidence"] * (n - followed),
            "finish_reason": ["stop"] * n,
            "error": [None] * n,
        }
    )


MACROS = [
    ("KgBestNoRagReliability", "66.7", "reliability"),
    ("KgRagReliabilityDirection", "lower", "direction"),
    ("KgQuestions", "6", "questions asked"),
    ("KgProbeAUROC", "0.50", "probe"),
]


class TestGate:
    def test_below_threshold(self) -> None:
        """6 of 36 replies follow: behaviour prints "not interpretable ... (6 of 36)"; the questions
        and the probe (the text, not the models' behaviour) print as they are."""
        health = view_health.know2guess_protocol(_decisions(6, 36))
        out = {n: v for n, v, _ in view_protocol.gate(MACROS, health, 0.8)}
        said = "not interpretable: the models did not follow the protocol (6 of 36)"
        assert out["KgBestNoRagReliability"] == said and out["KgRagReliabilityDirection"] == said
        assert out["KgQuestions"] == "6" and out["KgProbeAUROC"] == "0.50" and out["KgFollowed"] == "0"
        assert "6 of 36 follow the protocol in full (m: 6 of 36)" in out["KgProtocolSentence"]
        assert "below the run's threshold of 80%" in out["KgProtocolSentence"]
        assert out["KgProtocolSentence"].endswith(said + ".")

    def test_at_threshold(self) -> None:
        """8 of 10 replies follow at a threshold of 0.8: every number prints, and the sentence says so."""
        health = view_health.know2guess_protocol(_decisions(8, 10))
        out = {n: v for n, v, _ in view_protocol.gate(MACROS, health, 0.8)}
        assert out["KgBestNoRagReliability"] == "66.7" and out["KgFollowed"] == "1"
        assert out["KgProtocolSentence"].endswith("at least the run's threshold of 80%.")

    def test_view_without_replies(self) -> None:
        """A view that returned no replies keeps its macros and says nothing."""
        out = {n: v for n, v, _ in view_protocol.gate(MACROS, run_health.empty(), 0.8)}
        assert out["EsbFollowed"] == "1" and out["EsbProtocolSentence"] == ""
