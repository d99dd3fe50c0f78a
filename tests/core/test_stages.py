"""Tests for declinecraft.core.stages: the stage declarations, what is derived from them, and a toy
stage added in a copy of the project with three files."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from declinecraft.core import catalogue, config, stages
from declinecraft.core.declaration import UndeclaredRead
from tests.support import projects


@pytest.fixture(scope="module")
def cfg() -> config.RunConfig:
    return config.load(projects.REPO / "params" / "default.yaml")


class TestDeclared:
    def test_run_order(self) -> None:
        """The run order is the notebooks' number order, and every stage runs after the stages it reads."""
        order = list(stages.declared())
        assert [catalogue.notebook(b) for b in order] == sorted(catalogue.notebook(b) for b in order)
        for block in order:
            assert all(order.index(r) < order.index(block) for r in catalogue.read_stages(block)), block

    def test_reading_a_later_number_fails(self) -> None:
        """A stage numbered before a stage it reads is refused, naming both notebooks."""
        early = dataclasses.replace(stages.declared()["analysis"], notebook="00_analysis")
        with pytest.raises(ValueError, match=r"'analysis' \(00_analysis\) reads artifacts of .*'06_judge'"):
            stages._run_order({**stages.declared(), "analysis": early})

    def test_entry_points_exist(self) -> None:
        """Each declared ``run`` names a module of the package and a function in it, and the notebook calls it."""
        for block, stage in stages.declared().items():
            module, function = stage.run.split(":")
            path = projects.REPO / "src" / Path(*module.split(".")).with_suffix(".py")
            assert path.is_file() and f"def {function}(" in path.read_text(encoding="utf-8"), block
            notebook = (projects.REPO / "notebooks" / f"{stage.notebook}.ipynb").read_text(encoding="utf-8")
            assert module.rsplit(".", 1)[-1] in notebook, block

    def test_roles_are_params_keys(self) -> None:
        """Every model role names a field of a declared block."""
        for block, stage in stages.declared().items():
            for role in stage.models:
                for key in role.split("|") if role != "*" else ():
                    owner, name = key.split(".")
                    assert name in {f.name for f in dataclasses.fields(config.BLOCKS[owner])}, (block, key)

    def test_paper_declares_the_import_record(self) -> None:
        """The paper stage reads VERIFY_IMPORT through its declaration."""
        assert catalogue.VERIFY_IMPORT in stages.reads("paper")


class TestGuard:
    def test_undeclared_read_fails(self, cfg: config.RunConfig) -> None:
        """Inside the answer stage, asking for the judge's output is an error; a declared read is not."""
        try:
            stages.guard_reads("05_answer")
            assert catalogue.VERIFY_BENCHMARK.path(cfg).name == "benchmark.parquet"
            assert catalogue.ANSWER_RESPONSES.path(cfg).name == "responses.parquet"
            with pytest.raises(UndeclaredRead, match="06_judge/judged.parquet"):
                catalogue.JUDGE_JUDGED.path(cfg)
        finally:
            stages.guard_reads("")
        assert catalogue.JUDGE_JUDGED.path(cfg).name == "judged.parquet"


TOY_MODULE = '''"""11_toy: counts the judged responses (an example stage)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from declinecraft.core.bounds import POSITIVE
from declinecraft.core.declaration import Stage, writer
from declinecraft.core.stages.judge import JUDGE_JUDGED

_write = writer("toy", "11_toy")
TOY_COUNTS = _write("counts.csv", "responses per model")


@dataclass(frozen=True)
class ToyParams:
    """The toy stage's block."""

    top: Annotated[int, POSITIVE] = 3
    """Models listed (ours)."""


STAGE = Stage(block="toy", notebook="11_toy", params=ToyParams, run="toy:run", reads=(JUDGE_JUDGED,))
'''


@pytest.mark.slow
def test_toy_stage(tmp_path: Path) -> None:
    """A stage added with three files (its module, its notebook, its block in default.yaml) is
    planned by ``make -n`` after the stage it reads and before none it does not."""
    project = projects.make_project(tmp_path / "project")
    (project / "src" / "declinecraft" / "core" / "stages" / "toy.py").write_text(TOY_MODULE, encoding="utf-8")
    notebook = json.loads((project / "notebooks" / "02_index.ipynb").read_text(encoding="utf-8"))
    notebook["cells"] = notebook["cells"][:2]
    (project / "notebooks" / "11_toy.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    with open(project / "params" / "default.yaml", "a", encoding="utf-8") as fh:
        fh.write("\ntoy:\n  top: 2\n")
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "MAKEFLAGS": ""}
    out = subprocess.run(
        ["make", "-n", "pipeline", f"PY={sys.executable}"], cwd=project, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    planned = [line.split()[-1] for line in out.stdout.splitlines() if line.startswith('echo ">> [default]')]
    planned = [p.rstrip('"') for p in planned]
    assert "11_toy" in planned and planned.index("06_judge") < planned.index("11_toy")
    graph = (project / ".make" / "pipeline.mk").read_text(encoding="utf-8")
    assert "UP_11_toy := 06_judge" in graph
    assert not (project / "outputs").exists()  # make -n writes no stamp


def test_run_config_types_follow_the_declarations() -> None:
    """The block types RunConfig tells the type checker are the declared blocks, with their dataclasses."""
    import ast

    tree = ast.parse((projects.REPO / "src" / "declinecraft" / "core" / "config.py").read_text(encoding="utf-8"))
    run_config = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RunConfig")
    typed = next(n for n in run_config.body if isinstance(n, ast.If))
    found = {
        n.target.id: ast.unparse(n.annotation)
        for n in typed.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    assert found == {b: f"ClassVar[{cls.__name__}]" for b, cls in config.BLOCKS.items()}


def test_run_config_blocks_travel(cfg: config.RunConfig) -> None:
    """A RunConfig's blocks survive pickling (worker processes) and keep it hashable; an unknown name
    is an AttributeError naming it."""
    import pickle

    again = pickle.loads(pickle.dumps(cfg))
    assert again == cfg and hash(again) == hash(cfg) and again.answer == cfg.answer
    with pytest.raises(AttributeError, match="no attribute or block 'nope'"):
        _ = cfg.nope
