"""Tests for declinecraft.explore.widgets: the notebook browser, and the explorer notebook (papermill)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from declinecraft import explore
from declinecraft.core import config
from tests.support import default_run, projects


class TestBrowse:
    def test_filters_and_paging(self, frame: pl.DataFrame) -> None:
        """The widget's filter, model and search choices select the questions the functions find."""
        b = explore.browse(frame)
        assert b.ids() == ["q-sulfur", "q-copper", "q-panda", "q-spider"]
        b.filter.value = "transition"
        assert b.ids() == ["q-sulfur"] and "Magma Cube" in b.view.value
        b.filter.value, b.from_label.value, b.to_label.value = "thinking", "A", "D"
        assert b.ids() == ["q-copper"]
        b.filter.value = "all_failed"
        assert b.ids() == ["q-spider"]
        b.filter.value, b.model.value = "all", "m2"
        b.go(1)
        assert b.status.value.startswith("2 / 4 · q-copper") and 'data-config="m1|off"' not in b.view.value
        b.search.value = "copper"
        assert b.ids() == ["q-copper"]

    def test_given_questions(self, frame: pl.DataFrame) -> None:
        """A filter's frame starts the view on its questions."""
        b = explore.browse(frame, questions=explore.budget_exhausted(frame))
        assert b.filter.value == "given" and b.ids() == ["q-copper"]


# --- the notebook -------------------------------------------------------------------------------------


def run_notebook(params_file: Path, out: Path) -> dict[str, Any]:
    """Execute notebooks/explore.ipynb with papermill; return the executed notebook."""
    import nbformat
    import papermill

    papermill.execute_notebook(
        str(projects.REPO / "notebooks" / "explore.ipynb"),
        str(out),
        cwd=str(projects.REPO / "notebooks"),
        parameters={"params_file": str(params_file)},
        kernel_name="python3",
        progress_bar=False,
    )
    return nbformat.read(out, as_version=4)


class TestNotebook:
    def test_committed_clean(self) -> None:
        """The notebook is committed without outputs and has a parameters cell with the default run."""
        import nbformat

        nb = nbformat.read(projects.REPO / "notebooks" / "explore.ipynb", as_version=4)
        assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")
        params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(params) == 1 and 'params_file = "params/default.yaml"' in params[0].source

    @pytest.mark.slow
    def test_hand_built_run(self, run: config.RunConfig, tmp_path: Path) -> None:
        """The notebook runs on the hand-built run and shows a question."""
        start = time.monotonic()
        nb = run_notebook(run.params_file, tmp_path / "explore.ipynb")
        outputs = json.dumps([c.get("outputs", []) for c in nb.cells])
        assert "q-sulfur" in outputs and "dc-q" in outputs and time.monotonic() - start < 120

    @pytest.mark.slow
    def test_default_run(self, tmp_path: Path) -> None:
        """The notebook runs on the default run's outputs (skipped until `make all` made them)."""
        default_run.config_or_skip("verify", "judge")
        nb = run_notebook(projects.REPO / "params" / "default.yaml", tmp_path / "explore.ipynb")
        assert "dc-q" in json.dumps([c.get("outputs", []) for c in nb.cells])
