"""Tests for declinecraft.analysis.judges: judge agreement, accuracy, leniency, self-preference, human agreement."""

from __future__ import annotations

import math

import polars as pl
import pytest

from declinecraft.analysis import analyze, judges
from tests.support import judged_tables, synthetic


def scored(a: list[float], b: list[float], c: list[float] | None = None) -> pl.DataFrame:
    rows = judged_tables.answerable("m", "single", len(a))
    frame = judged_tables.responses(rows).with_columns(
        pl.Series("score_a", a, dtype=pl.Float64), pl.Series("score_b", b, dtype=pl.Float64)
    )
    return frame.with_columns(pl.Series("score_c", c, dtype=pl.Float64)) if c is not None else frame


class TestJudgeColumns:
    def test_prefix(self) -> None:
        """Numeric columns with the prefix are the judges."""
        assert judges.judge_columns(scored([1.0], [0.0])) == ["score_a", "score_b"]


class TestJudgeAgreement:
    def test_identical(self) -> None:
        """Identical judges agree exactly with kappa 1; Fleiss needs three judges."""
        out = judges.judge_agreement(scored([0, 0.5, 1, 1], [0, 0.5, 1, 1]), ["score_a", "score_b"])
        pair, fleiss = out.row(0, named=True), out.row(1, named=True)
        assert (pair["exact"], pair["kappa"], pair["mean_diff"]) == (1.0, 1.0, 0.0)
        assert math.isnan(fleiss["kappa"]) and "three" in fleiss["note"]

    def test_rule_scored_excluded(self) -> None:
        """Premise denials and empty responses got their 0 by rule: left out of the rows and counted."""
        frame = scored([1.0, 0.5, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]).with_columns(
            label=pl.Series(["ANSWER", "ANSWER", "DENY", "ANSWER", "ANSWER"]),
            label_source=pl.Series(["llm", "llm", "llm", "empty", "llm"]),
        )
        pair = judges.judge_agreement(frame, ["score_a", "score_b"]).row(0, named=True)
        assert (pair["rows"], pair["excluded"]) == (3, 2) and pair["exact"] == pytest.approx(2 / 3)

    def test_single_score(self) -> None:
        """All-identical scores: kappa undefined (NaN) with a note, not an error."""
        out = judges.judge_agreement(scored([1.0] * 4, [1.0] * 4, [1.0] * 4), ["score_a", "score_b", "score_c"])
        assert out["kappa"].is_nan().all() and out["note"].str.contains("undefined").all()


class TestJudgeRunAccuracy:
    def test_per_judge(self) -> None:
        """Each judge's accuracy per run, abstentions scoring 0."""
        out = judges.judge_run_accuracy(scored([1, 0, 1, 1], [0, 0, 1, 1]), ["score_a", "score_b"], ["model"])
        assert out.row(0, named=True)["score_a"] == pytest.approx(0.75) and out.row(0, named=True)[
            "score_b"
        ] == pytest.approx(0.5)


class TestJudgeLeniency:
    def test_offsets(self) -> None:
        """Leniency is each judge's mean minus the mean of all judges."""
        out = judges.judge_leniency(scored([1, 1], [0, 0]), ["score_a", "score_b"])
        assert out["leniency"].to_list() == pytest.approx([0.5, -0.5])


class TestSelfPreferenceTable:
    def test_matches_stats(self) -> None:
        """The estimate is stats.self_preference on the long scores."""
        rows = judged_tables.answerable("own", "single", 4) + judged_tables.answerable("other", "single", 4)
        frame = judged_tables.responses(rows).with_columns(
            family=pl.when(pl.col("model") == "own").then(pl.lit("F")).otherwise(pl.lit("G")),
            score_a=pl.Series([1.0, 1, 1, 1, 0, 0, 0, 0]),
            score_b=pl.Series([0.0, 0, 0, 0, 0, 0, 0, 0]),
        )
        out = judges.self_preference_table(frame, {"score_a": "F", "score_b": None}, n_resamples=50)
        assert out.row(0, named=True)["estimate"] == pytest.approx(1.0)
        assert "no evaluated model" in out.row(1, named=True)["note"]


class TestAnnotationSample:
    def test_balanced(self, synth: dict[str, pl.DataFrame]) -> None:
        """70 + 30 items: 24/23/23 over labels, 10 per accuracy bin, no duplicates."""
        frame = analyze.main_grid_rows(analyze.prepare(synthetic.synthetic_judged(6, 200)))
        sample = judges.annotation_sample(frame, seed=3)
        part1 = sample.filter(pl.col("part") == 1)
        assert sorted(part1.group_by("judge_label").len()["len"].to_list()) == [23, 23, 24]
        assert sample.filter(pl.col("part") == 2).height == 30
        assert sample["item_id"].n_unique() == 100

    def test_short_strata(self) -> None:
        """Too few answers give fewer items, never duplicates."""
        frame = judged_tables.responses(judged_tables.unanswerable("m", "single", ["ABSTAIN", "DENY"]))
        assert judges.annotation_sample(frame).height == 2


class TestHumanAgreement:
    def test_perfect(self) -> None:
        """Annotators agreeing with each other and the judge give kappa 1 everywhere."""
        sample = pl.DataFrame(
            {
                "item_id": ["P1-1", "P1-2", "P1-3", "P2-1", "P2-2"],
                "part": [1, 1, 1, 2, 2],
                "judge_label": ["ABSTAIN", "DENY", "ANSWER", "ANSWER", "ANSWER"],
                "judge_score": [None, None, None, 0.0, 1.0],
            }
        )
        ann = pl.DataFrame(
            {
                "item_id": sample["item_id"],
                "label": ["ABSTAIN", "DENY", "ANSWER", None, None],
                "score": [None, None, None, 0.0, 1.0],
            }
        )
        out = judges.human_agreement(sample, {"x": ann, "y": ann}, n_resamples=20)
        assert out.filter(pl.col("measure") == "judge_human")["kappa"].to_list() == [1.0, 1.0]

    def test_one_annotator(self) -> None:
        """A single annotator: human-human is NaN with a note."""
        sample = pl.DataFrame(
            {
                "item_id": ["P1-1", "P1-2"],
                "part": [1, 1],
                "judge_label": ["ABSTAIN", "DENY"],
                "judge_score": [None, None],
            }
        )
        ann = pl.DataFrame({"item_id": ["P1-1", "P1-2"], "label": ["ABSTAIN", "DENY"]})
        out = judges.human_agreement(sample, {"x": ann}, n_resamples=10)
        row = out.filter((pl.col("part") == 1) & (pl.col("measure") == "human_human")).row(0, named=True)
        assert math.isnan(row["kappa"]) and "needs 2" in row["note"]


class TestOtherFamilyRerank:
    def rows(self) -> pl.DataFrame:
        """Three families F, G, H; judge a is of family F and scores F's answers 1, others 0.5."""
        parts = []
        for model, family, b in (("f1", "F", 0.2), ("g1", "G", 0.6), ("h1", "H", 1.0)):
            frame = judged_tables.responses(judged_tables.answerable(model, "single", 4)).with_columns(
                family=pl.lit(family)
            )
            parts.append(frame.with_columns(score_a=pl.lit(1.0 if family == "F" else 0.5), score_b=pl.lit(b)))
        frame = pl.concat(parts)
        return frame.with_columns(accuracy=(pl.col("score_a") + pl.col("score_b")) / 2)

    def test_rerank(self) -> None:
        """Answers from F are rescored by b alone; the ranking of the three changes (rho 0.5)."""
        out = judges.other_family_rerank(self.rows(), {"score_a": "F", "score_b": "Other"}, ["model", "thinking"])
        row = out.row(0, named=True)
        # full panel: f1 0.6, g1 0.55, h1 0.75; other families only: f1 0.2, g1 0.55, h1 0.75
        assert (row["n"], row["n_reduced"]) == (3, 1) and row["rho"] == pytest.approx(0.5)

    def test_one_family(self) -> None:
        """When every judge shares the answers' family nothing can be re-ranked: NaN and why."""
        frame = self.rows().with_columns(family=pl.lit("F"))
        row = judges.other_family_rerank(frame, {"score_a": "F", "score_b": "F"}, ["model"]).row(0, named=True)
        assert row["n_reduced"] == 0 and math.isnan(row["rho"]) and "nothing to re-rank" in row["note"]
