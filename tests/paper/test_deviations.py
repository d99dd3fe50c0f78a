"""Tests for declinecraft.paper.deviations: the miniature box and the deviation items follow the
run's params (the default run, the paper's own params, and the complete offline run)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from declinecraft.core import config, registry
from declinecraft.paper import deviations


def load(root: Path, name: str) -> tuple[config.RunConfig, dict]:
    cfg = config.load(root / "params" / f"{name}.yaml")
    return cfg, registry.load_models(cfg.resolve(cfg.models_file))


@pytest.fixture(scope="module")
def reported(root: Path) -> dict:
    return yaml.safe_load((root / "params" / "paper_reported.yaml").read_text())["reported"]


def test_miniature_box(root: Path, reported: dict) -> None:
    """The default run gets the box with its own sizes; the paper's params get none."""
    cfg, _ = load(root, "default")
    box = deviations.miniature_box(cfg, reported)
    asked = f"asks for {cfg.verify.target_answerable} answerable and {cfg.verify.target_unanswerable} unanswerable"
    assert "Miniature run" in box and f"{asked} benchmark questions (the paper has 700 and 300)" in box
    assert "holds \\BenchAnswerable{} answerable and \\BenchUnanswerable{} unanswerable" in box
    assert "\\HealthBoxLine{}" in box
    assert "no number in it is evidence" in box and "fewer questions than 6" in box
    assert deviations.miniature_box(load(root, "paper")[0], reported) == ""


def test_default_items(root: Path) -> None:
    """The default run: the 1.5B in roles the paper keeps apart, both models under test scored by
    their own family only, the rule labels of record, every cut prompt named; review and prompts always."""
    items = deviations.deviation_items(*load(root, "default")).splitlines()
    assert all(line.startswith("\\item ") for line in items)
    text = "\n".join(items)
    assert (
        "Qwen2.5-Coder-1.5B-Instruct (Q4\\_K\\_M) is generator, verifier, response judge, oracle, accuracy judge "
        "and model under test" in text
    )
    assert "same family as Qwen2.5-Coder-0.5B-Instruct" in text
    assert "Labels." in text and "judge.labels\\_by\\_rule" in text
    assert "generator's prompts to 500 characters" in text and "oracle's prompt to 2{,}000 characters" in text
    assert "Review." in text and "Prompts." in text


def test_paper_params_deviate_in_nothing_they_set(root: Path) -> None:
    """The paper's own params share roles only as the paper does and cut no prompt."""
    text = deviations.deviation_items(*load(root, "paper"))
    assert "Roles." not in text and "Own-family" not in text and "Prompts cut." not in text and "Labels." not in text
    assert text.count("\\item ") == 2
