"""Tests of the package's names: every reference to a module or function in the docstrings and docs
resolves, modules are imported by their own names, and a stage notebook's parameters shadow no
module it imports."""

from __future__ import annotations

import ast
import builtins
import functools
import json
import re
from pathlib import Path

from declinecraft.core import catalogue
from tests.support import projects

REPO = projects.REPO
SOURCE = REPO / "src" / "declinecraft"
#: A Sphinx cross-reference in a docstring: :func:`~declinecraft.core.stats.wilson`, :mod:`.plots`.
ROLE = re.compile(r":(mod|func|class|data|meth|attr|exc|obj):`~?([^`<>]+?)`")
#: A dotted name of the package anywhere in the docs (``python -m declinecraft.core.config``).
DOTTED = re.compile(r"\bdeclinecraft(?:\.[A-Za-z_]\w*)+")


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        found[".".join(parts).removesuffix(".__init__")] = path
    return found


MODULES = _modules()


@functools.cache
def _names(module: str) -> dict[str, ast.AST | str]:
    """The names a module binds at its top level: a definition (its node) or an import (the dotted
    name it refers to). Read from the source, so nothing is imported."""
    names: dict[str, ast.AST | str] = {}
    for node in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update({t.id: node for t in targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            names.update({a.asname or a.name.split(".")[0]: a.name for a in node.names})
    return names


def _members(cls: ast.ClassDef) -> set[str]:
    """What a class defines: methods, fields and class attributes."""
    found = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, ast.Assign):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def _exists(dotted: str) -> bool:
    """Whether ``declinecraft.<...>`` names a module, or an object (and member) one defines or
    imports; an import of another package's name counts as existing."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in MODULES:
            break
    else:
        return False
    rest = parts[cut:]
    if not rest:
        return True
    found = _names(module).get(rest[0])
    if found is None:
        return f"{module}.{rest[0]}" in MODULES and _exists(".".join([module, *rest]))
    if isinstance(found, str):
        return not found.startswith("declinecraft") or _exists(".".join([found, *rest[1:]]))
    if len(rest) == 1:
        return True
    return isinstance(found, ast.ClassDef) and len(rest) == 2 and rest[1] in _members(found)


def _resolves(target: str, module: str) -> bool:
    """Whether a docstring reference resolves: absolute, or from the module, its package, or (a
    method or attribute) one of the module's classes."""
    target = target.strip().removesuffix("()")
    if target.startswith("declinecraft."):
        return _exists(target)
    target = target.lstrip(".")
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    classes = [n for n in _names(module).values() if isinstance(n, ast.ClassDef)]
    return (
        _exists(f"{module}.{target}")
        or _exists(f"{package}.{target}")
        or target.split(".")[0] in dir(builtins)
        or ("." not in target and any(target in _members(c) for c in classes))
    )


class TestReferences:
    def test_docstrings_name_what_exists(self) -> None:
        """Every :mod:, :func:, :class:, :data:, :meth: or :attr: reference in the package's
        docstrings and comments names a module or object that exists."""
        broken = [
            f"{path.relative_to(REPO)}: {match.group(0)}"
            for name, path in MODULES.items()
            for match in ROLE.finditer(path.read_text(encoding="utf-8"))
            if not _resolves(match.group(2), name)
        ]
        assert broken == []

    def test_docs_name_what_exists(self) -> None:
        """Every ``declinecraft.<...>`` named in the docs, the README, the package or the Makefile
        is a module or an object of one."""
        texts = [REPO / "README.md", REPO / "Makefile", *REPO.glob("docs/*.md"), *MODULES.values()]
        broken = {
            f"{path.relative_to(REPO)}: {dotted}"
            for path in texts
            for dotted in DOTTED.findall(path.read_text(encoding="utf-8"))
            if not _exists(dotted)
        }
        assert sorted(broken) == []


def _imports(tree: ast.AST) -> list[tuple[str, str, str | None, int]]:
    """(module, name, alias, line) of every ``from declinecraft... import name [as alias]``."""
    return [
        (node.module, alias.name, alias.asname, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("declinecraft")
        for alias in node.names
    ]


def _notebook_code(path: Path) -> tuple[str, str]:
    """The parameters cell and the rest of a notebook's code."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    parameters = "".join(next(c["source"] for c in code if "parameters" in c["metadata"].get("tags", [])))
    rest = "\n".join("".join(c["source"]) for c in code if "parameters" not in c["metadata"].get("tags", []))
    return parameters, rest


class TestImportNames:
    def test_modules_keep_their_names(self) -> None:
        """A module of the package is imported under its own name; an alias only tells apart two
        modules of one name from different parts (``stage as analysis_stage``)."""
        sources = [*SOURCE.rglob("*.py"), *(REPO / "tests").rglob("*.py"), *(REPO / "benchmarks").glob("*.py")]
        trees = [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sources]
        trees += [(p, ast.parse(_notebook_code(p)[1])) for p in (REPO / "notebooks").glob("*.ipynb")]
        aliased = [
            f"{path.relative_to(REPO)}:{line}: {name} as {alias}"
            for path, tree in trees
            for module, name, alias, line in _imports(tree)
            if alias
            and f"{module}.{name}" in MODULES
            and not any(alias == f"{part}_{name}" for part in module.split(".")[1:])
        ]
        assert aliased == []

    def test_notebook_parameters_shadow_no_module(self) -> None:
        """No stage notebook binds a name both as a papermill parameter (its params block's key)
        and by an import or an assignment in its code."""
        clashes = []
        for stem in map(catalogue.notebook, catalogue.STAGES):
            parameters, rest = _notebook_code(REPO / "notebooks" / f"{stem}.ipynb")
            given = {t.id for n in ast.parse(parameters).body if isinstance(n, ast.Assign) for t in n.targets}
            tree = ast.parse(rest)
            bound = {
                a.asname or a.name.split(".")[0]
                for n in ast.walk(tree)
                if isinstance(n, ast.Import | ast.ImportFrom)
                for a in n.names
            }
            bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            clashes += [f"{stem}: {name}" for name in sorted(given & bound)]
        assert clashes == []

    def test_stage_entry_points(self) -> None:
        """Each stage notebook calls ``run(cfg)`` of a stage module (``<part>/stage.py`` or
        ``<part>/<stage>_stage.py``) imported under its own name."""
        wrong = []
        for stem in map(catalogue.notebook, catalogue.STAGES):
            tree = ast.parse(_notebook_code(REPO / "notebooks" / f"{stem}.ipynb")[1])
            modules = {alias or name: f"{module}.{name}" for module, name, alias, _ in _imports(tree)}
            calls = [
                node.func.value.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
                and isinstance(node.func.value, ast.Name)
            ]
            entry = [modules[c] for c in calls if c in modules]
            if len(entry) != 1 or not re.search(r"\.(stage|\w+_stage)$", entry[0]):
                wrong.append(f"{stem}: {entry}")
                continue
            run = _names(entry[0]).get("run")
            if not isinstance(run, ast.FunctionDef) or [a.arg for a in run.args.args[:1]] != ["cfg"]:
                wrong.append(f"{stem}: {entry[0]} has no run(cfg, ...)")
        assert wrong == []
