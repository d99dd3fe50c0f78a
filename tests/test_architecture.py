"""Tests of the package's shape: layers, cycles, module sizes, and Make prerequisites from imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.projects import make_project

from declinecraft.core import config, deps, pipeline

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "declinecraft"
#: Stage notebooks in run order (the order Make chains them in).
STAGES = [notebook for _, notebook in config.STAGES]


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

    def test_package_has_none(self) -> None:
        """No import cycle between the package's modules (every import statement counted)."""
        assert deps.cycles(deps.graph()) == []


class TestLayers:
    def test_rule(self) -> None:
        """A part imports lower layers only; explore imports core only."""
        assert deps.allowed("evaluation", "retrieval") and deps.allowed("paper", "core")
        assert not deps.allowed("retrieval", "evaluation") and not deps.allowed("construction", "evaluation")
        assert not deps.allowed("explore", "evaluation") and deps.allowed("explore", "core")

    def test_package_keeps_them(self) -> None:
        """No import climbs a layer or crosses between siblings, function-level imports included."""
        assert deps.violations(deps.graph()) == []

    def test_import_linter_contracts(self) -> None:
        """import-linter's layers and forbidden contracts (pyproject.toml) are kept."""
        lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
        if lint is None:
            pytest.skip("import-linter is not installed")
        done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]


class TestShape:
    def test_few_top_level_modules(self) -> None:
        """At most four modules sit directly under src/declinecraft (the rest are parts)."""
        assert len(list(SOURCE.glob("*.py"))) <= 4

    def test_modules_are_short(self) -> None:
        """No module is over 500 lines as formatted (ruff format)."""
        long = {
            str(p.relative_to(SOURCE)): n
            for p in SOURCE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
        }
        assert long == {}

    def test_one_entry_point_per_stage(self) -> None:
        """Every stage notebook calls a ``run(cfg)`` of a stage module of the package."""
        for stem in STAGES:
            cells = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
            code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
            assert "run_stage" not in code and ".run(cfg" in code, stem


class TestStageSources:
    def test_known_dependencies(self) -> None:
        """Modules a stage reaches only indirectly are among its prerequisites."""
        src = {
            stem: {str(p.relative_to(SOURCE)) for p in deps.stage_sources(ROOT / "notebooks" / f"{stem}.ipynb")}
            for stem in STAGES
        }
        assert "core/stats.py" in src["04_verify"]  # Wilson intervals of audit_retrieval.csv
        assert "construction/audit.py" in src["03_generate"]
        assert "core/registry.py" in src["07_analysis"]
        assert "corpus/wiki.py" not in src["05_answer"]

    @pytest.mark.parametrize("stem", STAGES)
    def test_covers_what_the_notebook_loads(self, stem: str) -> None:
        """Every package module that importing the notebook's code loads is a prerequisite."""
        cells = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
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
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        loaded = {m for m in done.stdout.split() if m}
        known = deps.modules()
        closure = {deps.module_name(p) for p in deps.stage_sources(ROOT / "notebooks" / f"{stem}.ipynb")}
        assert {m for m in loaded if m in known} <= closure


def _would_run(project: Path, env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        ["make", "-n", "pipeline", f"PY={sys.executable}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return [s for s in STAGES if f">> [default] {s}" in out.stdout]


@pytest.mark.slow
def test_touching_a_module_reruns_its_stages(tmp_path: Path) -> None:
    """With every stage built, touching a module makes exactly its stages and the stages that read
    their outputs out of date (Make prerequisites come from the imports and the declared reads,
    never a hand-kept list)."""
    project = make_project(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "MAKEFLAGS": ""}
    assert _would_run(project, env) == STAGES  # nothing built yet; also writes the params stamps
    built = project / "outputs" / "default" / "executed"
    built.mkdir(parents=True)
    # Times in the past, so the deps file Make regenerates (now) is newer than any source.
    base = time.time() - 100_000
    for path in project.rglob("*"):
        if path.is_file():
            os.utime(path, (base, base))
    for i, stem in enumerate(STAGES):
        (built / f"{stem}.ipynb").touch()
        os.utime(built / f"{stem}.ipynb", (base + 10 + i, base + 10 + i))
    assert _would_run(project, env) == []
    sources = {
        stem: set(deps.stage_sources(project / "notebooks" / f"{stem}.ipynb", project / "src" / "declinecraft"))
        for stem in STAGES
    }
    for step, module in enumerate(
        ("core/stats.py", "construction/audit.py", "evaluation/judge.py", "retrieval/fusion.py")
    ):
        at = base + 1000 * (step + 1)
        path = project / "src" / "declinecraft" / module
        os.utime(path, (at, at))
        using = {block for block, stem in config.STAGES if path in sources[stem]}
        readers = [stem for block, stem in config.STAGES if block in using or using & set(pipeline.upstream(block))]
        assert _would_run(project, env) == readers, module
        for i, stem in enumerate(STAGES):  # rebuild in order, as a real run would
            os.utime(built / f"{stem}.ipynb", (at + 10 + i, at + 10 + i))
    assert _would_run(project, env) == []
