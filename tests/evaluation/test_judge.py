"""Tests for declinecraft.evaluation.judge: labelling, re-asks, references, scoring, and the result tables."""

from __future__ import annotations

import math

import polars as pl
import pytest

from declinecraft.evaluation import answer, judge, metrics
from declinecraft.llm.calls import Call, Reply
from tests.support import judging


def rule_judge(call: Call) -> str:
    """A response judge that answers with the rule label (after 'Label: ' for variety)."""
    if call.history:
        return "ABSTAIN"
    return f"Label: {judge.rule_label(call.fields['answer']).title()}."


class TestTruncate:
    def test_cut(self) -> None:
        """Longer responses are cut to the limit; shorter ones and limit 0 are untouched."""
        assert (judge.truncate("abcdef", 4), judge.truncate("ab", 4), judge.truncate("abcdef", 0)) == (
            "abcd",
            "ab",
            "abcdef",
        )


class TestOutcome:
    @pytest.mark.parametrize(
        ("row", "want"),
        [
            ({"response": "It has 4 armor points.", "budget_exhausted": False}, "llm"),
            ({"response": "", "budget_exhausted": False}, "empty"),  # only a thinking trace, stopped
            ({"response": "", "budget_exhausted": True}, "budget_exhausted"),  # thinking cut at the limit
            ({"response": "", "budget_exhausted": False, "error": "HTTP 400"}, "error"),
        ],
    )
    def test_outcomes(self, row: dict, want: str) -> None:
        """Responses without a final answer get their defined outcome; others go to the judge."""
        assert judge.outcome(row) == want


class TestLabelResponses:
    def test_outcomes(self) -> None:
        """LLM labels where there is text; exhausted and failed answers get none; empty is ANSWER."""
        ask = judging.ScriptedJudge(rule_judge)
        frame = judge.label_responses(judging.labelled(), ask, judge="j")
        got = {r["response_id"]: (r["source"], r["label"], r["unparsable"]) for r in frame.iter_rows(named=True)}
        assert got == {
            "r1": ("llm", "ANSWER", False),
            "r2": ("llm", "ABSTAIN", False),
            "r3": ("llm", "DENY", False),
            "r4": ("budget_exhausted", None, False),
            "r5": ("empty", "ANSWER", False),
            "r6": ("error", None, False),
        }
        assert len(ask.calls) == 3 and frame["rule_label"].to_list()[:3] == ["ANSWER", "ABSTAIN", "DENY"]

    def test_truncates_and_uses_query(self) -> None:
        """The judge sees the question the model saw and the response cut to truncate_chars."""
        ask = judging.ScriptedJudge(lambda c: "ANSWER")
        frame = judging.responses([{"response_id": "r", "question_id": "a", "query": "What?", "response": "x" * 50}])
        judge.label_responses(frame, ask, judge="j", truncate_chars=10)
        assert dict(ask.calls[0].fields) == {"question": "What?", "answer": "x" * 10}

    def test_unparsable_counted(self) -> None:
        """A judge that never gives one label leaves the label null and flags it."""
        frame = judge.label_responses(judging.labelled().head(1), judging.ScriptedJudge(lambda c: "no idea"), judge="j")
        assert frame.select("label", "unparsable", "reasked").row(0) == (None, True, True)


class TestSecondJudgeSample:
    def test_balanced(self) -> None:
        """Equal numbers per (label, condition) cell, unlabelled responses left out."""
        resp = judging.responses(
            [
                {"response_id": f"r{i}", "condition": c, "question_id": "q", "query": "", "response": ""}
                for i, c in enumerate(["single"] * 6 + ["no_rag"] * 6)
            ]
        )
        labels = pl.DataFrame({"response_id": [f"r{i}" for i in range(12)], "label": ["ABSTAIN", "ANSWER", None] * 4})
        got = judge.second_judge_sample(labels, resp, 4, seed=0)
        assert got.group_by("label", "condition").len()["len"].to_list() == [1, 1, 1, 1]
        assert judge.second_judge_sample(labels, resp, 0, seed=0).height == 8


class TestReferenceContext:
    def test_page_then_scenario(self) -> None:
        """The full source page comes first, then the scenario chunks with title and URL."""
        text = judge.reference_context(judging.QUESTION, {"Horse": "Horses have 15 health."}, judging.lookup)
        assert text.startswith("[Source page] Horse (https://wiki/Horse)\nHorses have 15 health.")
        assert text.endswith("[Scenario chunks]\n[1] Saddle (https://wiki/Saddle)\n[Page: Saddle]\nsaddle text")

    def test_cut(self) -> None:
        """page_chars cuts the page and chunk_chars each scenario chunk."""
        text = judge.reference_context(
            judging.QUESTION, {"Horse": "h" * 1000}, judging.lookup, page_chars=100, chunk_chars=10
        )
        assert "h" * 100 + "\n" in text and "h" * 101 not in text
        assert text.endswith("[Page: Sad")

    def test_missing_page(self) -> None:
        """A source page missing from its corpus is an error naming the question and the half."""
        with pytest.raises(ValueError, match="'a0'.*'Horse'.*C_pre"):
            judge.reference_context(judging.QUESTION, {}, judging.lookup)

    def test_missing_chunk(self) -> None:
        """A scenario chunk missing from the index is an error naming the question."""
        with pytest.raises(ValueError, match="'a0': scenario"):
            judge.reference_context({**judging.QUESTION, "scenario_chunk_ids": ["zz"]}, {"Horse": "h"}, judging.lookup)


class TestWriteReferences:
    def test_prompts_and_failures(self) -> None:
        """Answerable and unanswerable questions use their J.3 oracle prompts; failures stay null."""
        questions = pl.DataFrame(
            [{**judging.QUESTION}, {**judging.QUESTION, "id": "u0", "answerable": False, "question": "boom"}]
        )
        ask = judging.ScriptedJudge(lambda c: "It gives 5 armor points.", error_on="boom")
        refs = judge.write_references(questions, {"a0": "ctx a", "u0": "ctx u"}, ask, oracle="o")
        assert [c.prompt for c in ask.calls] == ["oracle_answerable", "oracle_unanswerable"]
        assert refs["reference"].to_list() == ["It gives 5 armor points.", None]
        assert refs["error"].to_list() == [None, "HTTP 500"]


def scoring_frame() -> pl.DataFrame:
    """Responses with labels and references covering every scoring rule."""
    return judging.labelled().with_columns(
        label=pl.Series(["ANSWER", "ABSTAIN", "DENY", None, "ANSWER", None]),
        reference=pl.Series(["ten", "r", "r", "r", "r", "r"]),
    )


class TestScoringSource:
    @pytest.mark.parametrize(
        ("index", "source"),
        [(0, "llm"), (1, "abstain"), (2, "deny"), (3, "budget_exhausted"), (4, "empty"), (5, "error")],
    )
    def test_sources(self, index: int, source: str) -> None:
        """Only real answers with a reference go to a judge; the rest have a fixed outcome."""
        assert judge.scoring_source(scoring_frame().row(index, named=True)) == source

    def test_no_reference(self) -> None:
        """An answer whose question has no reference cannot be scored."""
        row = scoring_frame().row(0, named=True) | {"reference": None}
        assert judge.scoring_source(row) == "no_reference"

    def test_deny_answerable_fixed(self) -> None:
        """A premise denial of an answerable question is an attempted, incorrect answer (App. I):
        no judge call, score 0 by rule."""
        row = scoring_frame().row(2, named=True) | {"answerable": True}
        assert judge.scoring_source(row) == "deny"


class TestScoreResponses:
    def test_scores(self) -> None:
        """One judge call per real answer; fixed zeros elsewhere; errors stay null."""
        ask = judging.ScriptedJudge(lambda c: "1.0")
        frame = judge.score_responses(scoring_frame(), ask, judge="j")
        assert frame["score"].to_list() == [1.0, 0.0, 0.0, 0.0, 0.0, None]
        assert len(ask.calls) == 1 and dict(ask.calls[0].fields) == {
            "question": "Q0?",
            "ground_truth": "ten",
            "candidate": "It has 10 health.",
        }

    def test_deny_answerable_attempted_zero(self) -> None:
        """A premise denial of an answerable question gets no judge call and 0 from every judge,
        and the metrics count it as an attempted, incorrect answer (App. I)."""
        items = scoring_frame().head(3).with_columns(answerable=pl.lit(True))
        ask = judging.ScriptedJudge(lambda c: "1.0")
        scored = judge.score_responses(items, ask, judge="j")
        assert len(ask.calls) == 1 and scored["score"].to_list() == [1.0, 0.0, 0.0]
        assert scored["source"].to_list() == ["llm", "abstain", "deny"]
        frame = items.select("question_id", "answerable", "label", "budget_exhausted").with_columns(
            accuracy=scored["score"]
        )
        assert metrics.attempt_rate(frame).k == 2 and metrics.attempt_rate(frame).n == 3
        assert metrics.accuracy_when_attempted(frame) == pytest.approx(0.5)


class TestScoringItems:
    def test_selection(self) -> None:
        """Every answerable response, plus unanswerable ones only in the leakage audit's setting."""
        resp = judging.responses(
            [
                {"response_id": "a", "question_id": "q1", "query": "", "response": ""},
                {"response_id": "b", "question_id": "q2", "query": "", "response": "", "answerable": False},
                {
                    "response_id": "c",
                    "question_id": "q2",
                    "query": "",
                    "response": "",
                    "answerable": False,
                    "condition": "no_rag",
                    "pipeline": "none",
                    "k": 0,
                },
            ]
        )
        labels = pl.DataFrame({"response_id": ["a", "b", "c"], "role": ["response_judge"] * 3, "label": ["ANSWER"] * 3})
        refs = pl.DataFrame({"question_id": ["q1", "q2"], "reference": ["x", "y"]})
        got = judge.scoring_items(resp, labels, refs)
        assert sorted(got["response_id"].to_list()) == ["a", "c"] and got["reference"].to_list() == ["x", "y"]


class TestJudgedFrame:
    def test_accuracy_panel(self) -> None:
        """Accuracy is the panel mean; a missing score makes it null and incomplete, never a smaller mean."""
        resp = judging.labelled().head(3)
        labels = judge.label_responses(resp, judging.ScriptedJudge(rule_judge), judge="j")
        scores = pl.concat(
            [
                pl.DataFrame({"response_id": ["r1", "r2"], "judge": "j1", "score": [1.0, 0.0]}),
                pl.DataFrame({"response_id": ["r1", "r2"], "judge": "j2", "score": [0.5, None]}),
            ]
        )
        got = judge.judged_frame(resp, labels, scores, ["j1", "j2"]).sort("response_id")
        assert got["accuracy"].to_list() == [0.75, None, None]
        assert got["accuracy_complete"].to_list() == [True, False, None]
        assert got["score_j2"].to_list() == [0.5, None, None] and got["label"].to_list() == [
            "ANSWER",
            "ABSTAIN",
            "DENY",
        ]


class TestOfRecord:
    def test_rules_replace_the_judges_labels(self) -> None:
        """With labels_by_rule the rule's label stands for every response the judge was asked about;
        a defined outcome and a second judge's label stay; without it nothing changes."""
        labels = pl.DataFrame(
            {
                "response_id": ["a", "b", "c", "a"],
                "role": ["response_judge", "response_judge", "response_judge", "second_judge"],
                "source": ["llm", "llm", "budget_exhausted", "llm"],
                "label": ["ANSWER", "DENY", None, "ANSWER"],
                "rule_label": ["ABSTAIN", "DENY", None, "ABSTAIN"],
            }
        )
        assert judge.of_record(labels, False).equals(labels.with_columns(judge_label=pl.col("label")))
        got = judge.of_record(labels, True)
        assert got["label"].to_list() == ["ABSTAIN", "DENY", None, "ANSWER"]
        assert got["judge_label"].to_list() == labels["label"].to_list()
        assert got["rule_label"].to_list() == labels["rule_label"].to_list()


def judged_grid() -> pl.DataFrame:
    """Two conditions x four questions with known labels and accuracies."""
    rows = []
    for cond, labels, acc in (
        ("no_rag", ["ANSWER", "ANSWER", "DENY", "ANSWER"], [1.0, 0.5, 0.0, 1.0]),
        ("single", ["ANSWER", "ABSTAIN", "ABSTAIN", None], [1.0, 0.0, None, None]),
    ):
        for i, (lab, a) in enumerate(zip(labels, acc, strict=True)):
            rows.append(
                {
                    "question_id": f"q{i}",
                    "answerable": i < 2,
                    "model": "m",
                    "thinking": "off",
                    "condition": cond,
                    "pipeline": "none" if cond == "no_rag" else "hybrid",
                    "k": 0 if cond == "no_rag" else 5,
                    "scenario": True,
                    "prompt_variant": "default",
                    "label": lab,
                    "budget_exhausted": False,
                    "label_unparsable": lab is None,
                    "label_source": "llm",
                    "accuracy": a,
                    "accuracy_complete": a is not None,
                    "error": None,
                    "label_error": None,
                    "response_id": f"{cond}{i}",
                    "rule_label": lab or "ANSWER",
                }
            )
    return pl.DataFrame(rows, schema_overrides={"error": pl.String, "label_error": pl.String})


class TestResults:
    def test_counts_and_metrics(self) -> None:
        """One row per setting; unparsable labels are counted and left out of the rates."""
        table = judge.results(judged_grid(), n_resamples=50)
        single = table.filter(pl.col("condition") == "single").row(0, named=True)
        assert (single["n_responses"], single["n_label_unparsable"], single["car_n"], single["car"]) == (4, 1, 1, 1.0)
        no_rag = table.filter(pl.col("condition") == "no_rag").row(0, named=True)
        assert (no_rag["attempt"], no_rag["accuracy"], no_rag["car"]) == (1.0, 0.75, 0.0)


class TestLeakage:
    def test_audit(self) -> None:
        """No-RAG unanswerable answers only: mean accuracy with DENY at 0."""
        got = judge.leakage(judged_grid(), n_resamples=50).row(0, named=True)
        assert (got["n"], got["n_answer"], got["leakage_accuracy"]) == (2, 1, 0.5)


class TestAgreement:
    def test_rule_and_second_judge(self) -> None:
        """Agreement and kappa against rule_label and a second judge over responses both labelled."""
        resp = judging.responses(
            [{"response_id": f"r{i}", "question_id": "q", "query": "", "response": ""} for i in range(4)]
        )
        labels = pl.DataFrame(
            {
                "response_id": ["r0", "r1", "r2", "r3"] * 2,
                "judge": ["j"] * 4 + ["s"] * 4,
                "role": ["response_judge"] * 4 + ["second_judge"] * 4,
                "label": ["ABSTAIN", "ANSWER", "DENY", None, "ABSTAIN", "ANSWER", "ANSWER", "DENY"],
                "rule_label": ["ABSTAIN", "ANSWER", "DENY", "DENY", None, None, None, None],
            }
        )
        table = judge.agreement(labels, resp).filter(pl.col("scope") == "all")
        rule = table.filter(pl.col("comparison") == "rule_label").row(0, named=True)
        second = table.filter(pl.col("comparison") == "s").row(0, named=True)
        assert (rule["n"], rule["agreement"], rule["kappa"]) == (3, 1.0, 1.0)
        assert (second["n"], second["agreement"]) == (3, pytest.approx(2 / 3))
        assert math.isfinite(second["kappa"])


def test_responses_schema_feeds_judge() -> None:
    """A frame built by answer.responses_frame has every column the judge reads."""
    frame = answer.responses_frame(
        answer.rows_of(
            [answer.Answered("a0", "Q?", Reply("x"))],
            model="m",
            thinking="off",
            setting=answer.Setting("no_rag"),
            answerable={"a0": True},
        )
    )
    assert judge.label_responses(frame, judging.ScriptedJudge(lambda c: "ANSWER"), judge="j")["label"].to_list() == [
        "ANSWER"
    ]
