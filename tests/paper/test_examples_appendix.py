"""Tests for declinecraft.paper.examples_appendix: every response of the printed questions with its
label and scores, the cap said in the text, and no appendix pretending to be filled."""

from __future__ import annotations

import polars as pl

from declinecraft.paper import examples_appendix


def judged(questions: int) -> pl.DataFrame:
    rows = []
    for q in range(questions):
        for model in ("m-a", "m_b"):
            for condition in ("iterative", "no_rag", "single"):
                scored = condition == "no_rag" or q % 2 == 0
                rows.append(
                    dict(
                        question_id=f"q{q:03d}",
                        answerable=q % 2 == 0,
                        question=f"What is item {q} & why?",
                        reference=f"Item {q} is 50% iron.",
                        model=model,
                        condition=condition,
                        thinking="off",
                        pipeline="none" if condition == "no_rag" else "hybrid",
                        k=0 if condition == "no_rag" else 5,
                        label="ABSTAIN" if model == "m-a" else "ANSWER",
                        response=f"{model} on {condition}:\n\nword " * 3,
                        **{"score_j1": 1.0 if scored else None, "score_j2": 0.5 if scored else None},
                        accuracy=0.75 if scored else None,
                    )
                )
    return pl.DataFrame(rows)


def test_every_response_with_label_and_scores() -> None:
    """Each question's six responses are rows, no-RAG first, with the label, both judges' scores and
    their mean; an unscored response prints --; the special characters are escaped."""
    tex = examples_appendix.examples_tex(judged(2), max_questions=10, max_chars=600)
    assert "(all 2)" in tex and "\\label{app:examples}" in tex
    assert tex.count("\\begin{longtable}") == 2
    body = tex.split("\\paragraph{q001 (unanswerable).}")[1]
    rows = [line for line in body.splitlines() if line.endswith("\\\\") and " & " in line][1:]
    assert len(rows) == 6
    assert rows[0].startswith("m-a, No RAG & ABSTAIN & 1 / 0.5; 0.75 &")
    assert rows[2].startswith("m-a, RAG & ABSTAIN & -- &")
    assert "What is item 1 \\& why?" in body and "Item 1 is 50\\% iron." in body
    assert "m\\_b, Iter." in body
    # Pipeline and k are the same for every retrieval response: not printed.
    assert "pipeline" not in body and "k 5" not in body


def test_cap_and_cut_are_said() -> None:
    """A run larger than the cap prints its first questions and says so; long responses are cut."""
    tex = examples_appendix.examples_tex(judged(5), max_questions=2, max_chars=20)
    assert tex.count("\\paragraph{") == 2 and "\\paragraph{q001" in tex and "q002" not in tex
    assert "the first 2 of 5 by id" in tex and "longer than 20 characters are cut" in tex
    assert "m-a on iterative: …" in tex


def test_no_responses_say_why() -> None:
    """Without a judged table the appendix says why instead of printing an empty table."""
    tex = examples_appendix.examples_tex(
        None, max_questions=3, max_chars=10, why_missing="06_judge/judged.parquet is missing"
    )
    assert "longtable" not in tex and "06\\_judge/judged.parquet is missing" in tex
