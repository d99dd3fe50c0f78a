"""Tests for declinecraft.core.stages.paper: stage 10's declaration."""

from __future__ import annotations

import dataclasses

from declinecraft.core import bounds, catalogue, config
from declinecraft.core.declaration import OTHER_RUNS
from declinecraft.core.params import PaperParams
from declinecraft.core.stages import paper


class TestStage:
    def test_last_and_reads_every_parquet(self) -> None:
        """The paper stage runs last and reads every parquet file of earlier stages (for its cache keys)."""
        assert (paper.STAGE.notebook, paper.STAGE.params) == ("10_paper", PaperParams)
        assert list(catalogue.STAGES)[-1] == "paper" and paper.STAGE.reads_kinds == ("parquet",)

    def test_places(self, cfg: config.RunConfig) -> None:
        """Macros go to the paper folder, tables to paper/tables; main.tex is copied only for other runs."""
        written = {a.name: a for a in catalogue.STAGES["paper"].writes}
        assert written["numbers.tex"].place == "paper" and written["{}.tex"].place == "tables"
        assert written["main.tex"].when == OTHER_RUNS and written["main.tex"].decided(cfg) is False
        assert paper.STAGE.data(cfg)[0] == "paper/main.tex"

    def test_dpi_positive(self) -> None:
        """Figures are drawn at a positive resolution."""
        bad = dataclasses.replace(PaperParams(), figure_dpi=0)
        assert bounds.check("paper", bad, "paper") == ["paper.figure_dpi: 0 is out of range (needs >= 1)"]
