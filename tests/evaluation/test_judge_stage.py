"""Tests for declinecraft.evaluation.judge_stage: stage 06 and its helpers."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.core import artifacts, catalogue
from declinecraft.evaluation import answer, answer_stage, comparison, judge, judge_check, judge_stage
from declinecraft.llm.calls import Call
from tests.support import answering, default_run, judging, projects


class TestReferenceQuestions:
    def test_answerable_and_leakage(self) -> None:
        """Answerable questions, and unanswerable ones answered without retrieval with the scenario."""
        bench = pl.DataFrame({"id": ["a0", "u0", "u1"], "answerable": [True, False, False]})
        responses = pl.DataFrame(
            {
                "question_id": ["a0", "u0", "u1"],
                "answerable": [True, False, False],
                "condition": ["single", "no_rag", "single"],
                "scenario": [True, True, True],
                "prompt_variant": ["default"] * 3,
            }
        )
        assert judge_stage.reference_questions(bench, responses)["id"].to_list() == ["a0", "u0"]


class TestReadPages:
    def test_missing(self, project) -> None:  # noqa: ANN001
        """Missing corpus pages are an error naming the file."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="pages_pre.parquet"):
            artifacts.read_pages(cfg)


class TestReadResponses:
    def test_missing(self, project) -> None:  # noqa: ANN001
        """Missing responses are an error naming the file and the stage to run."""
        from declinecraft.core import config

        cfg = config.load(project / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match="responses.parquet: run 05_answer"):
            artifacts.read_responses(cfg)


class JudgeModels:
    """The model layer for stage 06: response judge, oracle and accuracy judges by model id."""

    def __init__(self) -> None:
        self.used: list[str] = []

    def asker(
        self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0
    ) -> judging.ScriptedJudge:
        def script(call: Call) -> str:
            self.used.append(model_id)
            if call.prompt == "judge_response":
                return judge.rule_label(call.fields["answer"]) if model_id != "mute" else "?"
            if call.prompt.startswith("oracle"):
                return f"reference for {call.fields['question']}"
            return "1.0" if model_id == "j1" else "0.5"

        return judging.ScriptedJudge(script)

    def release(self) -> None:
        pass


class TestRunStage:
    def test_writes_outputs(self, project) -> None:  # noqa: ANN001
        """Stage 06 writes every declared output with the panel mean and the leakage audit."""
        from declinecraft.core import config

        (project / "params" / "t.yaml").write_text(
            "base: default\njudge:\n  response_judge: rj\n  oracle: o\n  accuracy_judges: [j1, j2]\n"
            "  second_judges: [mute]\n  second_judge_sample: 0\n"
        )
        cfg = config.load(project / "params" / "t.yaml")
        bench = pl.DataFrame(
            [{**judging.QUESTION}, {**judging.QUESTION, "id": "u0", "answerable": False, "target_title": "Ghast"}]
        )
        for block, name, frame in (
            ("verify", "benchmark", bench.with_columns(asked_question=pl.lit("?"), target_chunk_id=pl.lit("c1"))),
            (
                "answer",
                "responses",
                judging.labelled()
                .head(4)
                .with_columns(
                    question_id=pl.Series(["a0", "a0", "u0", "u0"]),
                    condition=pl.Series(["single", "single", "no_rag", "no_rag"]),
                    pipeline=pl.Series(["hybrid", "hybrid", "none", "none"]),
                ),
            ),
        ):
            cfg.stage_dir(block).mkdir(parents=True, exist_ok=True)
            frame.write_parquet(cfg.stage_dir(block) / f"{name}.parquet")
        # Table 9's comparison: g1's question abstained on, g2's denied, g2's second one cut by the budget.
        compared = (
            judging.labelled()
            .select(pl.exclude("question_id", "response_id"))
            .head(4)
            .with_columns(
                response_id=pl.Series(["c1", "c2", "c3", "c4"]),
                question_id=pl.Series(["g1/u0", "g2/u0", "g2/u1", "g2/u2"]),
                response=pl.Series(["I do not know the answer.", "It does not exist.", "", "It does not exist."]),
                budget_exhausted=pl.Series([False, False, True, False]),
                answerable=pl.lit(False),
            )
        )
        compared.write_parquet(cfg.stage_dir("answer") / "comparison_responses.parquet")
        models = JudgeModels()
        pages = {True: {"Horse": "horse page"}, False: {"Ghast": "ghast page"}}
        out = judge_stage.run(cfg, models=models, lookup=judging.lookup, pages=pages)
        folder = cfg.stage_dir("judge")
        assert pl.read_parquet(folder / "comparison_labels.parquet")["label"].to_list() == [
            "ABSTAIN",
            "DENY",
            None,
            "DENY",
        ]
        car = comparison.read(cfg)
        assert car.select("generator", "car", "car_k", "car_n", "car_unlabelled").rows() == [
            ("g1", 1.0, 1, 1, 0),
            ("g2", 0.0, 0, 2, 0),
        ]
        assert out.manifest["comparison_labels"] == 4
        for name in (
            "labels.parquet",
            "references.parquet",
            "scores.parquet",
            "judged.parquet",
            "results.csv",
            "summary.parquet",
            "leakage.csv",
            "agreement.csv",
            "manifest.json",
        ):
            assert (folder / name).is_file(), name
        judged = pl.read_parquet(folder / "judged.parquet").sort("response_id")
        # r1 ANSWER (1.0 + 0.5) / 2; r2 ABSTAIN 0; r3 DENY on the leakage audit 0; r4 budget exhausted 0
        assert judged["accuracy"].to_list() == [0.75, 0.0, 0.0, 0.0]
        assert judged["reference"].to_list()[0] == "reference for I ride. How much armor?"
        labels = pl.read_parquet(folder / "labels.parquet")
        assert labels.filter(pl.col("judge") == "mute")["unparsable"].to_list() == [True, True, True]
        leak = pl.read_csv(folder / "leakage.csv")
        assert leak.select("n", "leakage_accuracy").row(0) == (2, 0.0)
        assert out.manifest["label_unparsable"] == 0 and out.references.height == 2
        # The check set, once per accuracy judge: j1 always says 1.0, so it agrees only on the
        # correct items; j2 always says 0.5, only on the partial ones.
        check = pl.read_parquet(folder / "judge_check.parquet")
        read = judge_check.read_check_set(cfg.resolve(cfg.judge.check_file))
        items = judge_check.sample_check_set(read, cfg.judge.check_items, cfg.seed)
        assert check.height == 2 * items.height and out.manifest["check_calls"] == check.height
        assert out.manifest["check_agreement"] == {
            "j1": f"{(items['kind'] == 'correct').sum()} of {items.height}",
            "j2": f"{(items['kind'] == 'partial').sum()} of {items.height}",
        }


def test_default_run() -> None:
    """Stages 05 and 06 of the default run (`make all`): every declared output written; one response
    per question and setting of the params, each judged; every label in the label set, null exactly
    on the responses flagged (unparsable, judge error) or cut by the budget; references exactly for
    the questions that need one; the summary counting every response; and every cache key of the
    tables in the stage's call ledger. That a second run replays every call from the cache, byte
    for byte, is tests/runtime/test_bundle.py::test_replay_into_second_checkout (a strict replay of
    the scripted run, which runs 05 and 06); that a cached call starts no local server is
    tests/llm/test_client.py::TestConnect::test_server_started_lazily."""
    cfg = default_run.config_or_skip("answer", "judge")
    assert catalogue.missing(cfg, "answer") == [] and catalogue.missing(cfg, "judge") == []
    bench = artifacts.read_benchmark(cfg)
    questions = answer.select_questions(bench, cfg.answer.limit_questions, cfg.seed)
    responses = artifacts.read_responses(cfg)
    switch = default_run.thinking_switch(cfg)
    grid = {
        (m, answer.thinking_label(t), s.condition, s.pipeline, s.k, s.scenario, s.prompt_variant)
        for m in cfg.answer.models
        for t, s in answer.plan(cfg.answer, switch(m), m)
    }
    assert set(responses.select(*answer.KEY).unique().rows()) == grid
    assert responses.height == questions.height * len(grid)
    assert responses.select("question_id", *answer.KEY).is_unique().all()
    assert set(responses["question_id"]) == set(questions["id"])

    judged = pl.read_parquet(cfg.stage_dir("judge") / "judged.parquet")
    assert sorted(judged["response_id"]) == sorted(responses["response_id"])
    assert set(judged["label"].drop_nulls()) <= set(judge.LABELS)
    assert set(judged["rule_label"].drop_nulls()) <= set(judge.LABELS)
    labels = pl.read_parquet(cfg.stage_dir("judge") / "labels.parquet").filter(pl.col("role") == "response_judge")
    assert sorted(labels["response_id"]) == sorted(responses["response_id"])
    if cfg.judge.labels_by_rule:  # the rule's label stands wherever the judge was asked; the judge's is kept
        asked = judged.filter(pl.col("label_source") == "llm").sort("response_id")
        assert asked["label"].to_list() == asked["rule_label"].to_list()
        said = labels.filter((pl.col("source") == "llm") & ~pl.col("reasked"))
        assert said["label"].to_list() == [judge.parse_label(raw) for raw in said["raw_output"]]
    else:
        unlabelled = set(judged.filter(pl.col("label").is_null() & ~pl.col("budget_exhausted"))["response_id"])
        flagged = set(judged.filter(pl.col("label_unparsable") | pl.col("label_error").is_not_null())["response_id"])
        assert unlabelled == flagged
    references = pl.read_parquet(cfg.stage_dir("judge") / "references.parquet")
    assert sorted(references["question_id"]) == sorted(judge_stage.reference_questions(bench, responses)["id"])
    summary = pl.read_parquet(cfg.stage_dir("judge") / "summary.parquet")
    assert set(summary.select(*answer.KEY).rows()) == grid and summary["n_responses"].sum() == judged.height

    answered = set(responses["cache_key"].drop_nulls())
    judged_keys = {
        key
        for name in ("labels", "scores", "references")
        for key in pl.read_parquet(cfg.stage_dir("judge") / f"{name}.parquet")["cache_key"].drop_nulls()
    }
    assert answered and answered <= default_run.llm_keys(cfg, "answer")
    assert judged_keys and judged_keys <= default_run.llm_keys(cfg, "judge")


def test_no_scenario_judged(project) -> None:  # noqa: ANN001
    """The no-scenario ablation (not in the default run) is answered with the question alone and
    judged like the main grid: one labelled row per question, scenario false."""
    from declinecraft.core import config

    (project / "params" / "t.yaml").write_text(
        "base: default\nanswer:\n  models: [m1]\n  conditions: [single]\n  no_scenario: true\n"
    )
    cfg = config.load(project / "params" / "t.yaml")
    projects.write_benchmark(cfg, answering.benchmark(2, 1))
    answer_stage.run(cfg, models=answering.FakeModels(), search=answering.FakeSearch(), lookup=answering.lookup)
    pages = {True: {"Page 1": "page one", "Page 2": "page two"}, False: {"New Mob": "the new mob"}}
    done = judge_stage.run(cfg, models=JudgeModels(), lookup=answering.lookup, pages=pages)
    alone = done.judged.filter(~pl.col("scenario"))
    assert done.judged.height == 2 * 3 and alone.height == 3
    assert alone["query"].to_list() == ["What is a0?", "What is a1?", "What is u0?"]
    assert alone["label"].null_count() == 0


class TestEmptyBenchmark:
    def test_both_stages(self, project) -> None:  # noqa: ANN001
        """A benchmark with no question (nothing survived verification) gives empty outputs, no crash."""
        from declinecraft.core import config

        (project / "params" / "t.yaml").write_text("base: default\nanswer:\n  models: [m1]\n")
        cfg = config.load(project / "params" / "t.yaml")
        cfg.stage_dir("verify").mkdir(parents=True)
        answering.benchmark(1, 0).clear().write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        out = answer_stage.run(
            cfg, models=answering.FakeModels(), search=answering.FakeSearch(), lookup=answering.lookup
        )
        assert out.responses.height == 0
        done = judge_stage.run(cfg, models=JudgeModels(), lookup=judging.lookup, pages={True: {}, False: {}})
        assert done.judged.height == 0 and (cfg.stage_dir("judge") / "results.csv").is_file()
