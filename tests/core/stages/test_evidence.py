"""Tests for declinecraft.core.stages.evidence: stage 09's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.declaration import EVIDENCE_OFF, EVIDENCE_ON
from declinecraft.core.params import EvidenceParams
from declinecraft.core.stages import evidence


class TestStage:
    def test_models_fall_back(self, cfg: config.RunConfig) -> None:
        """Its own model lists where set (the 0.5B, one accuracy judge), else the other stages'
        (the conflict model: the generator)."""
        assert (evidence.STAGE.notebook, evidence.STAGE.params) == ("09_evidence", EvidenceParams)
        assert evidence.STAGE.role_models(cfg, "evidence.models|answer.models") == ("qwen2.5-coder-0.5b",)
        assert evidence.STAGE.role_models(cfg, "evidence.conflict_model|generate.generator") == ("qwen2.5-coder-1.5b",)

    def test_writes_follow_enabled(self) -> None:
        """An enabled view writes its levels and curve; a disabled one only STATUS.md."""
        written = {a.name: a.when for a in catalogue.STAGES["evidence"].writes}
        assert written["curve.csv"] == EVIDENCE_ON and written["STATUS.md"] == EVIDENCE_OFF

    def test_prompts(self) -> None:
        """ESB's prompts, the conflict generator's, and the judges' templates."""
        assert {"esb_baseline", "esb_sufficiency", "esb_conflict", "judge_response"} <= set(evidence.STAGE.prompts)

    def test_alpha_a_level(self) -> None:
        """Its significance level lies strictly between 0 and 1."""
        bad = dataclasses.replace(EvidenceParams(), alpha=1.5)
        assert bounds.check("evidence", bad, "evidence") == ["evidence.alpha: 1.5 is out of range (needs > 0 and < 1)"]
