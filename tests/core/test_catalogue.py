"""Tests for declinecraft.core.catalogue: every stage's files declared once, and no name spelt elsewhere."""

from __future__ import annotations

import ast
import fnmatch
import json
import re
from pathlib import Path

import pytest

from declinecraft.core import catalogue, config, paths
from declinecraft.core.catalogue import Artifact

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "declinecraft"
#: String literals that are a stage file's name but mean something else: (module, literal) -> why.
NOT_STAGE_FILES = {("runtime/bundle.py", "manifest.json"): "the replay bundle's own list of members"}


def undeclared(root: Path, run: str = "default") -> list[str]:
    """Every file a built run left in its stage folders (and, for the default run, the paper's
    generated files) that no artifact of the catalogue declares."""
    found = []
    for s in catalogue.STAGES.values():
        folder = paths.outputs_dir(root) / run / s.notebook
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            name = path.relative_to(folder).as_posix()
            if path.is_file() and name != catalogue.NOT_BUILT and "lock" not in path.name.lower():
                if catalogue.find(s.block, name) is None:
                    found.append(f"{s.notebook}/{name}")
    figures, paper = paths.paper_dirs(root, run)
    for place, folder in (("figures", figures), ("paper", paper), ("tables", paper / "tables")):
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if path.is_file() and path.name not in catalogue.SOURCES.get(place, ()):
                if catalogue.find("paper", path.name, place) is None:
                    found.append(f"{place}/{path.name}")
    return found


def _literal_problems(code: str, where: str) -> list[str]:
    """String literals (docstrings aside) that spell a declared file name or a stage folder."""
    names = {a.name.rstrip("/") for a in catalogue.ARTIFACTS if "{}" not in a.name} | {catalogue.NOT_BUILT}
    stems = "|".join(s.notebook for s in catalogue.STAGES.values())
    folder = re.compile(rf"(?<!notebooks/)\b({stems})\b(?!\.ipynb)")  # a notebook's own file name is no folder
    tree = ast.parse(code)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if (node.value in names and (where, node.value) not in NOT_STAGE_FILES) or folder.search(node.value):
                out.append(f"{where}:{node.lineno}: {node.value[:60]!r}")
        elif isinstance(node, ast.JoinedStr):  # f"chunks_{corpus}.parquet" spells chunks_pre.parquet
            template = "".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values)
            stem = template.rsplit(".", 1)[0].replace("*", "")
            if re.search("[A-Za-z]", stem) and any(fnmatch.fnmatchcase(n, template) for n in names):
                out.append(f"{where}:{node.lineno}: f{template!r}")
    return out


def _notebook_code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lines = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return "\n".join(line for cell in lines for line in cell.splitlines() if not line.lstrip().startswith(("%", "!")))


class TestArtifact:
    def test_file_and_family(self) -> None:
        """A single file has one name; a family's member needs its key."""
        assert catalogue.JUDGE_JUDGED.file() == "judged.parquet"
        assert catalogue.ANALYSIS_TABLE.file("main_grid") == "main_grid.csv"
        with pytest.raises(ValueError, match="needs a key"):
            catalogue.ANALYSIS_TABLE.file()

    def test_paths(self, project: Path) -> None:
        """A stage file sits in its owner's stage folder; the paper's files in the run's paper folders."""
        cfg = config.load(project / "params" / "default.yaml")
        assert catalogue.JUDGE_JUDGED.path(cfg) == project / "outputs" / "default" / "06_judge" / "judged.parquet"
        assert (
            catalogue.JUDGE_JUDGED.path(cfg, run="other")
            == project / "outputs" / "other" / "06_judge" / "judged.parquet"
        )
        assert catalogue.PAPER_TABLE.path(cfg, "table02") == project / "paper" / "tables" / "table02.tex"
        assert catalogue.VERIFY_BENCHMARK.relative() == "04_verify/benchmark.parquet"

    def test_matches(self) -> None:
        """Files match their artifact: by name, by family pattern, or inside a folder artifact."""
        assert catalogue.INDEX_VERSION.matches("index-abc/tantivy/meta.json")
        assert not catalogue.INDEX_VERSION.matches("index-abc")
        assert catalogue.ANALYSIS_TABLE.matches("main_grid.csv") and not catalogue.ANALYSIS_TABLE.matches("x/y.csv")
        assert catalogue.find("index", "manifest.json") is catalogue.INDEX_MANIFEST

    def test_required(self, project: Path) -> None:
        """What every run writes is required; a switched-off view's files are not; a family never is."""
        cfg = config.load(project / "params" / "default.yaml")
        assert catalogue.JUDGE_JUDGED.required(cfg) and not catalogue.K2G_DISABLED.required(cfg)
        assert not catalogue.ANALYSIS_TABLE.required(cfg) and not catalogue.PAPER_MAIN_TEX.required(cfg)


class TestStages:
    def test_same_blocks_everywhere(self) -> None:
        """The catalogue's stages are the params blocks, in run order, each with its declared dataclass."""
        assert list(catalogue.STAGES) == list(config.BLOCKS)
        assert all(config.BLOCKS[b] is s.params for b, s in catalogue.STAGES.items())

    def test_reads_run_before(self) -> None:
        """Every artifact a stage reads is written by a stage that runs before it."""
        order = list(catalogue.STAGES)
        for block, s in catalogue.STAGES.items():
            assert all(order.index(a.stage) < order.index(block) for a in s.reads), block

    def test_names_unique_per_place(self) -> None:
        """No two artifacts of a stage share a name and place: each file is declared once."""
        keys = [(a.stage, a.place, a.name) for a in catalogue.ARTIFACTS]
        assert len(keys) == len(set(keys))

    def test_every_stage_writes(self) -> None:
        """Each stage declares at least one artifact, and every stage but the paper and the
        analysis a manifest or its own record."""
        assert all(catalogue.writes(b) for b in catalogue.STAGES)
        assert catalogue.manifest("judge") is catalogue.JUDGE_MANIFEST

    def test_missing(self, project: Path) -> None:
        """Before a stage ran, every file it always writes is missing."""
        cfg = config.load(project / "params" / "default.yaml")
        assert catalogue.missing(cfg, "generate") == [
            catalogue.GENERATE_DRAFTS.path(cfg),
            catalogue.GENERATE_STAGE.path(cfg),
        ]


class TestDeclared:
    def test_default_run(self) -> None:
        """Every file the default run wrote is declared in the catalogue."""
        if not (paths.outputs_dir(ROOT) / "default" / "executed").is_dir():
            pytest.skip("the default run is not built here (make all)")
        assert undeclared(ROOT) == []

    def test_undeclared_found(self, project: Path) -> None:
        """A stray file in a stage folder is reported."""
        stray = project / "outputs" / "default" / "06_judge" / "extra.parquet"
        stray.parent.mkdir(parents=True)
        stray.touch()
        assert undeclared(project) == ["06_judge/extra.parquet"]


class TestNoLiteralNames:
    def test_source_and_notebooks(self) -> None:
        """No module but the catalogue, and no notebook, spells a stage file's name or a stage folder."""
        found = []
        for path in sorted(SOURCE.rglob("*.py")):
            where = path.relative_to(SOURCE).as_posix()
            if where != "core/catalogue.py" and not where.startswith("core/stages/"):
                found += _literal_problems(path.read_text(encoding="utf-8"), where)
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            found += _literal_problems(_notebook_code(path), path.name)
        assert found == []

    @pytest.mark.parametrize(
        "code",
        [
            'path = folder / "judged.parquet"',
            'folder = run / "06_judge"',
            'path = folder / f"chunks_{corpus}.parquet"',
            'msg = "run 05_answer first"',
        ],
    )
    def test_scan_catches(self, code: str) -> None:
        """The scan reports a literal file name, a stage folder and an f-string spelling a name."""
        assert _literal_problems(code, "x.py")

    def test_scan_passes(self) -> None:
        """Docstrings, notebook file names and the catalogue's own names are fine."""
        code = '"""Reads 06_judge/judged.parquet."""\nheader = "% Generated by notebooks/10_paper.ipynb"\n'
        code += "path = catalogue.JUDGE_JUDGED.path(cfg)\n"
        assert _literal_problems(code, "x.py") == []


def test_artifact_is_hashable() -> None:
    """Artifacts key dictionaries (the analysis' upstream copies)."""
    assert {catalogue.CORPUS_STATS: 1}[
        Artifact("corpus", "stats.csv", catalogue.CORPUS_STATS.about, notebook="01_corpus")
    ] == 1


@pytest.mark.parametrize("block", list(catalogue.STAGES))
def test_notebook_checks_its_outputs(block: str) -> None:
    """Each stage notebook checks its outputs against the catalogue, not a list of its own."""
    code = _notebook_code(ROOT / "notebooks" / f"{catalogue.notebook(block)}.ipynb")
    assert f'catalogue.missing(cfg, "{block}")' in code
