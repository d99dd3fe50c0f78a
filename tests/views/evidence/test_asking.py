"""Tests for declinecraft.views.evidence.asking: the view's prompts render."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.core import prompts
from declinecraft.views.evidence import asking


class TestPrompts:
    @pytest.mark.parametrize("prompt", ["P1", "P2", "P3", "J2"])
    @pytest.mark.parametrize("level", ["L1", "L4", "L5", "T"])
    def test_calls_render(self, root: Path, prompt: str, level: str) -> None:
        """Every call the view sends fills its template exactly; J2 reuses J.2's files; P1 is the
        plain baseline: it never mentions abstaining, insufficiency or the model's own knowledge."""
        call = asking.call_of(prompt, level, "What is it?", "[1] Page (url)\ntext")
        text = prompts.load(call.prompt, root).render(**call.fields)
        assert "What is it?" in text
        if prompt == "J2":
            assert call.prompt == ("answer_no_context" if level == "L4" else "answer_with_context")
        elif prompt == "P1":
            assert call.prompt == "esb_baseline" and (asking.NO_PASSAGES in text) == (level == "L4")
            lowered = text.lower()
            assert not any(
                w in lowered
                for w in ("insufficient", "know", "abstain", "memory", "own knowledge", "cannot", "unable", "not sure")
            )
        else:
            assert (asking.NO_PASSAGES in text) == (level == "L4") and "insufficient" in text

    def test_conflict_prompt_renders(self, root: Path) -> None:
        """The conflict prompt takes the question and the fact; its JSON braces come out single."""
        text = prompts.load("esb_conflict", root).render(question="How often?", fact="Every 20 seconds.")
        assert text.endswith("Fact: Every 20 seconds.") and '{"original": ""' in text
