"""Tests for declinecraft.core.pipeline: the stage graph from declared reads, and Make deciding from
every input (prompt files, model entries, data files, recorded outputs) on a tiny project."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from declinecraft.core import catalogue, config, pipeline
from tests.support import projects

STAGES = projects.STAGES


def downstream(*blocks: str) -> list[str]:
    """The notebooks of ``blocks`` and of every stage that reads their outputs, in run order."""
    hit = set(blocks)
    return [
        nb
        for b, nb in ((b, s.notebook) for b, s in catalogue.STAGES.items())
        if b in hit or hit & set(catalogue.upstream(b))
    ]


class TestGraph:
    def test_reads_are_stages_before(self) -> None:
        """Each stage reads only stages that run before it (the run order is a topological order)."""
        order = list(catalogue.STAGES)
        for block in catalogue.STAGES:
            assert all(order.index(r) < order.index(block) for r in catalogue.read_stages(block)), block

    def test_views_and_analysis_are_siblings(self) -> None:
        """The analysis reads neither view; the evidence view does not read Know2Guess; the paper reads all three."""
        assert "know2guess" not in catalogue.upstream("analysis") and "evidence" not in catalogue.upstream("analysis")
        assert "know2guess" not in catalogue.upstream("evidence")
        assert {"analysis", "know2guess", "evidence"} <= set(catalogue.upstream("paper"))

    def test_make_variables(self) -> None:
        """The generated Make variables list every stage and its direct reads."""
        text = pipeline.make_variables()
        assert "STAGES := " + " ".join(STAGES) in text
        up = dict(line.split(" := ") for line in text.splitlines() if line.startswith("UP_"))
        assert {"07_analysis", "08_know2guess", "09_evidence"} <= set(up["UP_10_paper"].split())
        assert "08_know2guess" not in up["UP_07_analysis"] and "09_evidence" not in up["UP_07_analysis"]


class TestStagePrompts:
    def test_judge_renders_its_prompts(self) -> None:
        """The judge stage declares the response judge, oracle and accuracy prompts, and no generator prompt."""
        found = set(catalogue.stage("judge").prompts)
        assert {"judge_response", "judge_accuracy", "oracle_answerable", "oracle_unanswerable"} <= found
        assert "generate_scenario" not in found

    def test_declared_prompts_exist(self) -> None:
        """Every prompt a stage declares is a template of params/prompts/."""
        names = {p.stem for p in (projects.REPO / "params" / "prompts").glob("*.txt")}
        for block, stage in catalogue.STAGES.items():
            assert set(stage.prompts) <= names, block

    def test_every_prompt_reaches_a_stage(self) -> None:
        """No template of params/prompts/ is outside the graph: each is declared by some stage."""
        names = {p.stem for p in (projects.REPO / "params" / "prompts").glob("*.txt")}
        reached = {p for s in catalogue.STAGES.values() for p in s.prompts}
        assert names - reached == set()


class TestInputs:
    def test_default_run_reaches_everything(self) -> None:
        """Every model the default run names and its data files are inputs of some stage."""
        cfg = config.load(projects.REPO / "params" / "default.yaml")
        found = {block: pipeline.inputs(cfg, block) for block in catalogue.STAGES}
        models = set().union(*(set(f["models"]) for f in found.values()))
        assert {m for m in config.referenced_models(cfg) if m} - models == set()
        assert "data/miniwiki/miniwiki.xml" in found["corpus"]["data"]
        assert "data/manual_review.yaml" in found["verify"]["data"]
        assert "paper/main.tex" in found["paper"]["data"]


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose every stage looks built (built once, copied per test)."""
    return projects.built_project(tmp_path_factory.mktemp("built"))


@pytest.fixture()
def built(built_once: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the built project for one test (times kept, so Make sees it as built)."""
    project = tmp_path / "project"
    shutil.copytree(built_once, project, symlinks=True)
    return project, projects.make_env(project)


@pytest.mark.slow
class TestMakeDecides:
    def test_prompt_edit(self, built: tuple[Path, dict[str, str]]) -> None:
        """Editing the response judge's prompt reruns the stages that render it and what reads them."""
        project, env = built
        with open(project / "params" / "prompts" / "judge_response.txt", "a") as fh:
            fh.write("\nOne more line.\n")
        renders = [b for b, s in catalogue.STAGES.items() if "judge_response" in s.prompts]
        assert "judge" in renders and "generate" not in renders
        assert projects.would_run(project, env) == downstream(*renders)

    def test_wiki_edit(self, built: tuple[Path, dict[str, str]]) -> None:
        """Editing the wiki dump reruns every stage, from the corpus on."""
        project, env = built
        dump = project / "data" / "miniwiki" / "miniwiki.xml"
        dump.write_text(dump.read_text(encoding="utf-8").replace("the", "teh", 1), encoding="utf-8")
        assert projects.would_run(project, env) == STAGES

    def test_model_entry_edit(self, built: tuple[Path, dict[str, str]]) -> None:
        """Changing the 0.5B's entry reruns the stages that call it, and what reads them; not setup."""
        project, env = built
        models = project / "params" / "models.yaml"
        text = models.read_text(encoding="utf-8")
        entry = "  qwen2.5-coder-0.5b:\n"
        assert entry in text
        models.write_text(text.replace(entry, entry + "    n_ctx: 2048\n"))
        cfg = config.load(project / "params" / "default.yaml")
        calls = [b for b in catalogue.STAGES if "qwen2.5-coder-0.5b" in config.stage_models(cfg, b)]
        assert "generate" not in calls and "answer" in calls
        assert projects.would_run(project, env) == downstream(*calls)

    def test_deleted_output(self, built: tuple[Path, dict[str, str]]) -> None:
        """Deleting judged.parquet reruns the judge stage and every stage that reads it."""
        project, env = built
        (project / "outputs" / "default" / "06_judge" / "judged.parquet").unlink()
        assert projects.would_run(project, env) == downstream("judge")

    def test_view_code_edit(self, built: tuple[Path, dict[str, str]]) -> None:
        """A change in Know2Guess's code reruns Know2Guess and the paper only."""
        project, env = built
        module = project / "src" / "declinecraft" / "views" / "know2guess" / "reliability.py"
        module.write_text(module.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
        assert projects.would_run(project, env) == ["08_know2guess", "10_paper"]

    def test_dry_run_writes_nothing(self, built: tuple[Path, dict[str, str]]) -> None:
        """``make -n`` plans an edited prompt's and a deleted output's reruns without writing a stamp
        or removing an executed notebook (only Make's own .make/ files may be regenerated)."""
        project, env = built

        def files() -> dict[str, tuple[int, int]]:
            found = (p for p in project.rglob("*") if p.is_file() and ".make" not in p.parts)
            return {p.relative_to(project).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in found}

        prompt = project / "params" / "prompts" / "judge_response.txt"
        text = prompt.read_text(encoding="utf-8")
        prompt.write_text(text + "\nOne more line.\n", encoding="utf-8")
        before = files()
        renders = [b for b, s in catalogue.STAGES.items() if "judge_response" in s.prompts]
        assert projects.would_run(project, env) == downstream(*renders)
        assert files() == before
        prompt.write_text(text, encoding="utf-8")
        (project / "outputs" / "default" / "06_judge" / "judged.parquet").unlink()
        before = files()
        assert projects.would_run(project, env) == downstream("judge")
        assert files() == before

    def test_undone_edits(self, built: tuple[Path, dict[str, str]]) -> None:
        """A touched source file and notebook, and a prompt and a wiki edit undone before the next run,
        rerun nothing: Make decides from the inputs' content, not their times."""
        project, env = built
        os.utime(project / "src" / "declinecraft" / "core" / "stats.py", None)
        os.utime(project / "notebooks" / "06_judge.ipynb", None)
        for path in (
            project / "params" / "prompts" / "judge_response.txt",
            project / "data" / "miniwiki" / "miniwiki.xml",
        ):
            text = path.read_text(encoding="utf-8")
            path.write_text(text + "\nan edit\n", encoding="utf-8")
            path.write_text(text, encoding="utf-8")
        assert projects.would_run(project, env) == []


class TestGraphTable:
    def test_docs_show_the_current_graph(self) -> None:
        """The stage table of docs/pipeline.md is `make graph` of the default run, as the declarations say now."""
        table = pipeline.graph_table(config.load(projects.REPO / "params" / "default.yaml"))
        assert table in (projects.REPO / "docs" / "pipeline.md").read_text(encoding="utf-8")
