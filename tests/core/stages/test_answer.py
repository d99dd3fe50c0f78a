"""Tests for declinecraft.core.stages.answer: stage 05's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.declaration import SEVERAL_GENERATORS
from declinecraft.core.params import AnswerParams
from declinecraft.core.stages import answer, verify


class TestStage:
    def test_reads_the_benchmark(self) -> None:
        """The answer stage reads the benchmark and the compared generators' questions, not the drafts."""
        assert (answer.STAGE.notebook, answer.STAGE.params) == ("05_answer", AnswerParams)
        assert {verify.VERIFY_BENCHMARK, verify.VERIFY_COMPARISON_CANDIDATES} <= set(answer.STAGE.reads)
        assert not any(a.stage == "generate" for a in answer.STAGE.reads)

    def test_models(self, cfg: config.RunConfig) -> None:
        """Its models are the models under test and the query rewriter."""
        assert answer.STAGE.role_models(cfg, "answer.models") == ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
        assert answer.STAGE.role_models(cfg, "answer.rewriter") == ("qwen2.5-coder-1.5b",)

    def test_writes(self) -> None:
        """Responses and retrievals always; the comparison responses only when generators are compared."""
        written = {a.name: a.when for a in catalogue.STAGES["answer"].writes}
        assert written["responses.parquet"] == "" and written["comparison_responses.parquet"] == SEVERAL_GENERATORS

    def test_k_positive(self) -> None:
        """Retrieval depth k is at least 1."""
        bad = dataclasses.replace(AnswerParams(), k=0)
        assert bounds.check("answer", bad, "answer") == ["answer.k: 0 is out of range (needs >= 1)"]
