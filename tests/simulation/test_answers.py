"""Tests for declinecraft.simulation.answers: replies drawn at the paper's rates."""

from __future__ import annotations

import pytest

from declinecraft.simulation import answers
from tests.support import projects

REPORTED = projects.REPO / "params" / "paper_reported.yaml"


def test_rates_follow_reported() -> None:
    """Table 2's single-shot CAR for a model that has a row; the condition means for one that has none."""
    r = answers.rates("gemma-4-31b", False, "single", REPORTED)
    assert r.car == pytest.approx(0.833) and r.attempt == pytest.approx(0.957)
    none = [answers.rates(m, False, "no_rag", REPORTED).car for m in ("qwen3-4b", "gpt-5", "glm-4.5-air")]
    assert all(0.171 - 0.13 < c < 0.171 + 0.13 for c in none) and len(set(none)) == 3


def test_replies_carry_their_label() -> None:
    """Over many unanswerable questions a model declines at its CAR, and the judge reads every label back."""
    labels = []
    for i in range(400):
        question = f"I am playing in survival, day {i}: how many with the Vorel Coil in this case?"
        prompt = f"Feel free to use the provided context.\n\nContext:\n[Page: X]\nsome text\n\nQuestion: {question}"
        body = {"model": "gemma-4-31b", "messages": [{"role": "user", "content": prompt}]}
        response = answers.respond(body, REPORTED)
        judge = f"Reply with exactly one word: DENY, ABSTAIN or ANSWER\nQUESTION: {question}\nRESPONSE: {response}\n"
        judge += "Reply with exactly one word"
        labels.append(answers.respond({"model": "judge", "messages": [{"content": judge}]}, REPORTED))
    assert abs(labels.count("ABSTAIN") / 400 - 0.833) < 0.06 and labels.count("DENY") > 0
