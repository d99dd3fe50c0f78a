"""Tests for declinecraft.evaluation.answer: the settings grid, prompts, and answering with scripted fakes."""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl
import pytest

from declinecraft.core.config import AnswerParams
from declinecraft.evaluation import answer, answer_stage, context
from declinecraft.evaluation.answer import Setting
from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.retrieval.fusion import Hit

CHUNKS = {
    f"c{i}": Chunk(f"c{i}", f"Page {i}", f"https://wiki/Page_{i}", f"[Page: Page {i}]\ntext {i}") for i in range(1, 10)
}


def benchmark(n_ans: int = 2, n_unans: int = 2) -> pl.DataFrame:
    """A tiny benchmark: answerable ids a0.., unanswerable u0.., each with a scenario."""
    rows = []
    for half, n, prefix in ((True, n_ans, "a"), (False, n_unans, "u")):
        for i in range(n):
            qid = f"{prefix}{i}"
            rows.append(
                {
                    "id": qid,
                    "answerable": half,
                    "scenario": f"I am in a cave ({qid}).",
                    "asked_question": f"What is {qid}?",
                    "question": f"I am in a cave ({qid}). What is {qid}?",
                    "target_chunk_id": "c1" if half else "post1",
                    "scenario_chunk_ids": ["c2", "c3"],
                }
            )
    return pl.DataFrame(rows)


class FakeSearch:
    """Ranked lists by query prefix; every chunk gets bm25 rank = position."""

    def __init__(
        self, table: dict[str, list[str]] | None = None, default: Sequence[str] = ("c1", "c2", "c3", "c4")
    ) -> None:
        self.table, self.default, self.calls = table or {}, list(default), []

    def __call__(self, queries: Sequence[str], pipeline: str, k: int) -> list[list[Hit]]:
        self.calls.append((list(queries), pipeline, k))
        return [
            [Hit(c, ranks={"bm25": i}) for i, c in enumerate(self.table.get(q, self.default)[:k], start=1)]
            for q in queries
        ]


def lookup(ids: Sequence[str]) -> list[Chunk]:
    """The chunk table; an unknown id raises KeyError like Retriever.chunks."""
    out = []
    for cid in ids:
        if cid not in CHUNKS:
            raise KeyError(f"chunk {cid!r} is not in the index at /idx")
        out.append(CHUNKS[cid])
    return out


class FakeAsk:
    """A model: reflection calls get ``reflect`` (str or callable), answer calls echo their prompt name."""

    def __init__(self, reflect: str = '{"assessment": "Sufficient"}') -> None:
        self.reflect, self.calls = reflect, []

    def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.calls.extend(calls)
        return [
            Reply(self.reflect if c.prompt == "reflect" else f"answer via {c.prompt}", cache_key=f"k{i}")
            for i, c in enumerate(calls)
        ]


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
        assert answer.select_questions(benchmark(3, 2), 0, 0)["id"].to_list() == ["a0", "a1", "a2", "u0", "u1"]

    def test_keeps_share(self) -> None:
        """6 of 12 (8 answerable, 4 unanswerable) keeps 4 and 2, deterministically for a seed."""
        frame = benchmark(8, 4)
        got = answer.select_questions(frame, 6, 0)
        assert (int(got["answerable"].sum()), got.height) == (4, 6)
        assert got["id"].to_list() == answer.select_questions(frame.reverse(), 6, 0)["id"].to_list()

    def test_both_halves(self) -> None:
        """A small limit still keeps one question of each half."""
        got = answer.select_questions(benchmark(9, 1), 2, 3)
        assert sorted(got["answerable"].to_list()) == [False, True]


class TestQueryOf:
    def test_scenario(self) -> None:
        """With the scenario the query is scenario + question; without, the asked question alone."""
        row = benchmark(1, 0).row(0, named=True)
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


class TestFormatContext:
    def test_title_and_url(self) -> None:
        """Each chunk is numbered with its page title and URL, then its text."""
        text = context.format_context([CHUNKS["c1"], CHUNKS["c2"]])
        assert (
            text
            == "[1] Page 1 (https://wiki/Page_1)\n[Page: Page 1]\ntext 1\n\n[2] Page 2 (https://wiki/Page_2)\n[Page: Page 2]\ntext 2"
        )


class TestContextOf:
    def test_missing_chunk(self) -> None:
        """A chunk id missing from the index is an error naming the question and the chunk."""
        with pytest.raises(ValueError, match="question 'q9'.*'nope' is not in the index"):
            answer.context_of(["c1", "nope"], lookup, "q9")


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
        search, ask = FakeSearch(), FakeAsk()
        out = answer.answer_setting(benchmark(1, 1), Setting("no_rag"), ask=ask, search=search, lookup=lookup)
        assert (search.calls, [a.hits for a in out]) == ([], [[], []])
        assert [c.prompt for c in ask.calls] == ["answer_no_context"] * 2

    def test_single_no_scenario(self) -> None:
        """Without the scenario, the bare question is both the query and the model input."""
        search, ask = FakeSearch(), FakeAsk()
        setting = Setting("single", "bm25", 2, scenario=False)
        out = answer.answer_setting(benchmark(1, 0), setting, ask=ask, search=search, lookup=lookup)
        assert search.calls == [(["What is a0?"], "bm25", 2)]
        assert ask.calls[0].fields["question"] == "What is a0?"
        assert "[1] Page 1" in ask.calls[0].fields["context"] and "[3]" not in ask.calls[0].fields["context"]
        assert [h.chunk_id for h in out[0].hits] == ["c1", "c2"]

    def test_iterative(self) -> None:
        """Iterative RAG reflects on the first k chunks, retrieves more, and answers with all."""
        question = "I am in a cave (a0). What is a0?"
        search = FakeSearch({question: ["c1", "c2"], "more?": ["c1", "c5", "c6"]})
        ask = FakeAsk('{"assessment": "Insufficient", "follow_up_questions": ["more?"]}')
        (out,) = answer.answer_setting(
            benchmark(1, 0), Setting("iterative", "hybrid", 2), ask=ask, search=search, lookup=lookup, max_rounds=1
        )
        assert [c.prompt for c in ask.calls] == ["reflect", "answer_with_context"]
        assert [h.chunk_id for h in out.hits] == ["c1", "c2", "c5", "c6"]
        assert out.hits[0].ranks == {"bm25": 1} and out.hits[2].ranks == {}
        assert out.n_rounds == 2 and json.loads(out.rounds or "")[1]["queries"] == ["more?"]

    def test_missing_chunk(self) -> None:
        """A retrieved chunk missing from the index stops the setting with the question named."""
        with pytest.raises(ValueError, match="question 'a0'"):
            answer.answer_setting(
                benchmark(1, 0),
                Setting("single", "hybrid", 2),
                ask=FakeAsk(),
                search=FakeSearch(default=["ghost"]),
                lookup=lookup,
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


class FakeModels:
    """The model layer: every model answers like :class:`FakeAsk`; counts server releases."""

    def __init__(self, reflect: str = '{"assessment": "Sufficient"}') -> None:
        self.asks: dict[tuple[str, str | None], FakeAsk] = {}
        self.reflect, self.released = reflect, 0

    def thinking_switch(self, model_id: str) -> str:
        return "switchable" if model_id == "think" else "none"

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> FakeAsk:
        return self.asks.setdefault((model_id, thinking), FakeAsk(self.reflect))

    def release(self) -> None:
        self.released += 1


def write_run(project, answer_block: str):  # noqa: ANN001, ANN201
    """A run whose benchmark is :func:`benchmark` (4 questions) and whose answer block is given."""
    from declinecraft.core import config

    (project / "params" / "t.yaml").write_text(f"base: default\nanswer:\n{answer_block}")
    cfg = config.load(project / "params" / "t.yaml")
    folder = cfg.stage_dir("verify")
    folder.mkdir(parents=True)
    benchmark().write_parquet(folder / "benchmark.parquet")
    return cfg


class TestRunStage:
    def test_writes_outputs(self, project) -> None:  # noqa: ANN001
        """Every model x thinking x setting answers every question; outputs are written and complete."""
        cfg = write_run(
            project, "  models: [m1, think]\n  thinking: ['off', 'on']\n  k: 2\n  max_rounds: 1\n  no_scenario: true\n"
        )
        models = FakeModels()
        out = answer_stage.run(cfg, models=models, search=FakeSearch(), lookup=lookup)
        frame = pl.read_parquet(cfg.stage_dir("answer") / "responses.parquet")
        # (m1 off + think off/on) x (no_rag, single, iterative, single no-scenario) x 4 questions
        assert frame.height == 3 * 4 * 4 == out.responses.height
        assert frame.group_by("model", "thinking").len().height == 3 and models.released == 3  # retrieval + 2 models
        diag = pl.read_parquet(cfg.stage_dir("answer") / "retrieval.parquet")
        assert set(diag["scenario"]) == {True, False} and set(diag["metric"]) == {"hit_at_k", "scenario_overlap"}
        assert (cfg.stage_dir("answer") / "manifest.json").is_file()

    @pytest.mark.parametrize("thinking", [("off",), ("off", "prompted")])
    def test_paper_says_so(self, thinking: tuple[str, ...]) -> None:
        """A prompted run's captions and notes say 'prompted reasoning, not a native thinking switch'."""
        import dataclasses

        from declinecraft.core import config
        from declinecraft.paper import run_settings

        cfg = config.load(config.paths.find_root() / "params" / "default.yaml")
        answer_block = AnswerParams(models=("qwen2.5-coder-0.5b",), thinking=thinking)
        out = run_settings.config_macros(dataclasses.replace(cfg, blocks=cfg.blocks | {"answer": answer_block}), {})
        macros = dict(zip(out["macro"], out["text"], strict=True))
        words = "prompted reasoning, not a native thinking switch"
        assert (words in macros["ThinkingCaption"], words in macros["ThinkingNote"]) == (len(thinking) == 2,) * 2
        assert "Qwen2.5-Coder-0.5B" in macros["ThinkingNote"] or len(thinking) == 1

    def test_prompted_rows(self, project) -> None:  # noqa: ANN001
        """thinking: prompted asks a model without a switch in mode 'prompt' and stores it as 'on'."""
        cfg = write_run(project, "  models: [m1]\n  thinking: ['off', 'prompted']\n  conditions: [single]\n")
        models = FakeModels()
        out = answer_stage.run(cfg, models=models, search=FakeSearch(), lookup=lookup)
        assert set(models.asks) == {("m1", "off"), ("m1", "prompt")}
        assert out.responses.group_by("thinking").len().sort("thinking")["len"].to_list() == [4, 4]
        assert set(out.responses["thinking"]) == {"off", "on"} and out.responses["response_id"].n_unique() == 8

    def test_generator_comparison(self, project) -> None:  # noqa: ANN001
        """A run comparing generators also answers every generator's accepted unanswerable
        questions once (first model, single-shot, main pipeline and k), ids <generator>/<id>."""
        cfg = write_run(
            project, "  models: [m1, m2]\n  conditions: [no_rag]\n  k: 2\ngenerate:\n  generators: [smollm2-135m]\n"
        )
        rows = benchmark(1, 2).with_columns(fate=pl.lit("kept"), index=pl.int_range(3))
        candidates = pl.concat(
            [
                rows.with_columns(generator=pl.lit("qwen2.5-coder-1.5b")),
                rows.with_columns(generator=pl.lit("smollm2-135m"), fate=pl.Series(["kept", "kept", "rejected"])),
            ]
        )
        candidates.write_parquet(cfg.stage_dir("verify") / "comparison_candidates.parquet")
        models = FakeModels()
        out = answer_stage.run(cfg, models=models, search=FakeSearch(), lookup=lookup)
        compared = pl.read_parquet(cfg.stage_dir("answer") / "comparison_responses.parquet")
        assert compared["question_id"].to_list() == [
            "qwen2.5-coder-1.5b/u0",
            "qwen2.5-coder-1.5b/u1",
            "smollm2-135m/u0",
        ]
        assert set(compared["model"]) == {"m1"} and set(compared["condition"]) == {"single"}
        assert (
            set(compared["pipeline"]) == {"hybrid"} and set(compared["k"]) == {2} and not compared["answerable"].any()
        )
        assert out.manifest["comparison_responses"] == 3 and set(out.responses["condition"]) == {"no_rag"}

    def test_limit_questions(self, project) -> None:  # noqa: ANN001
        """limit_questions answers a seeded subset keeping both halves."""
        cfg = write_run(project, "  models: [m1]\n  conditions: [no_rag]\n  limit_questions: 2\n")
        out = answer_stage.run(cfg, models=FakeModels(), search=FakeSearch(), lookup=lookup)
        assert sorted(out.responses["answerable"].to_list()) == [False, True]

    def test_chunk_missing_from_index(self, project) -> None:  # noqa: ANN001
        """A benchmark chunk missing from the index stops the stage before any model call."""
        cfg = write_run(project, "  models: [m1]\n")
        models = FakeModels()

        def partial(ids: Sequence[str]) -> list[Chunk]:
            return lookup([i for i in ids if i != "c1"] + (["gone"] if "c1" in ids else []))

        with pytest.raises(ValueError, match="question 'a0': chunk 'gone' is not in the index"):
            answer_stage.run(cfg, models=models, search=FakeSearch(), lookup=partial)
        assert models.asks == {}

    def test_missing_benchmark(self, project) -> None:  # noqa: ANN001
        """Without the verify stage's benchmark the error names the file."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="benchmark.parquet"):
            answer_stage.run(cfg, models=FakeModels(), search=FakeSearch(), lookup=lookup)
