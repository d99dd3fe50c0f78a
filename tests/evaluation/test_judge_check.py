"""Tests for declinecraft.evaluation.judge_check: the judges' check set, read, scored and held
against the accuracy numbers (a scripted judge that always says 1 fails it)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import claim_health, run_health
from declinecraft.evaluation import judge_check
from declinecraft.paper import numbers
from tests.support import judging, projects

CHECK = projects.REPO / "data" / "judge_check" / "accuracy.csv"


@pytest.fixture(scope="module")
def items() -> pl.DataFrame:
    return judge_check.read_check_set(CHECK)


class TestReadCheckSet:
    def test_repository_set(self, items: pl.DataFrame) -> None:
        """The shipped set has at least 60 items and every kind, generic non-answers among them."""
        assert items.height >= 60 and set(items["kind"]) == set(judge_check.KINDS)
        assert items.filter(pl.col("kind") == "generic").height >= 5

    @pytest.mark.parametrize(
        ("change", "match"),
        [
            (lambda f: f.with_columns(score=pl.lit("1.0")), "score 1.0 must be 0.0 for a wrong item"),
            (lambda f: f.with_columns(label=pl.lit("MAYBE")), "label 'MAYBE' is not one of"),
            (lambda f: f.with_columns(item_id=pl.lit("x")), "item ids must be unique"),
            (lambda f: f.filter(pl.col("kind") != "generic"), "has no generic item"),
            (lambda f: f.drop("reference"), "lacks column"),
        ],
    )
    def test_bad_file(self, tmp_path: Path, change, match: str) -> None:  # noqa: ANN001
        """A broken set fails naming the file and what is wrong."""
        frame = pl.read_csv(CHECK, infer_schema_length=0).sort("kind", descending=True)  # a wrong item first
        path = tmp_path / "check.csv"
        change(frame).write_csv(path)
        with pytest.raises(ValueError, match=match):
            judge_check.read_check_set(path)


class TestScoreCheckSet:
    def test_always_one_fails(self, items: pl.DataFrame) -> None:
        """A judge that always says 1 agrees only on the correct items, fails the check, and then
        no accuracy claim is tested and no accuracy number prints as a finding."""
        ask = judging.ScriptedJudge(lambda c: "1")
        scored = judge_check.score_check_set(items, ask, judge_id="yes-man")
        assert len(ask.calls) == items.height  # abstentions and denials are read too
        found = judge_check.check_agreement(scored, 0.7).row(0, named=True)
        correct = int((items["kind"] == "correct").sum())
        assert (found["agree"], found["items"], found["passed"]) == (correct, items.height, False)
        assert f"correct {correct}/{correct}" in found["by_kind"] and "generic 0/" in found["by_kind"]
        health = run_health.judge_check(scored, 0.7)
        assert run_health.failed_judges(health) == [("yes-man", correct, items.height)]
        reason = claim_health.reason("accuracy_total_params", health, min_n=6)
        assert "accuracy judge yes-man scores" in reason and "check_min_agreement" in reason
        assert claim_health.reason("iter_lowers_car", health, min_n=6) == ""
        computed = pl.DataFrame(
            {
                "macro": ["AccSingleMean", "CARsingleMean"],
                "what": ["mean accuracy, single", "mean CAR, single"],
                "value": [0.5, 0.4],
                "text": ["50.0", "40.0"],
                "reason": ["", ""],
            }
        )
        held = numbers.withhold_accuracy(computed, "yes-man failed")
        assert held["text"].to_list() == ["n/a", "40.0"] and held["reason"].to_list() == ["yes-man failed", ""]

    def test_faithful_judge_passes(self, items: pl.DataFrame) -> None:
        """A judge that gives each item its label passes; an unparsable reply never agrees."""
        expected = dict(zip(items["question"] + items["response"], items["score"], strict=True))
        ask = judging.ScriptedJudge(lambda c: str(expected[c.fields["question"] + c.fields["candidate"]]))
        scored = judge_check.score_check_set(items, ask, judge_id="fair")
        assert judge_check.check_agreement(scored, 0.7)["passed"].to_list() == [True]
        assert scored["agrees"].all()


class TestSampleCheckSet:
    def test_equal_per_kind(self, items: pl.DataFrame) -> None:
        """24 items are 4 of each kind, the same ones for one seed; 0 keeps every item."""
        first = judge_check.sample_check_set(items, 24, seed=0)
        assert first.height == 24 and set(first["kind"].value_counts()["count"]) == {4}
        assert first.equals(judge_check.sample_check_set(items, 24, seed=0))
        assert judge_check.sample_check_set(items, 0, seed=0).height == items.height
