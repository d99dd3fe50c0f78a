"""Tests for declinecraft.evaluation.comparison: Table 9's CAR column, one model on each generator's
accepted unanswerable questions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl

from declinecraft.core import catalogue, config
from declinecraft.evaluation import comparison


def compared(project: Path) -> config.RunConfig:
    """The default run with a second generator."""
    cfg = config.load(project / "params" / "default.yaml")
    return cfg.with_blocks(generate=dataclasses.replace(cfg.generate, generators=("qwen2.5-coder-0.5b",)))


class TestQuestions:
    def test_kept_unanswerable_only(self, project: Path) -> None:
        """Every generator's kept unanswerable questions, ids prefixed with their generator, sorted."""
        cfg = compared(project)
        assert comparison.questions(cfg).is_empty()  # stage 04 wrote no comparison yet
        candidates = pl.DataFrame(
            {
                "generator": ["g2", "g1", "g1", "g1"],
                "id": ["u0", "u0", "u1", "a0"],
                "index": [0, 1, 0, 2],
                "fate": ["kept", "kept", "rejected_stated", "kept"],
                "answerable": [False, False, False, True],
            }
        )
        path = catalogue.VERIFY_COMPARISON_CANDIDATES.path(cfg)
        path.parent.mkdir(parents=True)
        candidates.write_parquet(path)
        assert comparison.questions(cfg)["id"].to_list() == ["g1/u0", "g2/u0"]
        plain = cfg.with_blocks(generate=dataclasses.replace(cfg.generate, generators=()))
        assert comparison.questions(plain).is_empty()  # a run that compares no generators

    def test_model_and_setting(self, project: Path) -> None:
        """The run's first model under test, single-shot at the run's main pipeline and k."""
        cfg = compared(project)
        assert comparison.model(cfg) == "qwen2.5-coder-0.5b"
        setting = comparison.setting(cfg)
        assert (setting.condition, setting.pipeline, setting.k) == ("single", "hybrid", 5)


class TestCarByGenerator:
    def test_strict_car_per_generator(self) -> None:
        """Only ABSTAIN counts; a cut-off response and an unlabelled one are left out, the second counted."""
        responses = pl.DataFrame(
            {
                "response_id": ["r1", "r2", "r3", "r4", "r5"],
                "question_id": ["g1/u0", "g1/u1", "g2/u0", "g2/u1", "g2/u2"],
                "model": ["m"] * 5,
                "budget_exhausted": [False, False, False, True, False],
                "answerable": [False] * 5,
            }
        )
        labels = pl.DataFrame(
            {
                "response_id": ["r1", "r2", "r3", "r4", "r1"],
                "role": ["response_judge"] * 4 + ["second_judge"],
                "label": ["ABSTAIN", "DENY", "ABSTAIN", None, "ANSWER"],
            }
        )
        out = comparison.car_by_generator(responses, labels)
        rows = {r["generator"]: r for r in out.to_dicts()}
        assert (rows["g1"]["car"], rows["g1"]["car_k"], rows["g1"]["car_n"], rows["g1"]["car_unlabelled"]) == (
            0.5,
            1,
            2,
            0,
        )
        assert (rows["g2"]["car"], rows["g2"]["car_n"], rows["g2"]["car_unlabelled"]) == (1.0, 1, 1)
        assert rows["g1"]["car_model"] == "m"

    def test_read_needs_both_files(self, project: Path) -> None:
        """Without the answer and judge stages' comparison files there is no column (None)."""
        assert comparison.read(compared(project)) is None
