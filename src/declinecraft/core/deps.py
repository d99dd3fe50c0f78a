"""The import graph of the package, read from the source: Make prerequisites and layer checks.

Every ``import`` statement counts, wherever it stands (module level, inside a function, under
``TYPE_CHECKING``), because each one is a dependency: editing the imported module can change what
the importer computes. A stage's prerequisites are the import closure of the modules its notebook
imports, plus the ``__init__`` of every package on the way, so no list is kept by hand.

``python -m declinecraft.core.deps make NOTEBOOK...`` prints the Make variables
(``SRC_<stage> := ...``) that the Makefile includes; ``python -m declinecraft.core.deps check``
prints import cycles and layer violations (the same checks ``tests/project/test_architecture.py`` makes).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

PACKAGE = "declinecraft"
#: The package's source folder (``src/declinecraft``).
SOURCE = Path(__file__).resolve().parents[1]

#: Layers, lowest first: a part may import its own modules and those of lower layers only.
#: ``runtime`` (the machinery: processes, locks, the cache's file, builds, replay) sits above
#: ``core`` and below every science part. ``explore`` reads stage files and may import ``core`` alone.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("runtime",),
    ("llm", "corpus", "retrieval"),
    ("construction", "evaluation"),
    ("views", "harness"),
    ("analysis", "planning"),
    ("paper",),
    ("simulation",),  # make simulate: runs the whole pipeline, reads the planner
)
#: Parts that stand apart from the layers, with the parts they may import.
APART: Mapping[str, tuple[str, ...]] = {"explore": ("core",)}


def module_name(path: Path, source: Path = SOURCE) -> str:
    """Dotted module name of a file under ``source`` (``core/deps.py`` -> ``declinecraft.core.deps``)."""
    rel = path.resolve().relative_to(source).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(source: Path = SOURCE) -> dict[str, Path]:
    """Every module of the package by dotted name."""
    return {module_name(p, source): p for p in sorted(source.rglob("*.py"))}


def _resolve(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(code: str, current: str = "", *, known: Iterable[str], is_package: bool = False) -> set[str]:
    """The package's modules that ``code`` imports anywhere (``from x import y`` counts ``x.y``
    when ``x.y`` is a module, else ``x``)."""
    known = set(known)
    found: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, current, is_package)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name.startswith(PACKAGE):
                found.add(name)
    found.discard(current)
    return found


#: Packages that import their modules by looking for them (:mod:`declinecraft.core.stages`): each
#: counts as importing every module directly inside it.
DISCOVERING = ("declinecraft.core.stages",)


def graph(source: Path = SOURCE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (every import statement counted, and each module
    of a package in :data:`DISCOVERING`)."""
    mods = modules(source)
    edges = {
        name: imports_of(path.read_text(encoding="utf-8"), name, known=mods, is_package=path.name == "__init__.py")
        for name, path in mods.items()
    }
    for package in set(DISCOVERING) & set(edges):
        edges[package] |= {m for m in mods if m.rpartition(".")[0] == package}
    return edges


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def closure(start: Iterable[str], edges: Mapping[str, set[str]]) -> set[str]:
    """Every module that importing ``start`` executes: imports, followed transitively, and the
    ``__init__`` of each package on the way."""
    todo, seen = list(start), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in edges:
            continue
        seen.add(name)
        todo += [*edges[name], *_parents(name)]
    return seen


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def part_of(name: str) -> str:
    """The part (first sub-package) of a module; ``""`` for the package's top-level modules."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (SOURCE / parts[1]).is_dir()) else ""


def allowed(importer: str, imported: str) -> bool:
    """Whether part ``importer`` may import part ``imported`` (same part, lower layer, or apart's list)."""
    if importer == imported or importer == "":
        return True
    if importer in APART:
        return imported in APART[importer]
    rank = {part: i for i, layer in enumerate(LAYERS) for part in layer}
    if imported not in rank or importer not in rank:
        return False
    return rank[imported] < rank[importer]


def violations(edges: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """Imports that break the layers: (importer, imported) module pairs."""
    return sorted((a, b) for a, targets in edges.items() for b in targets if not allowed(part_of(a), part_of(b)))


def notebook_imports(path: Path, known: Iterable[str]) -> set[str]:
    """The package's modules that a notebook's code cells import."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return imports_of("\n".join(lines), known=known)


def stage_sources(notebook: Path, source: Path = SOURCE) -> list[Path]:
    """The source files a stage notebook runs: its import closure, as sorted paths."""
    mods = modules(source)
    return _files(notebook_imports(notebook, mods), mods, graph(source))


def module_sources(module: str, source: Path = SOURCE) -> list[Path]:
    """The source files a ``python -m <module>`` command runs: its import closure, as sorted paths."""
    mods = modules(source)
    if module not in mods:
        raise ValueError(f"no module {module!r} under {source}")
    return _files({module}, mods, graph(source))


def _files(start: Iterable[str], mods: Mapping[str, Path], edges: Mapping[str, set[str]]) -> list[Path]:
    return sorted(mods[m] for m in closure(start, edges))


def make_variables(
    notebooks: Sequence[Path], *, root: Path, source: Path = SOURCE, commands: Mapping[str, str] | None = None
) -> str:
    """``SRC_<notebook stem> := <files>`` lines, paths relative to ``root``; ``commands`` maps a
    variable suffix to a module run with ``python -m`` (e.g. ``explorer`` -> the explorer's CLI).
    The package is parsed once for all of them."""
    mods, edges = modules(source), graph(source)
    unknown = [mod for mod in (commands or {}).values() if mod not in mods]
    if unknown:
        raise ValueError(f"no module {unknown[0]!r} under {source}")
    targets = [(nb.stem, notebook_imports(nb, mods)) for nb in notebooks]
    targets += [(name, {mod}) for name, mod in (commands or {}).items()]
    lines = ["# Generated by python -m declinecraft.core.deps from the imports of each notebook; do not edit."]
    for name, start in targets:
        lines.append(
            f"SRC_{name} := " + " ".join(str(p.resolve().relative_to(root)) for p in _files(start, mods, edges))
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``make NOTEBOOK...`` prints Make variables; ``check`` reports cycles and layer breaks."""
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    sub = parser.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make", help="print SRC_<stage> variables for the given notebooks")
    mk.add_argument("notebooks", nargs="+", type=Path)
    mk.add_argument(
        "--module",
        dest="modules",
        action="append",
        default=[],
        metavar="NAME=MODULE",
        help="also print SRC_NAME for the import closure of MODULE (python -m MODULE)",
    )
    sub.add_parser("check", help="report import cycles and layer violations")
    args = parser.parse_args(argv)
    if args.command == "make":
        root = SOURCE.parents[1]
        commands = dict(c.split("=", 1) for c in args.modules)
        sys.stdout.write(make_variables(args.notebooks, root=root, commands=commands))
        return 0
    edges = graph()
    bad = False
    for scc in cycles(edges):
        bad = True
        print("cycle:", " <-> ".join(scc))
    for a, b in violations(edges):
        bad = True
        print(f"layer: {a} imports {b}")
    print("ok" if not bad else "import structure has problems (see above)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
