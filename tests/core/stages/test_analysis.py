"""Tests for declinecraft.core.stages.analysis: stage 07's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.declaration import EVERY_MODEL
from declinecraft.core.params import AnalysisParams
from declinecraft.core.stages import analysis


class TestStage:
    def test_reads_no_view(self) -> None:
        """The analysis reads stages 01-06 only (the views come after it) and reports on every model."""
        assert (analysis.STAGE.notebook, analysis.STAGE.params) == ("07_analysis", AnalysisParams)
        assert {a.stage for a in analysis.STAGE.reads} == {"corpus", "generate", "verify", "answer", "judge"}
        assert analysis.STAGE.models == (EVERY_MODEL,) and analysis.STAGE.prompts == ()

    def test_data(self, cfg: config.RunConfig) -> None:
        """It reads the paper's reported numbers and the run's annotations folder."""
        assert analysis.STAGE.data(cfg) == ["params/paper_reported.yaml", "data/annotations/default"]

    def test_writes_a_family(self) -> None:
        """Its tables are one family of CSV files, never required by name."""
        tables = next(a for a in catalogue.STAGES["analysis"].writes if a.name == "{}.csv")
        assert tables.file("table02") == "table02.csv" and tables.matches("table02.csv")

    def test_confidence_a_level(self) -> None:
        """A confidence level lies strictly between 0 and 1."""
        bad = dataclasses.replace(AnalysisParams(), confidence=1.0)
        assert bounds.check("analysis", bad, "analysis") == [
            "analysis.confidence: 1.0 is out of range (needs > 0 and < 1)"
        ]
