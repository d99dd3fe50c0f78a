"""Tests for declinecraft.evaluation.answer_stage: stage 05 and its helpers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import artifacts, config
from declinecraft.core.config import AnswerParams
from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.evaluation import answer_stage
from declinecraft.evaluation.answer import Setting
from declinecraft.evaluation.context import Chunk
from declinecraft.llm import resources
from declinecraft.llm.pool import ModelPool
from tests.support import answering, fake_openai, projects


class TestReadBenchmark:
    def test_missing_column(self, project) -> None:  # noqa: ANN001
        """A benchmark without a needed column is an error naming the file and the column."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        cfg.stage_dir("verify").mkdir(parents=True)
        answering.benchmark().drop("asked_question").write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        with pytest.raises(ValueError, match="benchmark.parquet: missing column 'asked_question'"):
            artifacts.read_benchmark(cfg)


class TestCheckChunks:
    def test_ok(self) -> None:
        """Known target and scenario chunks pass; unanswerable targets (C_post) are not looked up."""
        answer_stage.check_chunks(answering.benchmark(1, 1), answering.lookup)

    def test_missing(self) -> None:
        """An unknown scenario chunk names the question and the chunk."""
        frame = answering.benchmark(0, 1).with_columns(scenario_chunk_ids=pl.Series([["c2", "ghost"]]))
        with pytest.raises(ValueError, match="question 'u0': chunk 'ghost'"):
            answer_stage.check_chunks(frame, answering.lookup)


class TestMemoSearch:
    def test_each_query_once(self) -> None:
        """A query seen before (same pipeline and k) is not searched again; order is kept."""
        inner = answering.FakeSearch({"a": ["c1"], "b": ["c2"]})
        memo = answer_stage.MemoSearch(inner)
        memo(["a", "b"], "hybrid", 1)
        got = memo(["b", "a", "c"], "hybrid", 1)
        assert [h[0].chunk_id for h in got] == ["c2", "c1", "c1"]
        assert inner.calls == [(["a", "b"], "hybrid", 1), (["c"], "hybrid", 1)]


class TestPrefetch:
    def test_retrieval_settings_only(self) -> None:
        """Each retrieval setting's queries are searched once; no retrieval searches nothing."""
        inner = answering.FakeSearch()
        memo = answer_stage.MemoSearch(inner)
        settings = [
            Setting("no_rag"),
            Setting("single", "hybrid", 5),
            Setting("iterative", "hybrid", 5),
            Setting("single", "hybrid", 5, scenario=False),
        ]
        answer_stage.prefetch(answering.benchmark(1, 1), settings, memo)
        assert [(len(q), p, k) for q, p, k in inner.calls] == [(2, "hybrid", 5), (2, "hybrid", 5)]


class TestRetrievedFrame:
    def test_rows(self) -> None:
        """One row per question and retrieval setting, with the ranked chunk ids."""
        memo = answer_stage.MemoSearch(answering.FakeSearch())
        settings = [Setting("single", "bm25", 2)]
        answer_stage.prefetch(answering.benchmark(1, 1), settings, memo)
        frame = answer_stage.retrieved_frame(answering.benchmark(1, 1), memo, settings)
        assert frame["retrieved_ids"].to_list() == [["c1", "c2"], ["c1", "c2"]] and set(frame["pipeline"]) == {"bm25"}


class TestRetrievalDiagnostics:
    def test_rates(self) -> None:
        """Hit@k on answerable and scenario overlap on unanswerable questions, per pipeline."""
        frame = pl.DataFrame(
            {
                "question_id": ["a0", "a1", "u0", "u1"],
                "answerable": [True, True, False, False],
                "pipeline": ["hybrid"] * 4,
                "k": [5] * 4,
                "scenario": [True] * 4,
                "target_chunk_id": ["c1", "c9", "p1", "p2"],
                "scenario_chunk_ids": [["c2"], ["c2"], ["c2"], ["c7"]],
                "retrieved_ids": [["c1", "c2"], ["c2"], ["c3", "c2"], ["c1"]],
            }
        )
        got = {
            r["metric"]: (r["hits"], r["n"]) for r in answer_stage.retrieval_diagnostics(frame).iter_rows(named=True)
        }
        assert got == {"hit_at_k": (1, 2), "scenario_overlap": (1, 2)}

    def test_depth_per_k(self) -> None:
        """Each k is scored at its own depth: a target at rank 7 counts at k=10, not at k=5."""
        ranked = [f"c{i}" for i in range(10)]
        frame = pl.DataFrame(
            {
                "question_id": ["a0", "a0"],
                "answerable": [True, True],
                "pipeline": ["hybrid"] * 2,
                "k": [5, 10],
                "scenario": [True] * 2,
                "target_chunk_id": ["c6", "c6"],
                "scenario_chunk_ids": [["x"], ["x"]],
                "retrieved_ids": [ranked[:5], ranked],
            }
        )
        hits = answer_stage.retrieval_diagnostics(frame).filter(pl.col("metric") == "hit_at_k").sort("k")
        assert hits.select("k", "depth", "hits").rows() == [(5, 5, 0), (10, 10, 1)]

    def test_no_rag_only_keeps_the_columns(self) -> None:
        """A run without retrieval writes an empty table that downstream filters can still read."""
        memo = answer_stage.MemoSearch(answering.FakeSearch())
        settings = [Setting("no_rag", "hybrid", 5)]
        retrieved = answer_stage.retrieved_frame(answering.benchmark(1, 1), memo, settings)
        table = answer_stage.retrieval_diagnostics(retrieved)
        assert table.is_empty() and table.schema == pl.Schema(answer_stage.DIAGNOSTICS_SCHEMA)
        assert table.filter(pl.col("scenario") & (pl.col("metric") == "hit_at_k")).is_empty()


class TestAnswerAll:
    def test_release_per_model(self) -> None:
        """Each model's server is released after all its settings (one server at a time)."""

        from declinecraft.core.config import AnswerParams

        models = answering.FakeModels()
        frame, timings = answer_stage.answer_all(
            answering.benchmark(1, 1),
            AnswerParams(models=("m1", "m2"), conditions=("no_rag",)),
            models=models,
            search=answering.FakeSearch(),
            lookup=answering.lookup,
        )
        assert (frame.height, models.released, len(timings)) == (4, 2, 2)


class TestAnswerAllAtOnce:
    def test_models_in_flight_together(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Two models on separate endpoints answer at the same time (the fake servers' request spans
        overlap), and the rows are those of the same run made one model after another."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(project / ".cache"))
        shutil.copytree(projects.REPO / "params" / "prompts", project / "params" / "prompts")
        servers = [fake_openai.start(latency=0.2), fake_openai.start(latency=0.2)]
        entries = {
            m: {"backend": "openai", "served_name": m, "base_url": s.base_url, "max_concurrency": 2}
            for m, s in zip("ab", servers, strict=True)
        }
        (project / "params" / "models.yaml").write_text(json.dumps({"models": entries}))
        params = AnswerParams(models=("a", "b"), conditions=("no_rag",))
        cfg = config.load(project / "params" / "default.yaml")

        def answer_all() -> pl.DataFrame:
            with ModelPool(cfg) as pool:
                search = answering.FakeSearch()
                return answer_stage.answer_all(
                    answering.benchmark(2, 2), params, models=pool, search=search, lookup=answering.lookup
                )[0]

        try:
            together = answer_all()
            spans = [s.stats()["spans"] for s in servers]
            monkeypatch.setattr(resources, "can_overlap", lambda needs, has: False)
            in_turn = answer_all()  # from the cache, one model after another
        finally:
            for server in servers:
                server.stop()
        assert any(a0 < b1 and b0 < a1 for a0, a1 in spans[0] for b0, b1 in spans[1])
        assert together["model"].to_list() == ["a"] * 4 + ["b"] * 4
        assert together.equals(in_turn)


def write_run(project, answer_block: str):  # noqa: ANN001, ANN201
    """A run whose benchmark is :func:`benchmark` (4 questions) and whose answer block is given."""
    from declinecraft.core import config

    (project / "params" / "t.yaml").write_text(f"base: default\nanswer:\n{answer_block}")
    cfg = config.load(project / "params" / "t.yaml")
    folder = cfg.stage_dir("verify")
    folder.mkdir(parents=True)
    answering.benchmark().write_parquet(folder / "benchmark.parquet")
    return cfg


class TestRunStage:
    def test_writes_outputs(self, project) -> None:  # noqa: ANN001
        """Every model x thinking x setting answers every question; outputs are written and complete."""
        cfg = write_run(
            project, "  models: [m1, think]\n  thinking: ['off', 'on']\n  k: 2\n  max_rounds: 1\n  no_scenario: true\n"
        )
        models = answering.FakeModels()
        out = answer_stage.run(cfg, models=models, search=answering.FakeSearch(), lookup=answering.lookup)
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

        from declinecraft.core import config
        from declinecraft.paper import run_settings

        cfg = config.load(config.paths.find_root() / "params" / "default.yaml")
        answer_block = AnswerParams(models=("qwen2.5-coder-0.5b",), thinking=thinking)
        out = run_settings.config_macros(cfg.with_blocks(answer=answer_block), {})
        macros = dict(zip(out["macro"], out["text"], strict=True))
        words = "prompted reasoning, not a native thinking switch"
        assert (words in macros["ThinkingCaption"], words in macros["ThinkingNote"]) == (len(thinking) == 2,) * 2
        assert "Qwen2.5-Coder-0.5B" in macros["ThinkingNote"] or len(thinking) == 1

    def test_prompted_rows(self, project) -> None:  # noqa: ANN001
        """thinking: prompted asks a model without a switch in mode 'prompt' and stores it as 'on'."""
        cfg = write_run(project, "  models: [m1]\n  thinking: ['off', 'prompted']\n  conditions: [single]\n")
        models = answering.FakeModels()
        out = answer_stage.run(cfg, models=models, search=answering.FakeSearch(), lookup=answering.lookup)
        assert set(models.asks) == {("m1", "off"), ("m1", "prompt")}
        assert out.responses.group_by("thinking").len().sort("thinking")["len"].to_list() == [4, 4]
        assert set(out.responses["thinking"]) == {"off", "on"} and out.responses["response_id"].n_unique() == 8

    def test_generator_comparison(self, project) -> None:  # noqa: ANN001
        """A run comparing generators also answers every generator's accepted unanswerable
        questions once (first model, single-shot, main pipeline and k), ids <generator>/<id>."""
        cfg = write_run(
            project, "  models: [m1, m2]\n  conditions: [no_rag]\n  k: 2\ngenerate:\n  generators: [smollm2-135m]\n"
        )
        rows = answering.benchmark(1, 2).with_columns(fate=pl.lit("kept"), index=pl.int_range(3))
        candidates = pl.concat(
            [
                rows.with_columns(generator=pl.lit("qwen2.5-coder-1.5b")),
                rows.with_columns(generator=pl.lit("smollm2-135m"), fate=pl.Series(["kept", "kept", "rejected"])),
            ]
        )
        candidates.write_parquet(cfg.stage_dir("verify") / "comparison_candidates.parquet")
        models = answering.FakeModels()
        out = answer_stage.run(cfg, models=models, search=answering.FakeSearch(), lookup=answering.lookup)
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
        out = answer_stage.run(
            cfg, models=answering.FakeModels(), search=answering.FakeSearch(), lookup=answering.lookup
        )
        assert sorted(out.responses["answerable"].to_list()) == [False, True]

    def test_chunk_missing_from_index(self, project) -> None:  # noqa: ANN001
        """A benchmark chunk missing from the index stops the stage before any model call."""
        cfg = write_run(project, "  models: [m1]\n")
        models = answering.FakeModels()

        def partial(ids: Sequence[str]) -> list[Chunk]:
            return answering.lookup([i for i in ids if i != "c1"] + (["gone"] if "c1" in ids else []))

        with pytest.raises(ValueError, match="question 'a0': chunk 'gone' is not in the index"):
            answer_stage.run(cfg, models=models, search=answering.FakeSearch(), lookup=partial)
        assert models.asks == {}

    def test_missing_benchmark(self, project) -> None:  # noqa: ANN001
        """Without the verify stage's benchmark the error names the file."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="benchmark.parquet"):
            answer_stage.run(cfg, models=answering.FakeModels(), search=answering.FakeSearch(), lookup=answering.lookup)


class TestRetrieverAdapters:
    def test_models_placed_as_in_a_server_stage(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The answer stage opens its index with ``llm.retrieval_device`` as a stage that starts
        model servers (``auto``: the CPU, whatever GPUs torch sees)."""
        opened: list[dict[str, object]] = []
        monkeypatch.setattr(answer_stage.retrieve.Retriever, "open", lambda folder, **kw: opened.append(kw))
        answer_stage.retriever_adapters(config.load(project / "params" / "default.yaml"))
        assert [kw["device"] for kw in opened] == [RetrievalDevice("auto", servers=True)]
