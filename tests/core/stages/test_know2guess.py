"""Tests for declinecraft.core.stages.know2guess: stage 08's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.declaration import K2G_OFF, K2G_ON
from declinecraft.core.params import Know2GuessParams
from declinecraft.core.stages import know2guess


class TestStage:
    def test_models_default_to_the_answer_stage(self, cfg: config.RunConfig) -> None:
        """An empty model list stands for the answer stage's models; the 0.5B gets the controls."""
        assert (know2guess.STAGE.notebook, know2guess.STAGE.params) == ("08_know2guess", Know2GuessParams)
        assert know2guess.STAGE.role_models(cfg, "know2guess.models|answer.models") == cfg.answer.models
        assert know2guess.STAGE.role_models(cfg, "know2guess.control_models") == ("qwen2.5-coder-0.5b",)

    def test_writes_follow_enabled(self, cfg: config.RunConfig) -> None:
        """An enabled view writes its tables; a disabled one writes only DISABLED.md."""
        written = {a.name: a for a in catalogue.STAGES["know2guess"].writes}
        assert written["know2guess_summary.csv"].when == K2G_ON and written["DISABLED.md"].when == K2G_OFF
        off = cfg.with_blocks(know2guess=dataclasses.replace(cfg.know2guess, enabled=False))
        assert written["know2guess_summary.csv"].decided(cfg) and not written["know2guess_summary.csv"].decided(off)
        assert written["DISABLED.md"].decided(off)

    def test_lambdas_not_negative(self) -> None:
        """Each cost-sensitive lambda is checked, named by its index."""
        bad = dataclasses.replace(Know2GuessParams(), lambdas=(0.5, -1.0))
        assert bounds.check("know2guess", bad, "know2guess") == [
            "know2guess.lambdas[1]: -1.0 is out of range (needs >= 0)"
        ]
