"""Tests for declinecraft.paper.run_health: the run-health section of the paper, on hand-built outputs
(tests/support/health.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import run_health
from declinecraft.core import catalogue, config
from declinecraft.paper import health_table
from declinecraft.paper import run_health as paper_run_health
from tests.support import health, projects


@pytest.fixture()
def cfg(tmp_path: Path) -> config.RunConfig:
    """A run with hand-built answer and judge outputs and no views run."""
    return health.write_run(tmp_path)


class TestPaperSection:
    def test_table_and_sentences(self, cfg) -> None:  # noqa: ANN001
        """The table prints counts with their n and the caveat below min_n; the sentences name the failures."""
        counted = pl.concat([run_health.verifier_health(cfg), run_health.collect(cfg, health.main_grid())])
        tex = health_table.health_tex(counted, min_n=6)
        assert "2 of 8" in tex and "1 of 2 (1 re-asked)" in tex
        assert "1 of 1 (n = 1 question, not interpretable at this n)" in tex
        said = dict((m, v) for m, v, _ in paper_run_health.health_macros(counted, min_n=6))
        assert "2 failed" in said["HealthCallsSentence"] and "m-b in 05\\_answer: 2 of 8" in said["HealthCallsSentence"]
        assert said["HealthTruncSentence"].startswith("1 of 11 answers were cut at the output budget")
        assert said["HealthTruncSentence"].endswith("1 of 1 of them exhausted it with no final answer.")
        assert "Answers that exhausted the budget (no answer left) & m-a & 1 of 2" in tex
        assert said["HealthBoxLine"] == (
            "Run health: 2 of 33 model calls failed; 1 of 11 answers were cut at the output budget and 1 of 11 "
            "exhausted it."
        )
        assert "j-small gave no usable output on 1 of 2 calls" in said["HealthJudgeSentence"]
        assert said["HealthCheckSentence"] == (
            "On the judges' check set (labelled items we wrote), the accuracy judges score as labelled j-big: 9 of 10; "
            "j-small: 3 of 10. The scores of j-small are not interpretable: below judge.check\\_min\\_agreement, so "
            "no accuracy number of this run is read as a finding."
        )
        assert "Check-set items scored as labelled & j-small &  &  &  & 3 of 10" in tex
        assert "references.parquet is missing" in said["HealthOmitted"]
        assert "used the first retrieval round only" not in said["HealthRoundsSentence"]
        assert "Verifier's NO, answerable drafts (rejected) & v &  &  &  & 7 of 9" in tex
        assert said["HealthVerifierSentence"] == (
            "The verifier (v) said the older wiki text does not answer the question for 7 of 9 answerable "
            "drafts and 4 of 5 unanswerable drafts: it said NO to most drafts of either half, so it rejected "
            "most answerable drafts, and its NO does not tell the unanswerable drafts apart from the answerable ones."
        )

    def test_verifier_that_tells_the_halves_apart(self) -> None:
        """A verifier that said YES to most answerable drafts gets its counts and no warning."""
        audit = health.verifier_audit("g").with_columns(
            rejected=pl.when(pl.col("answerable") & (pl.col("check") == "answers")).then(2).otherwise("rejected")
        )
        frame = run_health.verifier_answers(audit, "g")
        said = dict((m, v) for m, v, _ in paper_run_health.health_macros(frame, min_n=6))
        assert said["HealthVerifierSentence"] == (
            "The verifier (v) said the older wiki text does not answer the question for 2 of 9 answerable "
            "drafts and 4 of 5 unanswerable drafts."
        )

    def test_no_further_rounds_sentence(self) -> None:
        """When no iterative answer used another round, one sentence says so, and says why: the
        reflections' outcomes (asking without a usable question is not "never asking")."""
        plain = health.responses().filter(pl.col("model") == "m-a")
        counted = pl.concat([run_health.rounds_used(plain), run_health.reflection_outcomes(plain)])
        said = dict((m, v) for m, v, _ in paper_run_health.health_macros(counted, min_n=6))
        assert said["HealthRoundsSentence"] == (
            "All 2 iterative answers used the first retrieval round only: of the 2 reflections, 2 judged the "
            "context insufficient without a usable follow-up question."
        )

    def test_reflection_outcomes(self) -> None:
        """Each reflection counted by outcome; an echoed placeholder is its own outcome."""
        frame = health.responses().filter(pl.col("model") == "m-a", pl.col("condition") == "iterative").head(1)
        echoed = json.dumps(
            [{"index": 0, "reflection": {"status": "no_follow_ups", "echoed_template": True}, "stop": "no_follow_ups"}]
        )
        frame = pl.concat([frame, frame.with_columns(rounds=pl.lit(echoed))])
        rows = run_health.reflection_outcomes(frame).select("detail", "numerator", "denominator").rows()
        assert rows == [("echoed_template", 1, 2), ("no_follow_ups", 1, 2)]

    def test_write(self, cfg) -> None:  # noqa: ANN001
        """Without the analysis' CSV the paper still writes the table, macros and CSV, naming what is
        missing; the verifier's rows come from the verify stage's audit."""
        paper, stage = cfg.root / "paper", cfg.run_dir() / "10_paper"
        (paper / "tables").mkdir(parents=True)
        stage.mkdir(parents=True)
        status = paper_run_health.write(cfg, paper, stage)
        assert status["name"] == "run_health" and (paper / "tables" / "run_health.tex").is_file()
        assert "run\\_health.csv is missing" in (paper / "health_numbers.tex").read_text()
        written = pl.read_csv(stage / "run_health.csv")
        assert written.filter(pl.col("measure") == "verifier_no_answerable")["numerator"].to_list() == [7]

    def test_write_long(self, cfg) -> None:  # noqa: ANN001
        """A run health longer than the body holds (the paper's 24 models) is summed in the body's
        table, given whole in the appendix's, and the caption's note points there; a shorter run
        afterwards leaves no appendix table behind."""
        paper, stage = cfg.root / "paper", cfg.run_dir() / "10_paper"
        (paper / "tables").mkdir(parents=True)
        stage.mkdir(parents=True)
        many = pl.DataFrame(
            {"model": [f"m-{i:02d}" for i in range(45)], "condition": "single", "numerator": 1, "denominator": 9}
        )
        source = catalogue.ANALYSIS_TABLE.path(cfg, "run_health")
        source.parent.mkdir(parents=True, exist_ok=True)
        run_health.finish(many, "truncated", run_health.ANSWER_STAGE).write_csv(source)
        paper_run_health.write(cfg, paper, stage)
        whole = paper / "tables" / "run_health_models.tex"
        assert "\\begin{longtable}" in whole.read_text() and whole.read_text().count("m-") == 45
        body = (paper / "tables" / "run_health.tex").read_text()
        assert "Answers cut at the output budget & 45 &" in body and "m-03" not in body
        assert "app:run\\_health\\_models" not in (paper / "health_numbers.tex").read_text()
        assert "\\ref{app:run_health_models}" in (paper / "health_numbers.tex").read_text()
        source.unlink()
        paper_run_health.write(cfg, paper, stage)
        assert not whole.exists() and "HealthTableNote" not in (paper / "health_numbers.tex").read_text()

    def test_main_tex_places_it_before_results(self) -> None:
        """paper/main.tex has the Run health section, with its table, before the first results section."""
        tex = (projects.REPO / "paper" / "main.tex").read_text()
        health, results = tex.index("\\dcoursection{RH}{Run health}"), tex.index("\\dcorigsection{Results}")
        assert health < results and health < tex.index("\\dcoursection{K2G}{Know2Guess")
        assert health < tex.index("\\dctable[H]{run_health}") < results
        used = set(re.findall(r"\\(Health[A-Za-z]+)", tex))
        defined = {m for m, _, _ in paper_run_health.health_macros(run_health.empty(), min_n=6)}
        assert used and used <= defined | set(paper_run_health.NEIGHBOUR_MACROS)


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
    said = paper_run_health._judge_sentence(pl.DataFrame(rows, schema=run_health.SCHEMA))
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
    said = paper_run_health._rule_sentence(run_health.rule_disagreement(labels))
    assert "j and the phrase rule label 2 of 3 responses differently (first: r1: judge DENY" in said
