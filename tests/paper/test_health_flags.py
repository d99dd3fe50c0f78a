"""Tests for declinecraft.paper.health_flags: the judges' agreement, the above-chance flag and the
views' scope, as run health prints them."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import config
from declinecraft.paper import health_flags
from tests.support import health


@pytest.fixture()
def cfg(tmp_path: Path) -> config.RunConfig:
    """A run with hand-built answer and judge outputs and no views run."""
    return health.write_run(tmp_path)


class TestJudgesAndNeighbours:
    def test_judge_agreement_warning(self) -> None:
        """Each pair's exact agreement and kappa; a pair below the declared level gets the warning."""
        agreement = pl.DataFrame(
            {
                "judge_a": ["score_a", "all"],
                "judge_b": ["score_b", "all"],
                "rows": [15, 15],
                "exact": [0.47, None],
                "kappa": [0.013, 0.1],
            }
        )
        said = health_flags.judge_agreement_sentence(agreement, 0.4)
        assert "a and b agree exactly on 47% of 15 answers (weighted kappa 0.013)" in said
        assert "Warning: a and b fall below the run's level of kappa 0.4" in said
        assert "Warning" not in health_flags.judge_agreement_sentence(agreement, 0.01)
        assert health_flags.judge_agreement_sentence(None, 0.4) == ""

    def test_leakage_flag(self) -> None:
        """A model more accurate on unanswerable than on answerable questions (no retrieval) is
        flagged as a judge, oracle or question problem; one below its answerable accuracy is not."""
        leakage = pl.DataFrame(
            {"model": ["small", "big"], "thinking": ["off", "off"], "n": [8, 8], "accuracy": [0.625, 0.1]}
        )
        grid = pl.DataFrame(
            {
                "model": ["small", "big"],
                "thinking": ["off", "off"],
                "condition": ["no_rag"] * 2,
                "accuracy": [0.25, 0.5],
            }
        )
        said = health_flags.leakage_sentence(leakage, grid)
        assert "small scores 62.5% on unanswerable questions (8 answers) against 25.0% on answerable ones" in said
        assert "big" not in said and "a judge, an oracle or questions that are not unanswerable" in said
        assert health_flags.leakage_sentence(leakage.filter(pl.col("model") == "big"), grid) == ""

    def test_leakage_before_the_cutoff(self) -> None:
        """A model released before the corpus cut-off is flagged above analysis.max_leakage, even
        below its answerable accuracy; one released after it is not."""
        leakage = pl.DataFrame({"model": ["old", "new"], "thinking": ["off"] * 2, "n": [4, 4], "accuracy": [0.625] * 2})
        grid = pl.DataFrame(
            {"model": ["old", "new"], "thinking": ["off"] * 2, "condition": ["no_rag"] * 2, "accuracy": [0.75] * 2}
        )
        facts = pl.DataFrame({"model": ["old", "new"], "release": ["2024-11", "2025-06"]})
        said = health_flags.leakage_sentence(leakage, grid, facts, cutoff="2025-03-31", max_leakage=0.2)
        assert "old scores 62.5% on unanswerable questions (4 answers) against 75.0% on answerable ones" in said
        assert "released 2024-11, before the corpus cut-off" in said and "new" not in said

    def test_scope(self, cfg) -> None:  # noqa: ANN001
        """A view on fewer models or questions than the answer stage says which params set that."""
        import dataclasses

        models = tuple(cfg.answer.models)
        ev = dataclasses.replace(cfg.evidence, enabled=True, models=models[:1], limit_questions=4)
        k2g = dataclasses.replace(cfg.know2guess, enabled=False)
        said = health_flags.scope_sentence(cfg.with_blocks(evidence=ev, know2guess=k2g))
        assert said.startswith(f"The evidence view ran on 1 of the {len(models)} models under test")
        assert "at most 4 of the benchmark's questions" in said and "evidence.limit_questions" in said

    def test_self_judging(self, cfg) -> None:  # noqa: ANN001
        """A model under test that also judges is named with its roles; a run whose judges are apart says nothing."""
        import dataclasses

        model = cfg.answer.models[0]
        apart = dataclasses.replace(cfg.judge, response_judge="j-other", oracle="j-other", accuracy_judges=("j-other",))
        assert health_flags.self_judge_sentence(cfg.with_blocks(judge=apart)) == ""
        shared = dataclasses.replace(apart, response_judge=model, accuracy_judges=("j-other", model))
        said = health_flags.self_judge_sentence(cfg.with_blocks(judge=shared))
        assert said.startswith(f"A model under test that also judges: {model} (response judge and accuracy judge).")
        assert "It judges its own responses" in said
