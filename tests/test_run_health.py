"""Tests of the run-health counts (analysis) and their section in the paper, on hand-built outputs.

Two models under test: ``m-a`` answers cleanly except one truncated no-RAG reply; ``m-b`` has two
failed calls (one answer, one iterative reflection) and asks for one more retrieval round once.
Two accuracy judges: ``j-big`` parses everything, ``j-small`` gives one unparsable score of 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import run_health
from declinecraft.core import config
from declinecraft.paper import run_health as paper_health

ROOT = Path(__file__).resolve().parents[1]


def _rounds(status: str) -> str:
    """The ``rounds`` JSON of one iterative answer whose round-0 reflection had ``status``; an
    "insufficient" one leads to a second round, the last allowed."""
    first = {"index": 0, "reflection": {"status": status}, "stop": None if status == "insufficient" else status}
    more = [{"index": 1, "reflection": None, "stop": "max_rounds"}] if status == "insufficient" else []
    return json.dumps([first, *more])


def responses() -> pl.DataFrame:
    """Twelve answers: 2 models x 3 conditions x 2 questions (q1 answerable, q2 not)."""
    rows = []
    for model in ("m-a", "m-b"):
        for condition in ("no_rag", "single", "iterative"):
            for q in ("q1", "q2"):
                rows.append(
                    {
                        "response_id": f"{model}-{condition}-{q}",
                        "question_id": q,
                        "answerable": q == "q1",
                        "model": model,
                        "thinking": "off",
                        "condition": condition,
                        "finish_reason": "stop",
                        "error": None,
                        "rounds": _rounds("no_follow_ups") if condition == "iterative" else None,
                        "n_rounds": 1 if condition == "iterative" else None,
                    }
                )
    schema = {"error": pl.String, "finish_reason": pl.String, "rounds": pl.String, "n_rounds": pl.Int64}
    frame = pl.DataFrame(rows, schema_overrides=schema)
    fix = {  # m-a: one truncated reply; m-b: one failed answer, one failed reflection, one more round
        "m-a-no_rag-q1": {"finish_reason": "length"},
        "m-b-single-q2": {"finish_reason": None, "error": "HTTP 500"},
        "m-b-iterative-q1": {"rounds": _rounds("error")},
        "m-b-iterative-q2": {"rounds": _rounds("insufficient"), "n_rounds": 2},
    }
    return pl.DataFrame([{**r, **fix.get(r["response_id"], {})} for r in frame.to_dicts()], schema=frame.schema)


def scores() -> pl.DataFrame:
    """Two judges x two answerable responses scored by a call; j-small's second is unparsable."""
    rows = []
    for judge in ("j-big", "j-small"):
        for rid in ("m-a-single-q1", "m-b-single-q1"):
            bad = judge == "j-small" and rid == "m-b-single-q1"
            rows.append(
                {
                    "response_id": rid,
                    "judge": judge,
                    "source": "llm",
                    "raw_output": "1.5" if bad else "1",
                    "score": None if bad else 1.0,
                    "unparsable": bad,
                    "reasked": bad,
                    "error": None,
                }
            )
    rows.append(
        {
            "response_id": "m-a-no_rag-q1",
            "judge": "j-big",
            "source": "abstain",
            "raw_output": None,
            "score": 0.0,
            "unparsable": False,
            "reasked": False,
            "error": None,
        }
    )
    return pl.DataFrame(rows, schema_overrides={"error": pl.String, "score": pl.Float64})


def labels() -> pl.DataFrame:
    """The response judge's labels: one call per answer with a reply (11), one re-asked and recovered."""
    replied = responses().filter(pl.col("error").is_null())["response_id"].to_list()
    return pl.DataFrame(
        [
            {
                "response_id": rid,
                "judge": "j-big",
                "role": "response_judge",
                "source": "llm",
                "unparsable": False,
                "reasked": i == 0,
                "error": None,
            }
            for i, rid in enumerate(replied)
        ],
        schema_overrides={"error": pl.String},
    )


def _row(frame: pl.DataFrame, measure: str, model: str, **keys: str) -> tuple[int, int]:
    hit = frame.filter((pl.col("measure") == measure) & (pl.col("model") == model))
    for column, value in keys.items():
        hit = hit.filter(pl.col(column) == value)
    assert hit.height == 1, (measure, model, keys, hit)
    return hit["numerator"][0], hit["denominator"][0]


class TestAnswerCalls:
    def test_counts_answers_and_reflections(self) -> None:
        """m-b: 6 answers + 2 reflections = 8 calls, 2 failed; m-a: 8 calls, none failed."""
        found = run_health.answer_calls(responses())
        assert _row(found, "failed_calls", "m-b") == (2, 8)
        assert _row(found, "failed_calls", "m-a") == (0, 8)


class TestTruncation:
    def test_per_model_and_condition(self) -> None:
        """m-a's no-RAG replies: 1 of 2 cut; m-b's single-shot: the failed call is not a reply (0 of 1)."""
        found = run_health.truncation(responses())
        assert _row(found, "truncated", "m-a", condition="no_rag") == (1, 2)
        assert _row(found, "truncated", "m-b", condition="single") == (0, 1)
        assert found["rate"].to_list().count(0.5) == 1


class TestRounds:
    def test_distribution(self) -> None:
        """m-b used one further round on 1 of 2 iterative answers; m-a none on 2 of 2."""
        found = run_health.rounds_used(responses())
        assert _row(found, "further_rounds", "m-b", detail="1") == (1, 2)
        assert _row(found, "further_rounds", "m-b", detail="0") == (1, 2)
        assert _row(found, "further_rounds", "m-a", detail="0") == (2, 2)

    def test_unusable_reflections(self) -> None:
        """A failed reflection is unusable (m-b: 1 of 2); no_follow_ups and insufficient are not."""
        found = run_health.reflection_health(responses())
        assert _row(found, "reflection_unusable", "m-b") == (1, 2)
        assert _row(found, "reflection_unusable", "m-a") == (0, 2)


class TestJudges:
    def test_parse_failures(self) -> None:
        """j-small: 1 of 2 scores re-asked and still unparsable; rule-scored rows are no calls."""
        found = run_health.parse_health(scores(), "score")
        assert _row(found, "score_unparsable", "j-small") == (1, 2)
        assert _row(found, "score_reasked", "j-small") == (1, 2)
        assert _row(found, "score_unparsable", "j-big") == (0, 2)

    def test_calls_count_reasks(self) -> None:
        """j-big: 11 label calls + 1 re-ask + 2 score calls = 14; j-small: 2 + 1 re-ask = 3."""
        found = run_health.judge_calls([(labels(), "judge"), (scores(), "judge")], "06_judge")
        assert _row(found, "failed_calls", "j-big") == (0, 14)
        assert _row(found, "failed_calls", "j-small") == (0, 3)


class TestMergeCalls:
    def test_one_row_per_stage_and_model(self) -> None:
        """A model that answers and judges in one stage gets one failed_calls row with both counts."""
        both = pl.concat(
            [
                run_health.answer_calls(responses(), "10_evidence"),
                run_health.judge_calls([(labels().with_columns(judge=pl.lit("m-b")), "judge")], "10_evidence"),
            ]
        )
        merged = run_health.merge_calls(both)
        assert _row(merged, "failed_calls", "m-b") == (2, 8 + 12)


class TestViews:
    def test_know2guess_format(self) -> None:
        """Strict-parser replies with any issue; the normalized parser's rows are the same calls."""
        decisions = pl.DataFrame(
            {
                "model": ["m-a"] * 4,
                "thinking": ["off"] * 4,
                "parser": ["strict", "strict", "strict", "normalized"],
                "issues": ["no_decision;missing_confidence", "", "no_decision", None],
            }
        )
        found = run_health.know2guess_format(decisions)
        assert _row(found, "k2g_format_issues", "m-a") == (2, 3)
        assert found["detail"][0] == "no_decision"

    def test_evidence_invalid(self) -> None:
        """Invalid responses summed over prompts."""
        summary = pl.DataFrame(
            {"model": ["m-a", "m-a"], "thinking": ["off", "off"], "n_invalid": [1, 2], "n_responses": [9, 9]}
        )
        assert _row(run_health.evidence_invalid(summary), "esb_invalid", "m-a") == (3, 18)


@pytest.fixture()
def cfg(tmp_path: Path):  # noqa: ANN201
    """A run with hand-built answer and judge outputs and no views run."""
    (tmp_path / "params").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    for name in ("default.yaml", "models.yaml"):
        (tmp_path / "params" / name).write_text((ROOT / "params" / name).read_text())
    run = config.load(tmp_path / "params" / "default.yaml")
    run.stage_dir("answer").mkdir(parents=True)
    run.stage_dir("judge").mkdir(parents=True)
    responses().write_parquet(run.stage_dir("answer") / "responses.parquet")
    labels().write_parquet(run.stage_dir("judge") / "labels.parquet")
    scores().write_parquet(run.stage_dir("judge") / "scores.parquet")
    return run


def main_grid() -> pl.DataFrame:
    """Accuracy panel complete for m-a's single-shot answer only (j-small failed on m-b's)."""
    return pl.DataFrame(
        {
            "model": ["m-a", "m-b"],
            "thinking": ["off", "off"],
            "condition": ["single", "single"],
            "accuracy_n": [1, 0],
            "n_answerable": [1, 1],
        }
    )


class TestCollect:
    def test_missing_input_is_a_note(self, cfg) -> None:  # noqa: ANN001
        """Without references.parquet the rest is counted and one row says what is missing."""
        found = run_health.collect(cfg, main_grid())
        notes = found.filter(pl.col("measure") == "missing")
        assert notes.height == 1 and "references.parquet is missing" in notes["detail"][0]
        assert _row(found, "failed_calls", "m-b", stage="05_answer") == (2, 8)
        assert _row(found, "accuracy_questions", "m-b") == (0, 1)

    def test_views_not_run(self, cfg) -> None:  # noqa: ANN001
        """Views without outputs give notes, not errors."""
        found = run_health.collect_views(cfg)
        assert set(found["measure"]) == {"missing"} and found.height >= 2


class TestPaperSection:
    def test_table_and_sentences(self, cfg) -> None:  # noqa: ANN001
        """The table prints counts with their n and the caveat below min_n; the sentences name the failures."""
        counted = run_health.collect(cfg, main_grid())
        tex = paper_health.health_tex(counted, min_n=6)
        assert "2 of 8" in tex and "1 of 2 (1 re-asked)" in tex
        assert "1 of 1 (n = 1 question, not interpretable at this n)" in tex
        said = dict((m, v) for m, v, _ in paper_health.health_macros(counted, min_n=6))
        assert "2 failed" in said["HealthCallsSentence"] and "m-b in 05\\_answer: 2 of 8" in said["HealthCallsSentence"]
        assert "1 of 11 answers stopped" in said["HealthTruncSentence"]
        assert "j-small gave no usable output on 1 of 2 calls" in said["HealthJudgeSentence"]
        assert "references.parquet is missing" in said["HealthOmitted"]
        assert "used the first retrieval round only" not in said["HealthRoundsSentence"]

    def test_no_further_rounds_sentence(self) -> None:
        """When no iterative answer used another round, one sentence says so, and says why: the
        reflections' outcomes (asking without a usable question is not "never asking")."""
        plain = responses().filter(pl.col("model") == "m-a")
        counted = pl.concat([run_health.rounds_used(plain), run_health.reflection_outcomes(plain)])
        said = dict((m, v) for m, v, _ in paper_health.health_macros(counted, min_n=6))
        assert said["HealthRoundsSentence"] == (
            "All 2 iterative answers used the first retrieval round only: of the 2 reflections, 2 judged the "
            "context insufficient without a usable follow-up question."
        )

    def test_reflection_outcomes(self) -> None:
        """Each reflection counted by outcome; an echoed placeholder is its own outcome."""
        frame = responses().filter(pl.col("model") == "m-a", pl.col("condition") == "iterative").head(1)
        echoed = json.dumps(
            [{"index": 0, "reflection": {"status": "no_follow_ups", "echoed_template": True}, "stop": "no_follow_ups"}]
        )
        frame = pl.concat([frame, frame.with_columns(rounds=pl.lit(echoed))])
        rows = run_health.reflection_outcomes(frame).select("detail", "numerator", "denominator").rows()
        assert rows == [("echoed_template", 1, 2), ("no_follow_ups", 1, 2)]

    def test_write(self, cfg) -> None:  # noqa: ANN001
        """Without the analysis' CSV the paper still writes the table, macros and CSV, naming what is missing."""
        paper, stage = cfg.root / "paper", cfg.run_dir() / "08_paper"
        (paper / "tables").mkdir(parents=True)
        stage.mkdir(parents=True)
        status = paper_health.write(cfg, paper, stage)
        assert status["name"] == "run_health" and (paper / "tables" / "run_health.tex").is_file()
        assert "run\\_health.csv is missing" in (paper / "health_numbers.tex").read_text()
        assert (stage / "run_health.csv").is_file()

    def test_main_tex_places_it_before_results(self) -> None:
        """paper/main.tex has the Run health section, with its table, before the first results section."""
        tex = (ROOT / "paper" / "main.tex").read_text()
        health = tex.index("\\section{Run health}")
        assert health < tex.index("\\section{Results}") and health < tex.index("\\section{Know2Guess")
        assert health < tex.index("\\dctable[H]{run_health}") < tex.index("\\section{Results}")
        used = set(re.findall(r"\\(Health[A-Za-z]+)", tex))
        assert used and used <= {m for m, _, _ in paper_health.health_macros(run_health.empty(), min_n=6)}


def test_judge_sentence_names_rescued_scores() -> None:
    """Scores that parsed only after the re-ask are named with their count."""
    rows = [
        {
            "measure": m,
            "stage": "06_judge",
            "model": "j-small",
            "thinking": "",
            "condition": "",
            "detail": "",
            "numerator": k,
            "denominator": 9,
            "rate": k / 9,
        }
        for m, k in (("score_reasked", 6), ("score_unparsable", 0))
    ]
    said = paper_health._judge_sentence(pl.DataFrame(rows, schema=run_health.SCHEMA))
    assert said.startswith("Every judge output parsed.") and "j-small: 6 of its 9 scores" in said


def test_rule_disagreement() -> None:
    """Labels unlike the phrase rule's are counted per judge and the first ones named; rows
    without either label are left out."""
    labels = pl.DataFrame(
        {
            "response_id": ["r1", "r2", "r3", "r4"],
            "judge": ["j"] * 4,
            "role": ["response_judge"] * 4,
            "label": ["DENY", "ANSWER", "ABSTAIN", None],
            "rule_label": ["ABSTAIN", "ANSWER", "ANSWER", "ANSWER"],
        }
    )
    row = run_health.rule_disagreement(labels).to_dicts()[0]
    assert (row["model"], row["numerator"], row["denominator"]) == ("j", 2, 3)
    assert row["detail"] == "r1: judge DENY, rule ABSTAIN; r3: judge ABSTAIN, rule ANSWER"
    said = paper_health._rule_sentence(run_health.rule_disagreement(labels))
    assert "j and the phrase rule label 2 of 3 responses differently (first: r1: judge DENY" in said
