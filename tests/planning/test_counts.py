"""Tests for declinecraft.planning.counts: the calls each stage of a run will make, on the default
run before any stage has run (the question sizes are then the verify targets: 10 + 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.core import config
from declinecraft.planning import counts
from declinecraft.planning.part import Part


def plan_parts(project: Path, text: str = "") -> tuple[list[Part], list[str]]:
    """The parts of ``params/default.yaml``, or of a run ``text`` (a params file) based on it."""
    path = project / "params" / "default.yaml"
    if text:
        path = project / "params" / "other.yaml"
        path.write_text(text, encoding="utf-8")
    found, _, skipped = counts.parts(config.load(path), lambda name: 100, lambda model: "none")
    return found, skipped


@pytest.fixture()
def default(project: Path) -> list[Part]:
    return plan_parts(project)[0]


def by_what(found: list[Part], stage: str) -> dict[tuple[str, str], Part]:
    return {(p.model, p.what): p for p in found if p.stage == stage}


class TestParts:
    def test_generate_and_verify(self, default: list[Part]) -> None:
        """One scenario call at most per candidate (10 + 4), two verifier checks at most per candidate."""
        generate = by_what(default, "03_generate")
        assert generate[("qwen2.5-coder-1.5b", "generate_scenario")].calls_max == 14
        assert generate[("qwen2.5-coder-1.5b", "generate_scenario")].budget == 64  # scenario_max_tokens
        assert by_what(default, "04_verify")[("qwen2.5-coder-1.5b", "verify")].calls_max == 28

    def test_answer_exact_where_fixed(self, default: list[Part], project: Path) -> None:
        """No-RAG and single-shot calls are one per question and model, exact; the reflections of the
        iterative rounds are bounded by one and answer.max_rounds per question."""
        answer = by_what(default, "05_answer")
        rounds = config.load(project / "params" / "default.yaml").answer.max_rounds
        for model in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
            no_rag = answer[(model, "answer_no_context (off)")]
            assert (no_rag.calls_min, no_rag.calls_max, no_rag.responses, no_rag.setting) == (14, 14, 14, "main")
            reflect = answer[(model, "reflect (off)")]
            assert (reflect.calls_min, reflect.calls_max) == (14, 14 * rounds)

    def test_judge_bounds(self, default: list[Part]) -> None:
        """The response judge labels every response at most twice (a re-ask); the oracle is one call per question."""
        responses = sum(p.responses for p in default if p.stage == "05_answer")
        judge = by_what(default, "06_judge")
        assert responses == 2 * 3 * 14
        assert judge[("qwen2.5-coder-1.5b", "judge_response")].calls_max == 2 * responses
        assert judge[("qwen2.5-coder-1.5b", "oracle")].exact and judge[("qwen2.5-coder-1.5b", "oracle")].calls_max == 14

    def test_stages_of_the_base_left_out(self, project: Path) -> None:
        """A run that changes only answer.k sends no generation or verification call: the base owns them."""
        found, skipped = plan_parts(project, "base: default\nanswer: {k: 3}\n")
        stages = {p.stage for p in found}
        assert "03_generate" not in stages and "04_verify" not in stages and "05_answer" in stages
        assert skipped[:2] == [
            "03_generate: read from outputs/default/ (sends nothing)",
            "04_verify: read from outputs/default/ (sends nothing)",
        ]
