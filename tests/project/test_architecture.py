"""Tests of the package's shape (layers, cycles, module sizes, Make prerequisites from imports) and of
the tests' own layout: each test module mirrors a module of the package, helpers sit in
tests/support and are imported one way."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from declinecraft.core import catalogue, deps
from tests.support import projects

SOURCE = projects.REPO / "src" / "declinecraft"


#: Stage notebooks in run order (the order Make chains them in).
STAGES = projects.STAGES


class TestCycles:
    def test_package_has_none(self) -> None:
        """No import cycle between the package's modules (every import statement counted)."""
        assert deps.cycles(deps.graph()) == []


class TestLayers:
    def test_package_keeps_them(self) -> None:
        """No import climbs a layer or crosses between siblings, function-level imports included."""
        assert deps.violations(deps.graph()) == []

    def test_runtime_imports_no_science(self) -> None:
        """The machinery (``runtime``) imports ``core`` and itself only, never a science part."""
        edges = deps.graph()
        science = {
            "analysis", "construction", "corpus", "evaluation", "explore", "harness", "llm", "paper", "planning",
            "retrieval", "simulation", "views",
        }  # fmt: skip
        parts = {p.name for p in SOURCE.iterdir() if (p / "__init__.py").is_file()}
        assert parts == science | {"core", "runtime"}, "a new part: say whether it is science or machinery"
        runtime = [m for m in edges if deps.part_of(m) == "runtime"]
        assert runtime
        assert sorted((a, b) for a in runtime for b in edges[a] if deps.part_of(b) in science) == []

    def test_core_imports_no_runtime(self) -> None:
        """``core`` sits below the machinery: none of its modules imports ``runtime``."""
        edges = deps.graph()
        assert sorted((a, b) for a, t in edges.items() if deps.part_of(a) == "core" for b in t if ".runtime" in b) == []

    def test_import_linter_contracts(self) -> None:
        """import-linter's layers and forbidden contracts (pyproject.toml) are kept."""
        lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
        if lint is None:
            pytest.skip("import-linter is not installed")
        done = subprocess.run([lint], cwd=projects.REPO, capture_output=True, text=True, timeout=120)
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
            cells = json.loads((projects.REPO / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
            code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
            assert "run_stage" not in code and ".run(cfg" in code, stem


#: Test folders that mirror no part of the package: the Makefile, CI and the package's shape
#: (``project``), and the fault suite (``faults``).
NOT_MODULES = {"project", "faults"}
TESTS = projects.REPO / "tests"


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def _mirrored(test: Path) -> Path | None:
    """The package module a test module mirrors: ``tests/<part>/test_<name>.py`` tests
    ``src/declinecraft/<part>/<name>.py`` (or the package ``<name>/``, or ``__<name>__.py``)."""
    folder = SOURCE / test.parent.relative_to(TESTS)
    name = test.stem.removeprefix("test_")
    for candidate in (folder / f"{name}.py", folder / name / "__init__.py", folder / f"__{name}__.py"):
        if candidate.is_file():
            return candidate
    return None


class TestTestLayout:
    def test_each_test_module_mirrors_a_module(self) -> None:
        """Every test module sits in a folder that mirrors a part of the package (or in
        project/ or faults/), named for a module that exists there."""
        assert _test_modules()
        stray = [
            str(t.relative_to(TESTS))
            for t in _test_modules()
            if t.relative_to(TESTS).parts[0] not in NOT_MODULES and _mirrored(t) is None
        ]
        assert stray == []

    def test_each_module_has_its_test(self) -> None:
        """Every module of the package (but ``__init__`` and ``__main__``) has its mirrored test
        module: ``src/declinecraft/<part>/<name>.py`` is tested in ``tests/<part>/test_<name>.py``."""
        untested = [
            str(module.relative_to(SOURCE))
            for module in sorted(SOURCE.rglob("*.py"))
            if module.name not in {"__init__.py", "__main__.py"}
            and not (TESTS / module.parent.relative_to(SOURCE) / f"test_{module.name}").is_file()
        ]
        assert untested == []

    def test_folders_are_packages(self) -> None:
        """Every folder of tests is a package (so two test_stage.py never clash) and holds no
        helper module: helpers live in tests/support."""
        folders = {t.parent for t in _test_modules()}
        assert TESTS not in folders, "a test module sits directly in tests/"
        assert all((f / "__init__.py").is_file() for f in folders | {TESTS, TESTS / "support"})
        helpers = [
            str(p.relative_to(TESTS))
            for f in folders
            for p in f.glob("*.py")
            if not p.name.startswith("test_") and p.name not in {"__init__.py", "conftest.py"}
        ]
        assert helpers == []

    def test_support_imported_one_way(self) -> None:
        """Helpers are imported as ``from tests.support import <module>``; no test module imports
        another test module."""
        bad = []
        for path in [*TESTS.rglob("*.py"), *(projects.REPO / "benchmarks").glob("*.py")]:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module] if node.module != "tests.support" else []
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in {"tests", "support", "conftest"} or top.startswith("test_"):
                        bad.append(f"{path.relative_to(projects.REPO)}:{node.lineno}: {name}")
        assert bad == []


@pytest.mark.slow
def test_editing_a_module_reruns_its_stages(tmp_path: Path) -> None:
    """With every stage built, an edit of a module makes exactly its stages and the stages that read
    their outputs out of date (Make prerequisites come from the imports and the declared reads,
    never a hand-kept list), and the edit undone makes nothing out of date (up to date means the
    inputs' content)."""
    project = projects.built_project(tmp_path)
    env = projects.make_env(project)
    sources = {
        stem: set(deps.stage_sources(project / "notebooks" / f"{stem}.ipynb", project / "src" / "declinecraft"))
        for stem in STAGES
    }
    for module in ("core/stats.py", "construction/audit.py", "evaluation/judge.py", "retrieval/fusion.py"):
        path = project / "src" / "declinecraft" / module
        text = path.read_text(encoding="utf-8")
        path.write_text(text + "\n# an edit\n", encoding="utf-8")
        using = {
            block for block, stem in ((b, s.notebook) for b, s in catalogue.STAGES.items()) if path in sources[stem]
        }
        readers = [
            stem
            for block, stem in ((b, s.notebook) for b, s in catalogue.STAGES.items())
            if block in using or using & set(catalogue.upstream(block))
        ]
        assert projects.would_run(project, env) == readers, module
        path.write_text(text, encoding="utf-8")  # undone: nothing to rerun
        assert projects.would_run(project, env) == [], module
