"""Tests for declinecraft.core.stages.verify: stage 04's declaration, its models among them."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config, pipeline
from declinecraft.core.declaration import IMPORTED, SEVERAL_GENERATORS
from declinecraft.core.params import VerifyParams
from declinecraft.core.registry import load_models
from declinecraft.core.stages import generate, verify

#: A model of params/models.yaml that the default run names in no role.
SPARE = "qwen3-4b"


class TestStage:
    def test_reads(self, cfg: config.RunConfig) -> None:
        """Verification reads the drafts and the manual review file, and renders the two checks' prompts."""
        assert (verify.STAGE.notebook, verify.STAGE.params) == ("04_verify", VerifyParams)
        assert generate.GENERATE_DRAFTS in verify.STAGE.reads
        assert verify.STAGE.data(cfg) == ["data/manual_review.yaml"]
        assert set(verify.STAGE.prompts) == {"verify_stated", "verify_answers"}

    def test_conditional_writes(self, cfg: config.RunConfig) -> None:
        """The generator comparison is written only by runs that compare generators, the import
        record only by imported benchmarks; the benchmark by every run."""
        written = {a.name: a for a in catalogue.STAGES["verify"].writes}
        assert written["audit_generators.csv"].when == SEVERAL_GENERATORS
        assert written["import.json"].when == IMPORTED
        assert written["benchmark.parquet"].required(cfg) and not written["import.json"].required(cfg)

    def test_retrieve_k_positive(self) -> None:
        """The verifier reads at least one chunk."""
        bad = dataclasses.replace(VerifyParams(), retrieve_k=0)
        assert bounds.check("verify", bad, "verify") == ["verify.retrieve_k: 0 is out of range (needs >= 1)"]


class TestModels:
    def test_comparison_verifier_and_generators(self, cfg: config.RunConfig) -> None:
        """A model named only as the comparison verifier or as an extra generator is referenced, and
        the stage that uses it has its models.yaml entry as an input."""
        for block, field, value in (("verify", "comparison_verifier", SPARE), ("generate", "generators", (SPARE,))):
            changed = cfg.with_blocks(**{block: dataclasses.replace(cfg.block(block), **{field: value})})
            assert SPARE not in config.referenced_models(cfg)
            assert SPARE in config.referenced_models(changed)
            assert SPARE in pipeline.inputs(changed, block)["models"]

    def test_model_entry_edit_changes_verify_inputs(self, cfg: config.RunConfig) -> None:
        """Editing the comparison verifier's entry changes stage 04's inputs (so Make reruns it)."""
        changed = cfg.with_blocks(verify=dataclasses.replace(cfg.verify, comparison_verifier=SPARE))
        registry = load_models(cfg.resolve(cfg.models_file))
        before = pipeline.inputs(changed, "verify", registry)
        edited = {**registry, SPARE: dataclasses.replace(registry[SPARE], served_name="another-name")}
        assert pipeline.inputs(changed, "verify", edited)["models"][SPARE] != before["models"][SPARE]

    def test_empty_comparison_verifier_is_the_verifier(self, cfg: config.RunConfig) -> None:
        """An empty comparison verifier stands for the main verifier."""
        assert config.stage_models(cfg, "verify") == {cfg.verify.verifier}
        assert verify.STAGE.role_models(cfg, "verify.comparison_verifier|verify.verifier") == (cfg.verify.verifier,)
