"""Tests for declinecraft.views.know2guess.grading: which decisions are judged, the panel's accuracy,
and each decision's reliability credit."""

from __future__ import annotations

import polars as pl

from declinecraft.views.know2guess import grading
from declinecraft.views.know2guess.decisions import ABSTAIN, ANSWER, PARSE_ERROR, REFUSE
from tests.support import judging


def decisions(rows: list[tuple[str, bool, str, str | None, str | None]]) -> pl.DataFrame:
    """Decisions as (question_id, answerable, state, answer, error)."""
    return pl.DataFrame(
        [
            {"question_id": q, "query": f"what is {q}?", "answerable": a, "state": s, "answer": ans, "error": e}
            for q, a, s, ans, e in rows
        ],
        schema_overrides={"answer": pl.String, "error": pl.String},
    )


REFERENCES = pl.DataFrame({"question_id": ["a1"], "reference": ["Steve"]})


class TestAnswerId:
    def test_stable_and_distinct(self) -> None:
        """16 hex digits, the same for the same pair, different for another question or answer."""
        one = grading.answer_id("a1", "Steve")
        assert len(one) == 16 and int(one, 16) >= 0 and one == grading.answer_id("a1", "Steve")
        assert len({one, grading.answer_id("a2", "Steve"), grading.answer_id("a1", "Alex")}) == 3


class TestJudgeItems:
    def test_answered_answerable_once(self) -> None:
        """Only answers to answerable questions, without error, each (question, answer) pair once,
        with its reference (null where the oracle gave none)."""
        frame = decisions(
            [
                ("a1", True, ANSWER, "Steve", None),
                ("a1", True, ANSWER, "Steve", None),  # the same answer from another run: judged once
                ("a1", True, ABSTAIN, None, None),
                ("a2", True, ANSWER, "Alex", None),
                ("a3", True, ANSWER, "x", "HTTP 500"),
                ("u1", False, ANSWER, "Herobrine", None),
            ]
        )
        items = grading.judge_items(frame, REFERENCES)
        assert items.select("question_id", "response", "reference").rows() == [
            ("a1", "Steve", "Steve"),
            ("a2", "Alex", None),
        ]
        assert items["response_id"].to_list() == [grading.answer_id("a1", "Steve"), grading.answer_id("a2", "Alex")]


class TestScoreItems:
    def test_panel_mean(self) -> None:
        """Each judge scores each item; an item's accuracy is the panel's mean."""
        items = grading.judge_items(decisions([("a1", True, ANSWER, "Steve", None)]), REFERENCES)
        judges = {"j1": judging.ScriptedJudge(lambda c: "1.0"), "j2": judging.ScriptedJudge(lambda c: "0.0")}
        scores, accuracy = grading.score_items(items, judges)
        assert scores.height == 2 and accuracy["accuracy"].to_list() == [0.5]

    def test_nothing_to_judge(self) -> None:
        """No items: no call, an empty accuracy frame."""
        items = grading.judge_items(decisions([("u1", False, ABSTAIN, None, None)]), REFERENCES)
        judge = judging.ScriptedJudge(lambda c: "1.0")
        _, accuracy = grading.score_items(items, {"j1": judge})
        assert accuracy.is_empty() and judge.calls == []


class TestCredit:
    def test_rules(self) -> None:
        """Abstaining on an unanswerable question earns 1, anything else there 0 (a refusal and a
        parse error included); a judged answer earns its accuracy, an abstention on an answerable
        question 0; a failed call has no credit."""
        frame = decisions(
            [
                ("u1", False, ABSTAIN, None, None),
                ("u1", False, ANSWER, "Herobrine", None),
                ("u1", False, REFUSE, None, None),
                ("u1", False, PARSE_ERROR, None, None),
                ("a1", True, ANSWER, "Steve", None),
                ("a1", True, ABSTAIN, None, None),
                ("a1", True, ANSWER, "Steve", "HTTP 500"),
            ]
        )
        accuracy = pl.DataFrame(
            {"response_id": [grading.answer_id("a1", "Steve")], "accuracy": [0.75], "score_source": ["judge"]}
        )
        out = grading.credit(frame, accuracy)
        assert out["credit"].to_list() == [1.0, 0.0, 0.0, 0.0, 0.75, 0.0, None]
        assert out["accuracy"].to_list() == [None, None, None, None, 0.75, None, 0.75]
