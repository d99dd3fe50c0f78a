"""Tests for declinecraft.views.know2guess.protocol: the plan of conditions and the prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.core import prompts
from declinecraft.core.params import AnswerParams, Know2GuessParams
from declinecraft.views.know2guess import protocol


class TestPlan:
    def test_controls_and_thinking(self) -> None:
        """Switchable models run each thinking setting; only control models get the control prompts."""
        params = Know2GuessParams(control_models=("a",), conditions=("no_rag",))
        runs = protocol.plan(
            params,
            AnswerParams(models=("a", "b"), thinking=("off", "on")),
            lambda m: "switchable" if m == "a" else "none",
        )
        assert [(r.model, r.thinking, r.prompt) for r in runs if r.model == "b"] == [("b", "off", "standard")]
        assert len([r for r in runs if r.model == "a"]) == 2 * 4

    def test_control_model_must_be_under_test(self) -> None:
        """A control model outside the models under test is an error naming it."""
        with pytest.raises(ValueError, match="'z' is not a model under test"):
            protocol.plan(Know2GuessParams(control_models=("z",)), AnswerParams(models=("a",)), lambda m: "none")


class TestPrompts:
    @pytest.mark.parametrize("name", sorted(protocol.PROMPTS.values()))
    def test_templates(self, root: Path, name: str) -> None:
        """Each K2G template loads and names its source; the RAG variant is the same text with our
        context block, and only that, before the question."""
        base, rag = prompts.load(name, root), prompts.load(f"{name}_rag", root)
        assert base.placeholders == ("question",) and "Know2Guess" in base.section and "Appendix C" in base.section
        assert rag.section.startswith("ours") and "OURS" in rag.meta["note"]
        question = "QUESTION_BEGIN" if name == "k2g_delimiter" else "Question: {question}"
        assert rag.text == base.text.replace(question, "Context:\n{context}\n\n" + question, 1)

    def test_standard_is_appendix_c1(self, root: Path) -> None:
        """The standard prompt asks for the four K2G fields, line by line."""
        text = prompts.load("k2g_standard", root).render(question="Q?")
        assert [line.split(":")[0] for line in text.splitlines()[1:5]] == [
            "DECISION",
            "CONFIDENCE",
            "FINAL_ANSWER",
            "REASON_CODE",
        ]
        assert text.endswith("Do not add any other text.\n\nQuestion: Q?")
