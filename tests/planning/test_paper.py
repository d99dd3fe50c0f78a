"""Tests for declinecraft.planning.paper: the plan's responses beside the paper's, each difference named."""

from __future__ import annotations

from pathlib import Path

import yaml

from declinecraft.core import config
from declinecraft.planning import paper
from tests.support import model_specs

FACTS = {
    "n_answerable": 7,
    "n_unanswerable": 3,
    "n_configurations": 2,
    "n_models": 2,
    "k_ablation_models": 1,
    "k_sweep_models": 1,
    "pipeline_ablation_models": 1,
    "scenario_ablation_models": 1,
}


def reported(folder: Path) -> Path:
    path = folder / "reported.yaml"
    path.write_text(yaml.safe_dump({"reported": {k: {"value": v} for k, v in FACTS.items()}}), encoding="utf-8")
    return path


class TestComparison:
    def test_parts_and_total(self, project: Path) -> None:
        """Each part's paper count is its models x settings x the paper's 10 questions; a part within
        5 % names no reason, one off by more names why, and the total names the parts that differ."""
        cfg = config.load(project / "params" / "default.yaml")
        specs = {m: model_specs.spec(id=m) for m in cfg.answer.models}
        responses = {"main": 60, "k=10": 10, "no_scenario": 10}
        rows = {r["part"]: r for r in paper.comparison(cfg, specs, responses, reported(project))}
        main = rows["main grid"]
        assert (main["plan"], main["paper"], main["within_5pct"], main["why"]) == (60, 2 * 3 * 10, True, "")
        assert (rows["k=10 (App. A.2)"]["paper"], rows["k sweep k=1-3 (Figure 21)"]["paper"]) == (10, 30)
        pipelines = rows["pipelines (App. A.3)"]
        assert (pipelines["plan"], pipelines["paper"], pipelines["difference"]) == (0, 60, -1.0)
        assert pipelines["why"] == paper.PIPELINES_WHY
        total = rows["total"]
        assert (total["plan"], total["paper"]) == (80, 60 + 10 + 30 + 60 + 10)
        assert "pipelines (App. A.3): " in total["why"] and "main grid: " not in total["why"]
