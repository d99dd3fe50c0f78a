"""Tests for declinecraft.planning.views: the calls of the Know2Guess and evidence views, on the
default run before any stage has run (14 questions: the verify targets)."""

from __future__ import annotations

from pathlib import Path

from declinecraft.core import config
from declinecraft.planning import counts


def counter(project: Path) -> counts.Counter:
    return counts.Counter(config.load(project / "params" / "default.yaml"), lambda name: 100, lambda model: "none")


class TestKnow2guess:
    def test_decision_calls(self, project: Path) -> None:
        """Two conditions x (the standard prompt for both models + the 0.5B's answer-only control):
        six decision calls per question, each part exact."""
        found = counter(project).know2guess()
        decisions = [p for p in found if p.what.startswith("k2g_")]
        assert all(p.exact and p.calls_max == 14 for p in decisions)
        assert sorted((p.model, p.what) for p in decisions) == [
            ("qwen2.5-coder-0.5b", "k2g_answer_only (off)"),
            ("qwen2.5-coder-0.5b", "k2g_answer_only_rag (off)"),
            ("qwen2.5-coder-0.5b", "k2g_standard (off)"),
            ("qwen2.5-coder-0.5b", "k2g_standard_rag (off)"),
            ("qwen2.5-coder-1.5b", "k2g_standard (off)"),
            ("qwen2.5-coder-1.5b", "k2g_standard_rag (off)"),
        ]
        assert {p.model for p in found if p.what == "judge_accuracy"} == {"qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"}


class TestEvidence:
    def test_prompts_and_judge(self, project: Path) -> None:
        """P1 and P2 on the 0.5B answer the same contexts; the response judge labels each answer at most twice."""
        found = counter(project).evidence()
        prompts = {p.what: p for p in found if p.what.startswith("esb ")}
        assert set(prompts) == {"esb P1 (off)", "esb P2 (off)"}
        assert {p.model for p in prompts.values()} == {"qwen2.5-coder-0.5b"}
        assert prompts["esb P1 (off)"].calls_max == prompts["esb P2 (off)"].calls_max > 0
        judge = next(p for p in found if p.what == "judge_response")
        assert judge.calls_max == 2 * sum(p.calls_max for p in prompts.values())

    def test_disabled(self, project: Path) -> None:
        """A view switched off plans no call."""
        path = project / "params" / "off.yaml"
        path.write_text("base: default\nevidence: {enabled: false}\nknow2guess: {enabled: false}\n", encoding="utf-8")
        off = counts.Counter(config.load(path), lambda name: 100, lambda model: "none")
        assert off.evidence() == [] and off.know2guess() == []
