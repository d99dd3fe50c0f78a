"""Tests for declinecraft.core.stages.judge: stage 06's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.params import JudgeParams
from declinecraft.core.stages import answer, corpus, judge


class TestStage:
    def test_reads(self, cfg: config.RunConfig) -> None:
        """The judges read the responses and both corpora's pages (the oracle's source page), and the check set."""
        assert (judge.STAGE.notebook, judge.STAGE.params) == ("06_judge", JudgeParams)
        assert {answer.ANSWER_RESPONSES, corpus.CORPUS_PAGES_PRE, corpus.CORPUS_PAGES_POST} <= set(judge.STAGE.reads)
        assert judge.STAGE.data(cfg) == ["data/judge_check/accuracy.csv"]

    def test_models(self, cfg: config.RunConfig) -> None:
        """Its models: the response judge, the oracle, the accuracy judges (two in the default run)."""
        assert judge.STAGE.role_models(cfg, "judge.response_judge") == ("qwen2.5-coder-1.5b",)
        assert judge.STAGE.role_models(cfg, "judge.accuracy_judges") == ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")
        assert judge.STAGE.role_models(cfg, "judge.second_judges") == ()

    def test_writes(self) -> None:
        """Labels, scores and the judges' check results are written by every run."""
        written = {a.name: a.when for a in catalogue.STAGES["judge"].writes}
        assert {written[n] for n in ("labels.parquet", "scores.parquet", "judge_check.parquet")} == {""}

    def test_agreement_a_proportion(self) -> None:
        """The judges' check's minimum agreement lies in [0, 1]."""
        bad = dataclasses.replace(JudgeParams(), check_min_agreement=1.5)
        assert bounds.check("judge", bad, "judge") == [
            "judge.check_min_agreement: 1.5 is out of range (needs >= 0 and <= 1)"
        ]
