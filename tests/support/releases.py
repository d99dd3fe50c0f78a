"""A released benchmark to import: minimal-schema questions, a tiny project with the corpus they name,
and its evaluation from the LLM cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from declinecraft.core import config
from declinecraft.evaluation import answer_stage, judge_stage
from tests.support import answering, projects

TEXTS = {
    "c1": "[Page: Page 1]\nPage 1 says the blaze drops blaze rods and glows.",
    "c2": "[Page: Page 2]\nPage 2 says the creeper explodes near players.",
}


def minimal_rows() -> list[dict[str, Any]]:
    """Three minimal-schema questions: two answerable (C_pre pages), one unanswerable (C_post)."""
    return [
        {
            "id": "q1",
            "answerable": True,
            "scenario": "I am in the Nether.",
            "question": "What does the blaze drop?",
            "fact": "The blaze drops blaze rods.",
            "target_page": "Page 1",
        },
        {
            "id": "q2",
            "answerable": True,
            "scenario": "I hear a hiss.",
            "question": "What does the creeper do?",
            "fact": "The creeper explodes.",
            "target_page": "Page 2",
        },
        {
            "id": "q3",
            "answerable": False,
            "scenario": "I see a glow.",
            "question": "Does the new mob glow?",
            "fact": "The new mob glows.",
            "target_page": "New Mob",
        },
    ]


def write_lines(path: Path, records: list[Any]) -> Path:
    """A JSONL file of ``records`` (strings are written as they are)."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def tiny_project(tmp: Path, models: dict[str, Any] | None = None) -> Path:
    """A project with run ``default``'s corpus (pages Page 1, Page 2; C_post New Mob) and an index
    marker; with ``models``, a run ``orig`` that evaluates them (views off, small budgets)."""
    root = projects.copy_project(tmp / "project")
    cfg = config.load(root / "params" / "default.yaml")
    projects.write_corpus(cfg, TEXTS)
    cfg.stage_dir("index").mkdir(parents=True)
    (cfg.stage_dir("index") / "manifest.json").write_text("{}")
    if models is not None:
        (root / "params" / "fake_models.yaml").write_text(yaml.safe_dump({"models": models}))
        (root / "params" / "orig.yaml").write_text(
            yaml.safe_dump(
                {
                    "base": "default",
                    "models_file": "params/fake_models.yaml",
                    "answer": {
                        "models": [m for m in models if m != "judge"],
                        "conditions": ["no_rag", "single"],
                        "k": 2,
                        "max_tokens": 32,
                        "limit_questions": 0,
                        "context_chars": 200,
                    },
                    "judge": {
                        "response_judge": "judge",
                        "oracle": "judge",
                        "accuracy_judges": ["judge"],
                        "max_tokens": 8,
                        "oracle_max_tokens": 16,
                        "oracle_page_chars": 200,
                        "oracle_chunk_chars": 100,
                    },
                    "know2guess": {"enabled": False},
                    "evidence": {"enabled": False},
                }
            )
        )
    return root


def fake_model(base_url: str, served: str) -> dict[str, Any]:
    """A registry entry for a model of the fake OpenAI-compatible server."""
    return {"backend": "openai", "served_name": served, "base_url": base_url, "roles": ["under_test"]}


def evaluate(cfg: config.RunConfig) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Stages 05 and 06 of ``cfg`` through the real model pool and LLM cache (retrieval faked)."""
    lookup = judge_stage.chunk_lookup(cfg)
    answered = answer_stage.run(cfg, search=answering.FakeSearch(default=("c1", "c2")), lookup=lookup)
    judged = judge_stage.run(cfg, lookup=lookup)
    return answered.responses, judged.judged
