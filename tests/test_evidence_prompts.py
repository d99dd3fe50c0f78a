"""The view's prompts render, and stage 10 runs end to end on a real model (marked slow)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tests.support.projects import copy_project

from declinecraft.core import prompts
from declinecraft.llm.cache import open_cache
from declinecraft.views.evidence import asking, stage
from test_evidence_stage import FakeSearch, make_run


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


@pytest.mark.slow
def test_real_model_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage 10 with a real llama.cpp server (SmolLM2-135M in every role): every output written,
    every response classified or counted, and a second run replays everything from the cache."""
    root = copy_project(tmp_path / "project")
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
    small = {"max_tokens": "24", "conflict_max_tokens": "24", "prompts": "[P1, P2]"}
    cfg = make_run(root, small, tested="smollm2-135m", generator="smollm2-135m", judge="smollm2-135m")
    first = stage.run(cfg, search=FakeSearch())
    judged = first.judged
    assert judged.height == first.instances.height * 2
    assert set(judged["esb_judge"].drop_nulls()) <= {"ANSWER", "ABSTAIN", "INVALID"}
    unclassified = judged.filter(pl.col("esb_judge").is_null()).height
    assert unclassified == int(first.tables["summary"]["n_unclassified"].sum())
    with open_cache(tmp_path / "cache") as store:
        stored = store.count()
    again = stage.run(cfg, search=FakeSearch())
    assert again.judged.equals(first.judged)
    with open_cache(tmp_path / "cache") as store:
        assert store.count() == stored  # the rerun sent no call (its time: benchmarks/bench_views.py)
