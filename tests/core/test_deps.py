"""Tests for declinecraft.core.deps: imports of every form, cycles, the layer rule, and each stage's
source files."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from declinecraft.core import catalogue, deps
from tests.support import projects

SOURCE = projects.REPO / "src" / "declinecraft"
#: Stage notebooks in run order.
STAGES = [s.notebook for s in catalogue.STAGES.values()]


class TestImports:
    def test_resolves_every_form(self) -> None:
        """Plain, from, relative and function-level imports all count, and `from pkg import mod` names the module."""
        known = {
            "declinecraft",
            "declinecraft.core",
            "declinecraft.core.stats",
            "declinecraft.core.paths",
            "declinecraft.llm",
            "declinecraft.llm.cache",
        }
        code = (
            "import declinecraft.core.stats\nfrom declinecraft.core import paths\ndef f():\n    from . import cache\n"
        )
        found = deps.imports_of(code, "declinecraft.llm.client", known=known)
        assert found == {"declinecraft.core.stats", "declinecraft.core.paths", "declinecraft.llm.cache"}

    def test_type_checking_counts(self) -> None:
        """An import under TYPE_CHECKING is a dependency too."""
        code = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from declinecraft.core import stats\n"
        assert deps.imports_of(code, "x", known={"declinecraft.core.stats"}) == {"declinecraft.core.stats"}


class TestCycles:
    def test_finds_a_cycle(self) -> None:
        """A two-module loop is reported; a chain is not."""
        assert deps.cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
        assert deps.cycles({"a": {"b"}, "b": set()}) == []


class TestLayers:
    def test_rule(self) -> None:
        """A part imports lower layers only; explore imports core only."""
        assert deps.allowed("evaluation", "retrieval") and deps.allowed("paper", "core")
        assert not deps.allowed("retrieval", "evaluation") and not deps.allowed("construction", "evaluation")
        assert not deps.allowed("explore", "evaluation") and deps.allowed("explore", "core")

    def test_runtime_between_core_and_science(self) -> None:
        """The machinery imports core; science imports the machinery; neither the reverse."""
        assert deps.allowed("runtime", "core") and deps.allowed("llm", "runtime") and deps.allowed("paper", "runtime")
        assert not deps.allowed("runtime", "llm") and not deps.allowed("core", "runtime")
        assert not deps.allowed("explore", "runtime")


class TestStageSources:
    def test_known_dependencies(self) -> None:
        """Modules a stage reaches only indirectly are among its prerequisites."""
        src = {
            stem: {
                str(p.relative_to(SOURCE)) for p in deps.stage_sources(projects.REPO / "notebooks" / f"{stem}.ipynb")
            }
            for stem in STAGES
        }
        assert "core/stats.py" in src["04_verify"]  # Wilson intervals of audit_retrieval.csv
        assert "construction/audit.py" in src["03_generate"]
        assert "core/registry.py" in src["07_analysis"]
        assert "corpus/wiki.py" not in src["05_answer"]

    @pytest.mark.parametrize("stem", STAGES)
    def test_covers_what_the_notebook_loads(self, stem: str) -> None:
        """Every package module that importing the notebook's code loads is a prerequisite."""
        cells = json.loads((projects.REPO / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
        imports = [
            line
            for c in cells
            if c["cell_type"] == "code"
            for line in "".join(c["source"]).splitlines()
            if line.startswith(("import ", "from ")) and "declinecraft" in line
        ]
        probe = "\n".join(
            [*imports, "import sys", "print('\\n'.join(m for m in sys.modules if m.startswith('declinecraft')))"]
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=projects.REPO
        )
        assert done.returncode == 0, done.stderr[-2000:]
        loaded = {m for m in done.stdout.split() if m}
        known = deps.modules()
        closure = {deps.module_name(p) for p in deps.stage_sources(projects.REPO / "notebooks" / f"{stem}.ipynb")}
        assert {m for m in loaded if m in known} <= closure


def test_discovered_stage_modules_are_imports() -> None:
    """The stages package counts as importing every stage module it finds, so editing a stage's
    declaration is a change of every module that reads the catalogue."""
    edges = deps.graph()
    assert "declinecraft.core.stages.judge" in edges["declinecraft.core.stages"]
    assert "declinecraft.core.stages.judge" in deps.closure(["declinecraft.core.catalogue"], edges)
