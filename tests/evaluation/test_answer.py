"""Tests for declinecraft.evaluation.answer: the settings grid, prompts, and answering with scripted fakes."""

from __future__ import annotations

import dataclasses
import json

import polars as pl
import pytest

from declinecraft.core.config import AnswerParams
from declinecraft.evaluation import answer
from declinecraft.evaluation.answer import Setting
from declinecraft.llm.calls import Call, Reply
from declinecraft.retrieval.fusion import Hit
from tests.support import answering


class TestSettings:
    def test_main_grid(self) -> None:
        """The paper's three conditions at the run's pipeline and k, no retrieval first."""
        got = answer.settings(AnswerParams(conditions=("no_rag", "single", "iterative"), k=5))
        assert got == [Setting("no_rag"), Setting("single", "hybrid", 5), Setting("iterative", "hybrid", 5)]

    def test_ablations_deduplicated(self) -> None:
        """The k sweep's k=5 and the pipelines' hybrid are the main single-shot run, answered once."""
        params = AnswerParams(
            conditions=("single",),
            k=5,
            k_sweep=(1, 5),
            pipelines=("bm25", "hybrid"),
            no_scenario=True,
            temporal_prompt=True,
        )
        assert answer.settings(params) == [
            Setting("single", "hybrid", 5),
            Setting("single", "hybrid", 1),
            Setting("single", "bm25", 5),
            Setting("single", "hybrid", 5, scenario=False),
            Setting("single", "hybrid", 5, prompt_variant="temporal"),
        ]

    @pytest.mark.parametrize(
        "params",
        [AnswerParams(conditions=("rag",)), AnswerParams(conditions=()), AnswerParams(k=0), AnswerParams(k_sweep=(0,))],
    )
    def test_invalid(self, params: AnswerParams) -> None:
        """Unknown or empty conditions and k below 1 are errors naming the params."""
        with pytest.raises(ValueError, match="answer\\."):
            answer.settings(params)


class TestPlan:
    ABLATING = AnswerParams(conditions=("no_rag", "single"), k=5, k_sweep=(1, 5), thinking=("off", "prompted"))

    def test_every_setting_in_every_mode(self) -> None:
        """Without ablation_thinking, each thinking mode runs the main grid and every ablation."""
        got = answer.plan(self.ABLATING, "none")
        assert [(m, s.k) for m, s in got] == [
            ("off", 0),
            ("off", 5),
            ("off", 1),
            ("prompt", 0),
            ("prompt", 5),
            ("prompt", 1),
        ]

    def test_ablations_in_their_modes_only(self) -> None:
        """ablation_thinking ("off",) keeps prompted reasoning to the main grid; the sweep runs off."""
        params = dataclasses.replace(self.ABLATING, ablation_thinking=("off",))
        got = answer.plan(params, "none")
        assert [(m, s.k) for m, s in got] == [("off", 0), ("off", 5), ("off", 1), ("prompt", 0), ("prompt", 5)]

    def test_always_thinking_model_ablates_in_its_one_mode(self) -> None:
        """A model that always thinks has one mode; ablation_thinking ("off",) maps to it too."""
        params = dataclasses.replace(self.ABLATING, ablation_thinking=("off",))
        assert [m for m, _ in answer.plan(params, "always")] == ["on", "on", "on"]

    def test_ablation_models(self) -> None:
        """answer.ablation_models keeps an ablation to its models; the main grid and ablations it
        does not name run for every model."""
        params = AnswerParams(
            models=("a", "b"), k_sweep=(1, 10), pipelines=("bm25",), no_scenario=True, ablation_models={"k=10": ("a",)}
        )
        names = {m: [answer.ablation_name(s, params) for _, s in answer.plan(params, "none", m)] for m in ("a", "b")}
        assert names["a"] == [None, None, None, "k=1", "k=10", "bm25", "no_scenario"]
        assert names["b"] == [None, None, None, "k=1", "bm25", "no_scenario"]
        assert len(answer.plan(params, "none")) == 7  # no model named: every setting

    def test_not_a_subset(self) -> None:
        """An ablation thinking setting the run does not have is an error naming both params."""
        params = dataclasses.replace(self.ABLATING, thinking=("off",), ablation_thinking=("prompted",))
        with pytest.raises(ValueError, match="answer.ablation_thinking .* answer.thinking"):
            answer.plan(params, "none")


class TestThinkingModes:
    @pytest.mark.parametrize(
        ("requested", "switch", "want"),
        [
            (("off",), "none", ["off"]),
            (("off",), "always", ["on"]),
            (("off", "on"), "switchable", ["off", "on"]),
            (("on",), "switchable", ["on"]),
            (("off", "on"), "none", ["off"]),
        ],
    )
    def test_modes(self, requested: tuple[str, ...], switch: str, want: list[str]) -> None:
        """Models without a switch run their only mode; switchable models run what was asked."""
        assert answer.thinking_modes(requested, switch) == want

    def test_invalid(self) -> None:
        """A thinking value other than off/on/prompted is an error."""
        with pytest.raises(ValueError, match="off"):
            answer.thinking_modes(("yes",), "switchable")

    @pytest.mark.parametrize(
        ("requested", "switch", "want"),
        [
            (("off", "prompted"), "none", ["off", "prompt"]),
            (("prompted",), "none", ["off", "prompt"]),
            (("off", "prompted"), "switchable", ["off", "on"]),
            (("on", "prompted"), "switchable", ["on"]),
            (("off", "prompted"), "always", ["on"]),
        ],
    )
    def test_prompted(self, requested: tuple[str, ...], switch: str, want: list[str]) -> None:
        """'prompted' asks the stand-in only of models without native thinking; others think natively."""
        assert answer.thinking_modes(requested, switch) == want


class TestPromptedThinking:
    def test_label_and_flag(self) -> None:
        """Prompted reasoning is stored as thinking 'on'; the run's settings say it was prompted."""
        assert [answer.thinking_label(m) for m in ("off", "on", "prompt")] == ["off", "on", "on"]
        assert answer.is_prompted(("off", "prompted")) and not answer.is_prompted(("off", "on"))

    def test_instruction_matches_split(self) -> None:
        """The instruction (ours, params/prompts/) asks for the tags the splitter removes."""
        from declinecraft.core import prompts
        from declinecraft.llm import responses

        text = responses.reasoning_prompt()
        assert responses.OPEN in text and responses.CLOSE in text
        assert "ours" in prompts.load(responses.REASONING_TEMPLATE).section.lower()
        reply = f"{responses.OPEN}Copper Golem is not in 1.21.{responses.CLOSE}\nI don't know."
        assert responses.split_thinking(reply) == ("I don't know.", "Copper Golem is not in 1.21.")


class TestSelectQuestions:
    def test_all(self) -> None:
        """limit 0 keeps every question, sorted by id."""
        assert answer.select_questions(answering.benchmark(3, 2), 0, 0)["id"].to_list() == [
            "a0",
            "a1",
            "a2",
            "u0",
            "u1",
        ]

    def test_keeps_share(self) -> None:
        """6 of 12 (8 answerable, 4 unanswerable) keeps 4 and 2, deterministically for a seed."""
        frame = answering.benchmark(8, 4)
        got = answer.select_questions(frame, 6, 0)
        assert (int(got["answerable"].sum()), got.height) == (4, 6)
        assert got["id"].to_list() == answer.select_questions(frame.reverse(), 6, 0)["id"].to_list()

    def test_both_halves(self) -> None:
        """A small limit still keeps one question of each half."""
        got = answer.select_questions(answering.benchmark(9, 1), 2, 3)
        assert sorted(got["answerable"].to_list()) == [False, True]


class TestQueryOf:
    def test_scenario(self) -> None:
        """With the scenario the query is scenario + question; without, the asked question alone."""
        row = answering.benchmark(1, 0).row(0, named=True)
        assert (answer.query_of(row, True), answer.query_of(row, False)) == (
            "I am in a cave (a0). What is a0?",
            "What is a0?",
        )

    def test_empty(self) -> None:
        """An empty question is an error naming the question."""
        with pytest.raises(ValueError, match="'a0'.*asked_question"):
            answer.query_of({"id": "a0", "question": "x", "asked_question": " "}, False)


class TestResponseId:
    def test_stable_and_distinct(self) -> None:
        """Same inputs give the same id; another setting gives another."""
        a = answer.response_id("q1", "m", "off", Setting("single", "hybrid", 5))
        assert a == answer.response_id("q1", "m", "off", Setting("single", "hybrid", 5))
        assert a != answer.response_id("q1", "m", "off", Setting("single", "hybrid", 5, scenario=False))
        assert len(a) == 16


class TestContextOf:
    def test_missing_chunk(self) -> None:
        """A chunk id missing from the index is an error naming the question and the chunk."""
        with pytest.raises(ValueError, match="question 'q9'.*'nope' is not in the index"):
            answer.context_of(["c1", "nope"], answering.lookup, "q9")


class TestAnswerCall:
    def test_templates(self) -> None:
        """No retrieval, with retrieval and the temporal variant use their J.2 templates."""
        assert answer.answer_call(Setting("no_rag"), "Q?", None) == Call("answer_no_context", {"question": "Q?"})
        assert answer.answer_call(Setting("single", "hybrid", 5), "Q?", "C").prompt == "answer_with_context"
        temporal = answer.answer_call(Setting("single", "hybrid", 5, prompt_variant="temporal"), "Q?", "C")
        assert (temporal.prompt, dict(temporal.fields)) == (
            "answer_with_context_temporal",
            {"context": "C", "question": "Q?"},
        )

    def test_needs_context(self) -> None:
        """A retrieval setting without a context is an error."""
        with pytest.raises(ValueError, match="needs a context"):
            answer.answer_call(Setting("single", "hybrid", 5), "Q?", None)


class TestAnswerSetting:
    def test_no_rag(self) -> None:
        """Without retrieval the retriever is never called and no chunk is recorded."""
        search, ask = answering.FakeSearch(), answering.FakeAsk()
        out = answer.answer_setting(
            answering.benchmark(1, 1), Setting("no_rag"), ask=ask, search=search, lookup=answering.lookup
        )
        assert (search.calls, [a.hits for a in out]) == ([], [[], []])
        assert [c.prompt for c in ask.calls] == ["answer_no_context"] * 2

    def test_single_no_scenario(self) -> None:
        """Without the scenario, the bare question is both the query and the model input."""
        search, ask = answering.FakeSearch(), answering.FakeAsk()
        setting = Setting("single", "bm25", 2, scenario=False)
        out = answer.answer_setting(answering.benchmark(1, 0), setting, ask=ask, search=search, lookup=answering.lookup)
        assert search.calls == [(["What is a0?"], "bm25", 2)]
        assert ask.calls[0].fields["question"] == "What is a0?"
        assert "[1] Page 1" in ask.calls[0].fields["context"] and "[3]" not in ask.calls[0].fields["context"]
        assert [h.chunk_id for h in out[0].hits] == ["c1", "c2"]

    def test_iterative(self) -> None:
        """Iterative RAG reflects on the first k chunks, retrieves more, and answers with all."""
        question = "I am in a cave (a0). What is a0?"
        search = answering.FakeSearch({question: ["c1", "c2"], "more?": ["c1", "c5", "c6"]})
        ask = answering.FakeAsk('{"assessment": "Insufficient", "follow_up_questions": ["more?"]}')
        (out,) = answer.answer_setting(
            answering.benchmark(1, 0),
            Setting("iterative", "hybrid", 2),
            ask=ask,
            search=search,
            lookup=answering.lookup,
            max_rounds=1,
        )
        assert [c.prompt for c in ask.calls] == ["reflect", "answer_with_context"]
        assert [h.chunk_id for h in out.hits] == ["c1", "c2", "c5", "c6"]
        assert out.hits[0].ranks == {"bm25": 1} and out.hits[2].ranks == {}
        assert out.n_rounds == 2 and json.loads(out.rounds or "")[1]["queries"] == ["more?"]

    def test_missing_chunk(self) -> None:
        """A retrieved chunk missing from the index stops the setting with the question named."""
        with pytest.raises(ValueError, match="question 'a0'"):
            answer.answer_setting(
                answering.benchmark(1, 0),
                Setting("single", "hybrid", 2),
                ask=answering.FakeAsk(),
                search=answering.FakeSearch(default=["ghost"]),
                lookup=answering.lookup,
            )


class TestRowsOf:
    def test_row(self) -> None:
        """A reply becomes one row with its key, flags and chunk ranks."""
        a = answer.Answered(
            "a0",
            "Q?",
            Reply("", thinking="hm", finish_reason="length", budget_exhausted=True, cache_key="k"),
            [Hit("c1", ranks={"bm25": 1})],
        )
        (row,) = answer.rows_of(
            [a], model="m", thinking="on", setting=Setting("single", "hybrid", 5), answerable={"a0": True}
        )
        assert (row["budget_exhausted"], row["thinking_trace"], row["retrieved_chunk_ids"]) == (True, "hm", ["c1"])
        assert json.loads(row["component_ranks"]) == [{"bm25": 1}] and row["response"] == ""


class TestResponsesFrame:
    def test_schema_and_duplicates(self) -> None:
        """Rows get the fixed schema; the same response twice is an error."""
        a = answer.Answered("a0", "Q?", Reply("x"))
        rows = answer.rows_of([a], model="m", thinking="off", setting=Setting("no_rag"), answerable={"a0": True})
        frame = answer.responses_frame(rows)
        assert frame.schema == pl.Schema(answer.SCHEMA) and frame["k"].to_list() == [0]
        with pytest.raises(ValueError, match="duplicate response"):
            answer.responses_frame(rows + rows)
