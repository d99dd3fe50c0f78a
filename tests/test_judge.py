"""Tests for declinecraft.evaluation.judge: labelling, re-asks, references, scoring, and the result tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import polars as pl
import pytest

from declinecraft.evaluation import answer, answer_stage, comparison, judge, judge_stage, metrics
from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.retrieval import stage as index_stage


class ScriptedJudge:
    """A judge whose reply depends on the call: ``script(call) -> text``; records every call."""

    def __init__(self, script: Callable[[Call], str], *, error_on: str | None = None) -> None:
        self.script, self.error_on, self.calls = script, error_on, []

    def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.calls.extend(calls)
        out = []
        for c in calls:
            text = self.script(c)
            err = "HTTP 500" if self.error_on and self.error_on in str(dict(c.fields)) else None
            out.append(Reply("" if err else text, cache_key=f"key-{len(self.calls)}", error=err))
        return out


def responses(rows: list[dict]) -> pl.DataFrame:
    """A responses frame with defaults for the columns the judge does not vary here."""
    base = {
        "model": "m",
        "thinking": "off",
        "condition": "single",
        "pipeline": "hybrid",
        "k": 5,
        "scenario": True,
        "prompt_variant": "default",
        "budget_exhausted": False,
        "error": None,
        "answerable": True,
    }
    return pl.DataFrame([{**base, **r} for r in rows], schema_overrides={"error": pl.String})


def labelled() -> pl.DataFrame:
    """Six responses covering every labelling outcome."""
    return responses(
        [
            {"response_id": "r1", "question_id": "a0", "query": "Q0?", "response": "It has 10 health."},
            {"response_id": "r2", "question_id": "a1", "query": "Q1?", "response": "I do not know the answer."},
            {
                "response_id": "r3",
                "question_id": "u0",
                "query": "Q2?",
                "response": "It does not exist.",
                "answerable": False,
            },
            {
                "response_id": "r4",
                "question_id": "u1",
                "query": "Q3?",
                "response": "",
                "budget_exhausted": True,
                "answerable": False,
            },
            {"response_id": "r5", "question_id": "a2", "query": "Q4?", "response": "   "},
            {
                "response_id": "r6",
                "question_id": "a3",
                "query": "Q5?",
                "response": "",
                "error": "HTTP 400: context too long",
            },
        ]
    )


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


class TestAskParsed:
    def test_reask_once(self) -> None:
        """An unparsable output is re-asked once with the raw reply and the instruction as new turns."""
        ask = ScriptedJudge(lambda c: "ABSTAIN\n\nBecause..." if c.history else "Hmm, hard to say.")
        (v,) = judge.ask_parsed(
            [Call("judge_response", {"question": "q", "answer": "a"})], ask, judge.parse_label, judge.REASK_LABEL
        )
        assert (v.value, v.reasked, v.raw, v.raw_reask) == (
            "ABSTAIN",
            True,
            "Hmm, hard to say.",
            "ABSTAIN\n\nBecause...",
        )
        assert ask.calls[1].history == (("assistant", "Hmm, hard to say."), ("user", judge.REASK_LABEL))

    def test_still_unparsable(self) -> None:
        """Unparsable twice: value None, counted as unparsable, never guessed, no third call."""
        ask = ScriptedJudge(lambda c: "DENY or ABSTAIN")
        (v,) = judge.ask_parsed(
            [Call("judge_response", {"question": "q", "answer": "a"})], ask, judge.parse_label, judge.REASK_LABEL
        )
        assert (v.value, v.unparsable, v.reasked, len(ask.calls)) == (None, True, True, 2)

    def test_failed_call_not_reasked(self) -> None:
        """A failed judge call keeps its error, is not re-asked and is not counted as unparsable."""
        ask = ScriptedJudge(lambda c: "ANSWER", error_on="boom")
        (v,) = judge.ask_parsed(
            [Call("judge_response", {"question": "boom", "answer": "a"})], ask, judge.parse_label, judge.REASK_LABEL
        )
        assert (v.value, v.error, v.unparsable, v.reasked, len(ask.calls)) == (None, "HTTP 500", False, False, 1)

    def test_constrained_reask(self) -> None:
        """With choices, only the re-ask carries them (the first ask is the paper's prompt as is);
        score_responses passes the score scale when asked to constrain."""
        ask = ScriptedJudge(lambda c: "0.5" if c.choices else "1.5")
        (v,) = judge.ask_parsed(
            [Call("judge_accuracy", {})], ask, judge.parse_score, judge.REASK_SCORE, choices=judge.SCORE_CHOICES
        )
        assert (v.value, v.reasked, v.raw, v.raw_reask) == (0.5, True, "1.5", "0.5")
        assert [c.choices for c in ask.calls] == [(), ("0.0", "0.5", "1.0")]

    def test_parsed_first_time(self) -> None:
        """A parsable output is not re-asked."""
        ask = ScriptedJudge(lambda c: "0.5")
        (v,) = judge.ask_parsed([Call("judge_accuracy", {})], ask, judge.parse_score, judge.REASK_SCORE)
        assert (v.value, v.reasked, len(ask.calls)) == (0.5, False, 1)


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
        ask = ScriptedJudge(rule_judge)
        frame = judge.label_responses(labelled(), ask, judge="j")
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
        ask = ScriptedJudge(lambda c: "ANSWER")
        frame = responses([{"response_id": "r", "question_id": "a", "query": "What?", "response": "x" * 50}])
        judge.label_responses(frame, ask, judge="j", truncate_chars=10)
        assert dict(ask.calls[0].fields) == {"question": "What?", "answer": "x" * 10}

    def test_unparsable_counted(self) -> None:
        """A judge that never gives one label leaves the label null and flags it."""
        frame = judge.label_responses(labelled().head(1), ScriptedJudge(lambda c: "no idea"), judge="j")
        assert frame.select("label", "unparsable", "reasked").row(0) == (None, True, True)


class TestSecondJudgeSample:
    def test_balanced(self) -> None:
        """Equal numbers per (label, condition) cell, unlabelled responses left out."""
        resp = responses(
            [
                {"response_id": f"r{i}", "condition": c, "question_id": "q", "query": "", "response": ""}
                for i, c in enumerate(["single"] * 6 + ["no_rag"] * 6)
            ]
        )
        labels = pl.DataFrame({"response_id": [f"r{i}" for i in range(12)], "label": ["ABSTAIN", "ANSWER", None] * 4})
        got = judge.second_judge_sample(labels, resp, 4, seed=0)
        assert got.group_by("label", "condition").len()["len"].to_list() == [1, 1, 1, 1]
        assert judge.second_judge_sample(labels, resp, 0, seed=0).height == 8


QUESTION = {
    "id": "a0",
    "answerable": True,
    "target_title": "Horse",
    "target_url": "https://wiki/Horse",
    "scenario_chunk_ids": ["c1"],
    "question": "I ride. How much armor?",
}


def lookup(ids: Sequence[str]) -> list[Chunk]:
    """One known chunk; others raise KeyError like the retriever."""
    known = {"c1": Chunk("c1", "Saddle", "https://wiki/Saddle", "[Page: Saddle]\nsaddle text")}
    if missing := [i for i in ids if i not in known]:
        raise KeyError(f"chunk {missing[0]!r} is not in the index")
    return [known[i] for i in ids]


class TestReferenceContext:
    def test_page_then_scenario(self) -> None:
        """The full source page comes first, then the scenario chunks with title and URL."""
        text = judge.reference_context(QUESTION, {"Horse": "Horses have 15 health."}, lookup)
        assert text.startswith("[Source page] Horse (https://wiki/Horse)\nHorses have 15 health.")
        assert text.endswith("[Scenario chunks]\n[1] Saddle (https://wiki/Saddle)\n[Page: Saddle]\nsaddle text")

    def test_cut(self) -> None:
        """page_chars cuts the page and chunk_chars each scenario chunk."""
        text = judge.reference_context(QUESTION, {"Horse": "h" * 1000}, lookup, page_chars=100, chunk_chars=10)
        assert "h" * 100 + "\n" in text and "h" * 101 not in text
        assert text.endswith("[Page: Sad")

    def test_missing_page(self) -> None:
        """A source page missing from its corpus is an error naming the question and the half."""
        with pytest.raises(ValueError, match="'a0'.*'Horse'.*C_pre"):
            judge.reference_context(QUESTION, {}, lookup)

    def test_missing_chunk(self) -> None:
        """A scenario chunk missing from the index is an error naming the question."""
        with pytest.raises(ValueError, match="'a0': scenario"):
            judge.reference_context({**QUESTION, "scenario_chunk_ids": ["zz"]}, {"Horse": "h"}, lookup)


class TestWriteReferences:
    def test_prompts_and_failures(self) -> None:
        """Answerable and unanswerable questions use their J.3 oracle prompts; failures stay null."""
        questions = pl.DataFrame([{**QUESTION}, {**QUESTION, "id": "u0", "answerable": False, "question": "boom"}])
        ask = ScriptedJudge(lambda c: "It gives 5 armor points.", error_on="boom")
        refs = judge.write_references(questions, {"a0": "ctx a", "u0": "ctx u"}, ask, oracle="o")
        assert [c.prompt for c in ask.calls] == ["oracle_answerable", "oracle_unanswerable"]
        assert refs["reference"].to_list() == ["It gives 5 armor points.", None]
        assert refs["error"].to_list() == [None, "HTTP 500"]


def scoring_frame() -> pl.DataFrame:
    """Responses with labels and references covering every scoring rule."""
    return labelled().with_columns(
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
        ask = ScriptedJudge(lambda c: "1.0")
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
        ask = ScriptedJudge(lambda c: "1.0")
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
        resp = responses(
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
        resp = labelled().head(3)
        labels = judge.label_responses(resp, ScriptedJudge(rule_judge), judge="j")
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
        resp = responses([{"response_id": f"r{i}", "question_id": "q", "query": "", "response": ""} for i in range(4)])
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
    assert judge.label_responses(frame, ScriptedJudge(lambda c: "ANSWER"), judge="j")["label"].to_list() == ["ANSWER"]


class JudgeModels:
    """The model layer for stage 06: response judge, oracle and accuracy judges by model id."""

    def __init__(self) -> None:
        self.used: list[str] = []

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> ScriptedJudge:
        def script(call: Call) -> str:
            self.used.append(model_id)
            if call.prompt == "judge_response":
                return judge.rule_label(call.fields["answer"]) if model_id != "mute" else "?"
            if call.prompt.startswith("oracle"):
                return f"reference for {call.fields['question']}"
            return "1.0" if model_id == "j1" else "0.5"

        return ScriptedJudge(script)

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
        bench = pl.DataFrame([{**QUESTION}, {**QUESTION, "id": "u0", "answerable": False, "target_title": "Ghast"}])
        for stage, name, frame in (
            ("verify", "benchmark", bench.with_columns(asked_question=pl.lit("?"), target_chunk_id=pl.lit("c1"))),
            (
                "answer",
                "responses",
                labelled()
                .head(4)
                .with_columns(
                    question_id=pl.Series(["a0", "a0", "u0", "u0"]),
                    condition=pl.Series(["single", "single", "no_rag", "no_rag"]),
                    pipeline=pl.Series(["hybrid", "hybrid", "none", "none"]),
                ),
            ),
        ):
            cfg.stage_dir(stage).mkdir(parents=True, exist_ok=True)
            frame.write_parquet(cfg.stage_dir(stage) / f"{name}.parquet")
        # Table 9's comparison: g1's question abstained on, g2's denied, g2's second one cut by the budget.
        compared = (
            labelled()
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
        out = judge_stage.run(cfg, models=models, lookup=lookup, pages=pages)
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


@pytest.mark.slow
def test_real_models_end_to_end(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """05 and 06 on a real index and a real llama.cpp server (SmolLM2-135M): every output written,
    every response labelled or flagged, and a second run replays everything from the cache."""
    from tests.support.projects import copy_project, write_benchmark, write_corpus

    from declinecraft.core import config
    from test_answer import benchmark

    root = copy_project(tmp_path / "project")
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
    (root / "params" / "t.yaml").write_text(
        "base: default\n"
        "answer:\n  models: [smollm2-135m]\n  k: 2\n  max_rounds: 1\n  max_tokens: 24\n  context_chars: 200\n"
        "  limit_questions: 0\n  no_scenario: true\n"
        "judge:\n  response_judge: smollm2-135m\n  oracle: smollm2-135m\n  accuracy_judges: [smollm2-135m]\n"
        "  max_tokens: 4\n  oracle_max_tokens: 16\n  oracle_page_chars: 200\n  oracle_chunk_chars: 100\n"
    )
    cfg = config.load(root / "params" / "t.yaml")
    write_corpus(
        cfg,
        {
            f"c{i}": f"[Page: Page {i}]\nPage {i} says that mob {i} has {i * 3} health and drops item {i}."
            for i in range(1, 8)
        },
    )
    index_stage.run(cfg, progress=False)
    write_benchmark(cfg, benchmark(2, 1))

    first = (answer_stage.run(cfg), judge_stage.run(cfg))
    judged = pl.read_parquet(cfg.stage_dir("judge") / "judged.parquet")
    assert judged.height == 3 * 4  # no_rag, single, iterative, single without scenario
    assert (
        judged.filter(pl.col("label").is_null() & ~pl.col("budget_exhausted")).height
        == judged.filter(pl.col("label_unparsable") | pl.col("label_error").is_not_null()).height
    )
    assert set(judged["rule_label"].drop_nulls()) <= set(judge.LABELS)
    again = (answer_stage.run(cfg), judge_stage.run(cfg))
    assert again[0].responses.equals(first[0].responses)
    assert again[1].judged.equals(first[1].judged) and again[1].manifest["seconds"]["total"] < 10


class TestEmptyBenchmark:
    def test_both_stages(self, project) -> None:  # noqa: ANN001
        """A benchmark with no question (nothing survived verification) gives empty outputs, no crash."""
        from declinecraft.core import config
        from test_answer import FakeModels, FakeSearch, benchmark
        from test_answer import lookup as chunk_lookup

        (project / "params" / "t.yaml").write_text("base: default\nanswer:\n  models: [m1]\n")
        cfg = config.load(project / "params" / "t.yaml")
        cfg.stage_dir("verify").mkdir(parents=True)
        benchmark(1, 0).clear().write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        out = answer_stage.run(cfg, models=FakeModels(), search=FakeSearch(), lookup=chunk_lookup)
        assert out.responses.height == 0
        done = judge_stage.run(cfg, models=JudgeModels(), lookup=lookup, pages={True: {}, False: {}})
        assert done.judged.height == 0 and (cfg.stage_dir("judge") / "results.csv").is_file()
