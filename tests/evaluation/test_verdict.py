"""Tests for declinecraft.evaluation.verdict: a judge's output parsed, re-asked once when unparsable
(parsed here with the judge's own parsers, :mod:`declinecraft.evaluation.judge`)."""

from __future__ import annotations

from declinecraft.evaluation import judge
from declinecraft.evaluation.verdict import REASK_LABEL, REASK_SCORE, SCORE_CHOICES, ask_parsed
from declinecraft.llm.calls import Call
from tests.support import judging


class TestAskParsed:
    def test_reask_once(self) -> None:
        """An unparsable output is re-asked once with the raw reply and the instruction as new turns."""
        ask = judging.ScriptedJudge(lambda c: "ABSTAIN\n\nBecause..." if c.history else "Hmm, hard to say.")
        (v,) = ask_parsed(
            [Call("judge_response", {"question": "q", "answer": "a"})], ask, judge.parse_label, REASK_LABEL
        )
        assert (v.value, v.reasked, v.raw, v.raw_reask) == (
            "ABSTAIN",
            True,
            "Hmm, hard to say.",
            "ABSTAIN\n\nBecause...",
        )
        assert ask.calls[1].history == (("assistant", "Hmm, hard to say."), ("user", REASK_LABEL))

    def test_still_unparsable(self) -> None:
        """Unparsable twice: value None, counted as unparsable, never guessed, no third call."""
        ask = judging.ScriptedJudge(lambda c: "DENY or ABSTAIN")
        (v,) = ask_parsed(
            [Call("judge_response", {"question": "q", "answer": "a"})], ask, judge.parse_label, REASK_LABEL
        )
        assert (v.value, v.unparsable, v.reasked, len(ask.calls)) == (None, True, True, 2)

    def test_failed_call_not_reasked(self) -> None:
        """A failed judge call keeps its error, is not re-asked and is not counted as unparsable."""
        ask = judging.ScriptedJudge(lambda c: "ANSWER", error_on="boom")
        (v,) = ask_parsed(
            [Call("judge_response", {"question": "boom", "answer": "a"})], ask, judge.parse_label, REASK_LABEL
        )
        assert (v.value, v.error, v.unparsable, v.reasked, len(ask.calls)) == (None, "HTTP 500", False, False, 1)

    def test_constrained_reask(self) -> None:
        """With choices, only the re-ask carries them (the first ask is the paper's prompt as is);
        score_responses passes the score scale when asked to constrain."""
        ask = judging.ScriptedJudge(lambda c: "0.5" if c.choices else "1.5")
        (v,) = ask_parsed([Call("judge_accuracy", {})], ask, judge.parse_score, REASK_SCORE, choices=SCORE_CHOICES)
        assert (v.value, v.reasked, v.raw, v.raw_reask) == (0.5, True, "1.5", "0.5")
        assert [c.choices for c in ask.calls] == [(), ("0.0", "0.5", "1.0")]

    def test_parsed_first_time(self) -> None:
        """A parsable output is not re-asked."""
        ask = judging.ScriptedJudge(lambda c: "0.5")
        (v,) = ask_parsed([Call("judge_accuracy", {})], ask, judge.parse_score, REASK_SCORE)
        assert (v.value, v.reasked, len(ask.calls)) == (0.5, False, 1)


class TestBatch:
    def test_order_and_keys(self) -> None:
        """Verdicts come in call order, only the unparsable re-asked, each with the cache key of its last call."""
        ask = judging.ScriptedJudge(lambda c: "ANSWER" if c.history or c.fields["answer"] == "ok" else "?")
        calls = [Call("judge_response", {"question": "q", "answer": a}) for a in ("ok", "bad", "ok")]
        verdicts = ask_parsed(calls, ask, judge.parse_label, REASK_LABEL)
        assert [(v.value, v.reasked) for v in verdicts] == [("ANSWER", False), ("ANSWER", True), ("ANSWER", False)]
        assert len(ask.calls) == 4 and [v.cache_key for v in verdicts] == ["key-3", "key-4", "key-3"]
