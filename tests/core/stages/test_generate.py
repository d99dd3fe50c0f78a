"""Tests for declinecraft.core.stages.generate: stage 03's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.params import GenerateParams
from declinecraft.core.stages import generate, index


class TestStage:
    def test_reads_and_prompts(self) -> None:
        """Generation reads the index and renders the three drafting prompts of Appendix J.1."""
        assert (generate.STAGE.notebook, generate.STAGE.params) == ("03_generate", GenerateParams)
        assert {index.INDEX_MANIFEST, index.INDEX_VERSION} <= set(generate.STAGE.reads)
        assert generate.STAGE.prompts == ("generate_scenario", "generate_facts", "generate_question")
        assert [a.name for a in catalogue.STAGES["generate"].writes] == ["drafts.parquet", "stage.json"]

    def test_models(self, cfg: config.RunConfig) -> None:
        """Its models are the generator and any compared generators (none in the default run)."""
        assert generate.STAGE.role_models(cfg, "generate.generator") == ("qwen2.5-coder-1.5b",)
        assert generate.STAGE.role_models(cfg, "generate.generators") == ()
        compared = cfg.with_blocks(generate=dataclasses.replace(cfg.generate, generators=("qwen2.5-coder-0.5b",)))
        assert generate.STAGE.role_models(compared, "generate.generators") == ("qwen2.5-coder-0.5b",)

    def test_draw_within_pool(self) -> None:
        """A target drawn from a pool cannot be larger than the pool."""
        bad = dataclasses.replace(GenerateParams(), target_draw=9, target_pool=3)
        assert bounds.check("generate", bad, "generate") == ["generate.target_draw: 9 must be at most target_pool (3)"]
