"""Tests for declinecraft.evaluation.iterative: Algorithm 4 with a scripted retriever and model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from declinecraft.evaluation import iterative
from tests.support import projects


@dataclass
class FakeReply:
    """The fields the loop reads from a model reply."""

    text: str
    budget_exhausted: bool = False
    cache_key: str | None = "key"
    error: str | None = None


def reflection(assessment: str, follow_ups: list[str] | None = None, missing: str = "") -> str:
    """A well-formed reflection reply."""
    return json.dumps({"assessment": assessment, "missing_info": missing, "follow_up_questions": follow_ups or []})


class Corpus:
    """A retriever over fixed ranked lists: query -> chunk ids; records every call."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[tuple[list[str], int]] = []

    def __call__(self, queries: Sequence[str], k: int) -> list[list[str]]:
        self.calls.append((list(queries), k))
        return [self.table.get(q, [])[:k] for q in queries]


class Model:
    """A reflecting model scripted per query: a list of replies, one per round."""

    def __init__(self, script: dict[str, list[FakeReply]]) -> None:
        self.script = {q: list(r) for q, r in script.items()}
        self.seen: list[tuple[str, list[str]]] = []

    def __call__(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[FakeReply]:
        out = []
        for query, chunks in items:
            self.seen.append((query, list(chunks)))
            out.append(self.script[query].pop(0))
        return out


class TestParseReflection:
    def test_sufficient(self) -> None:
        """Sufficient stops even if the model also lists follow-ups."""
        r = iterative.parse_reflection(reflection("Sufficient", ["why?"]))
        assert (r.status, r.follow_ups) == ("sufficient", ())

    def test_insufficient(self) -> None:
        """Insufficient with questions keeps them in order."""
        r = iterative.parse_reflection(reflection("Insufficient", ["a?", "b?"], "stats"))
        assert (r.status, r.follow_ups, r.missing_info) == ("insufficient", ("a?", "b?"), "stats")

    def test_fenced_json_in_prose(self) -> None:
        """A JSON object inside a ```json fence with prose around it is read."""
        text = "Here you go:\n```json\n" + reflection("insufficient", ["a?"]) + "\n```\nDone."
        assert iterative.parse_reflection(text).follow_ups == ("a?",)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "The context is sufficient.",
            "{not json}",
            '["Sufficient"]',
            json.dumps({"assessment": "Maybe", "follow_up_questions": ["a?"]}),
        ],
    )
    def test_lost_to_format(self, text: str) -> None:
        """No JSON object, or an assessment that is neither value, is lost to format."""
        assert iterative.parse_reflection(text).status == "lost_to_format"

    @pytest.mark.parametrize("follow", [[], ["", "  "], [1, None], None])
    def test_zero_follow_ups(self, follow: object) -> None:
        """Insufficient with no usable question stops with no_follow_ups."""
        text = json.dumps({"assessment": "Insufficient", "follow_up_questions": follow})
        assert iterative.parse_reflection(text).status == "no_follow_ups"

    def test_nine_follow_ups(self) -> None:
        """Nine questions: the first five are used and the reply is marked truncated."""
        r = iterative.parse_reflection(reflection("Insufficient", [f"q{i}?" for i in range(9)]))
        assert r.follow_ups == ("q0?", "q1?", "q2?", "q3?", "q4?")
        assert (r.truncated, r.n_follow_ups_given) == (True, 9)

    def test_echoed_template(self) -> None:
        """The prompt's placeholder copied back is not a question: dropped and flagged."""
        r = iterative.parse_reflection(reflection("Insufficient", [iterative.TEMPLATE_FOLLOW_UP]))
        assert (r.status, r.echoed_template, r.n_follow_ups_given) == ("no_follow_ups", True, 1)
        r = iterative.parse_reflection(reflection("Insufficient", [iterative.TEMPLATE_FOLLOW_UP.lower(), "real?"]))
        assert (r.status, r.follow_ups, r.echoed_template) == ("insufficient", ("real?",), True)
        prompt = (projects.REPO / "params" / "prompts" / "reflect.txt").read_text(encoding="utf-8")
        assert iterative.TEMPLATE_FOLLOW_UP in prompt

    def test_bare_string_follow_up(self) -> None:
        """A single follow-up written as a string counts as one question."""
        text = json.dumps({"assessment": "Insufficient", "follow_up_questions": "what is it?"})
        assert iterative.parse_reflection(text).follow_ups == ("what is it?",)

    def test_trailing_comma(self) -> None:
        """A trailing comma (common in small models' JSON) is forgiven by the shared JSON reader."""
        text = '{"assessment": "Insufficient", "missing_info": "x", "follow_up_questions": ["a?",],}'
        assert iterative.parse_reflection(text).follow_ups == ("a?",)


class TestReflectionOf:
    def test_error(self) -> None:
        """A failed call becomes status error, whatever its text."""
        assert iterative.reflection_of(FakeReply(reflection("Sufficient"), error="500")).status == "error"

    def test_budget(self) -> None:
        """An exhausted budget becomes status budget_exhausted."""
        assert iterative.reflection_of(FakeReply("", budget_exhausted=True)).status == "budget_exhausted"

    def test_keeps_cache_key(self) -> None:
        """The reply's cache key is kept on the parsed reflection."""
        assert iterative.reflection_of(FakeReply(reflection("Sufficient"), cache_key="abc")).cache_key == "abc"


class TestAllocate:
    def test_round_robin(self) -> None:
        """Two lists share k=3: first of each, then the second of the first."""
        assert iterative.allocate([["a", "b"], ["c", "d"]], 3, set()) == ["a", "c", "b"]

    def test_skips_seen_and_duplicates(self) -> None:
        """Chunks already in the context or taken from another list are skipped."""
        assert iterative.allocate([["a", "b", "c"], ["b", "d"]], 3, {"a"}) == ["b", "d", "c"]

    def test_runs_out(self) -> None:
        """When the lists hold fewer unseen chunks than k, all of them are returned."""
        assert iterative.allocate([["a"], ["a", "b"]], 5, {"b"}) == ["a"]


class TestRun:
    def test_sufficient_first(self) -> None:
        """Sufficient after round 0: one reflection, the single-shot chunks, no more retrieval."""
        corpus = Corpus({"Q": ["c1", "c2"]})
        model = Model({"Q": [FakeReply(reflection("Sufficient"))]})
        (trace,) = iterative.run(["Q"], retrieve=corpus, reflect=model, k=2, max_rounds=2)
        assert trace.chunk_ids == ["c1", "c2"]
        assert [r.stop for r in trace.rounds] == ["sufficient"]
        assert len(corpus.calls) == 1

    def test_two_more_rounds(self) -> None:
        """Insufficient twice: two follow-up rounds of k new chunks each, then no third reflection."""
        corpus = Corpus({"Q": ["c1", "c2"], "f1": ["c1", "c3", "c4"], "f2": ["c5", "c6"], "g": ["c7", "c8", "c9"]})
        model = Model(
            {"Q": [FakeReply(reflection("Insufficient", ["f1", "f2"])), FakeReply(reflection("Insufficient", ["g"]))]}
        )
        (trace,) = iterative.run(["Q"], retrieve=corpus, reflect=model, k=2, max_rounds=2)
        assert [r.chunk_ids for r in trace.rounds] == [("c1", "c2"), ("c3", "c5"), ("c7", "c8")]
        assert [r.queries for r in trace.rounds] == [("Q",), ("f1", "f2"), ("g",)]
        assert trace.rounds[-1].stop == "max_rounds" and trace.rounds[-1].reflection is None
        assert model.seen[1] == ("Q", ["c1", "c2", "c3", "c5"])

    @pytest.mark.parametrize(
        ("reply", "stop"),
        [
            (FakeReply("I think it is fine"), "lost_to_format"),
            (FakeReply(json.dumps({"assessment": "Insufficient", "follow_up_questions": []})), "no_follow_ups"),
            (FakeReply("", budget_exhausted=True), "budget_exhausted"),
            (FakeReply("", error="HTTP 500"), "error"),
        ],
    )
    def test_bad_reflection_stops(self, reply: FakeReply, stop: str) -> None:
        """A bad reflection ends the loop with its reason and keeps the round-0 context."""
        corpus = Corpus({"Q": ["c1"]})
        (trace,) = iterative.run(["Q"], retrieve=corpus, reflect=Model({"Q": [reply]}), k=1, max_rounds=2)
        assert (trace.chunk_ids, trace.rounds[0].stop) == (["c1"], stop)

    def test_no_new_chunks(self) -> None:
        """Follow-ups that only find known chunks end the loop (the next reflection would repeat)."""
        corpus = Corpus({"Q": ["c1"], "f": ["c1"]})
        model = Model({"Q": [FakeReply(reflection("Insufficient", ["f"]))]})
        (trace,) = iterative.run(["Q"], retrieve=corpus, reflect=model, k=1, max_rounds=2)
        assert [r.stop for r in trace.rounds] == [None, "no_new_chunks"]

    def test_batches_per_round(self) -> None:
        """Several questions share one retrieval call per round; follow-up depth is k + context."""
        corpus = Corpus({"A": ["a1"], "B": ["b1"], "fa": ["a1", "a2"]})
        model = Model(
            {
                "A": [FakeReply(reflection("Insufficient", ["fa"])), FakeReply(reflection("Sufficient"))],
                "B": [FakeReply(reflection("Sufficient"))],
            }
        )
        traces = iterative.run(["A", "B"], retrieve=corpus, reflect=model, k=1, max_rounds=2)
        assert [t.chunk_ids for t in traces] == [["a1", "a2"], ["b1"]]
        assert corpus.calls == [(["A", "B"], 1), (["fa"], 2)]

    def test_first_given(self) -> None:
        """Round 0 reuses given single-shot chunks without calling the retriever."""
        corpus = Corpus({})
        (trace,) = iterative.run(
            ["Q"],
            retrieve=corpus,
            reflect=Model({"Q": [FakeReply(reflection("Sufficient"))]}),
            k=2,
            max_rounds=1,
            first=[["x", "y", "z"]],
        )
        assert (trace.chunk_ids, corpus.calls) == (["x", "y"], [])

    def test_rounds_json(self) -> None:
        """The trace serialises every round, with the reflection's JSON fields."""
        corpus = Corpus({"Q": ["c1"], "f": ["c2"]})
        model = Model({"Q": [FakeReply(reflection("Insufficient", ["f"], "the value"))]})
        (trace,) = iterative.run(["Q"], retrieve=corpus, reflect=model, k=1, max_rounds=1)
        rounds = json.loads(trace.to_json())
        assert rounds[0]["reflection"]["missing_info"] == "the value"
        assert rounds[1] == {
            "index": 1,
            "queries": ["f"],
            "chunk_ids": ["c2"],
            "reflection": None,
            "stop": "max_rounds",
        }
        assert rounds[0]["reflection"]["echoed_template"] is False

    def test_bad_arguments(self) -> None:
        """k below 1 is an error that names the values."""
        with pytest.raises(ValueError, match="k >= 1"):
            iterative.run(["Q"], retrieve=Corpus({}), reflect=Model({}), k=0, max_rounds=2)
