"""Tests for declinecraft.llm.body_fields: the thinking switch and the allowed-answers constraint."""

from __future__ import annotations

import pytest

from declinecraft.llm.body_fields import choice_constraint, thinking_body
from declinecraft.llm.transport import LLMError
from tests.support import model_specs


class TestThinkingBody:
    @pytest.mark.parametrize(
        ("kind", "switch", "mode", "expected"),
        [
            (
                "switchable",
                "chat_template_kwargs.enable_thinking",
                None,
                ("off", {"chat_template_kwargs": {"enable_thinking": False}}),
            ),
            ("switchable", "reasoning.enabled", "on", ("on", {"reasoning": {"enabled": True}})),
            ("switchable", "reasoning_effort", "off", ("off", {"reasoning_effort": "none"})),
            ("always", None, None, ("on", {})),
            ("always", "reasoning_effort", "on", ("on", {"reasoning_effort": "low"})),
            ("none", None, None, ("off", {})),
            ("none", None, "prompt", ("prompt", {})),
        ],
    )
    def test_resolved(
        self, kind: str, switch: str | None, mode: str | None, expected: tuple[str, dict[str, object]]
    ) -> None:
        """Each registry thinking kind maps to its mode and body fields."""
        s = model_specs.spec(
            thinking=kind, thinking_switch=switch, extra={"reasoning_effort": "low"} if kind == "always" else {}
        )
        assert thinking_body(s, mode) == expected  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("kind", "switch", "mode", "message"),
        [
            ("always", None, "off", "always thinks"),
            ("none", None, "on", "has no native thinking"),
            ("switchable", None, "on", "needs a thinking_switch"),
        ],
    )
    def test_impossible(self, kind: str, switch: str | None, mode: str, message: str) -> None:
        """Impossible settings are errors naming the model."""
        with pytest.raises(LLMError, match=rf"'fake'.*{message}"):
            thinking_body(model_specs.spec(thinking=kind, thinking_switch=switch), mode)  # type: ignore[arg-type]


class TestChoiceConstraint:
    def test_per_backend(self) -> None:
        """A GBNF alternation for llama.cpp (choices quoted as JSON strings), vLLM's choice list,
        nothing for a hosted API."""
        choices = ("yes", 'say "no"')
        assert choice_constraint(model_specs.spec(backend="llamacpp"), choices) == {
            "grammar": 'root ::= "yes" | "say \\"no\\""'
        }
        assert choice_constraint(model_specs.spec(), choices) == {"structured_outputs": {"choice": ["yes", 'say "no"']}}
        assert choice_constraint(model_specs.spec(backend="openai", base_url="http://x/v1"), choices) == {}
