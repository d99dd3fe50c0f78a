"""The pipeline as declared data: what each stage reads, and the stamps Make decides from.

Each stage declares once, in its module of :mod:`declinecraft.core.stages`, the artifacts it reads
(from which come the stages whose outputs it reads), the prompt templates it renders, the params
keys that name the models it calls and the data files it reads; its source files are derived from
its notebook's imports (:mod:`declinecraft.core.deps`). From these:

* ``python -m declinecraft.core.pipeline make`` prints the Make variables of the graph: the stage
  order and each stage's upstream stages (``UP_<notebook>``). No stage chain is kept by hand.
* :func:`write_inputs` writes ``outputs/<run>/params/<block>.inputs.json`` (the sha256 of every
  prompt file, model entry and data file the stage uses), rewritten only when one changes: a
  Make prerequisite of the stage, so editing a prompt reruns exactly the stages that render it,
  editing the wiki dump reruns the corpus stage, editing one model's entry reruns the stages that
  call that model, and what reads their outputs follows.
* :func:`write_code` writes ``outputs/<run>/params/<block>.code.json`` likewise: the sha256 of the
  stage's notebook and of every source file its imports reach, so a touched file, or an edit
  undone before the next run, reruns nothing.
* :func:`record_outputs` (after a stage's notebook succeeded) writes
  ``outputs/<run>/params/<block>.outputs.json``: every file the stage wrote, with its size and
  modification time. :func:`check_outputs`, run before Make decides, removes the executed
  notebook of a stage one of whose outputs is missing or changed, so Make reruns that stage and
  whatever reads it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import yaml

from declinecraft.core import catalogue, deps, environment, paths
from declinecraft.core.config import RunConfig, fingerprint, load, stage_models
from declinecraft.core.registry import ModelSpec, load_models


def _files(root: Path, relative: str) -> list[Path]:
    path = Path(relative) if Path(relative).is_absolute() else root / relative
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.is_file() else []


def inputs(
    cfg: RunConfig, block: str, registry: dict[str, ModelSpec] | None = None, *, remember: bool = True
) -> dict[str, dict[str, str]]:
    """The stage's non-code inputs and their hashes: prompt files, model entries, data files.

    A model the registry lacks is recorded as ``"missing"`` (the stage itself reports it). File
    hashes are remembered by size and modification time (:func:`environment.file_hashes`), so an
    unchanged wiki dump is not read again each time Make decides.
    """
    stage = catalogue.stage(block)
    registry = load_models(cfg.resolve(cfg.models_file)) if registry is None else registry
    prompt_files = {n: cfg.root / "params" / "prompts" / f"{n}.txt" for n in sorted(stage.prompts)}
    data_files = {relative: _files(cfg.root, relative) for relative in stage.data(cfg)}
    every = [*prompt_files.values(), *(p for found in data_files.values() for p in found)]
    hashes = environment.file_hashes(every, cfg.cache_dir / "inputs-sha256.json", remember=remember)
    data: dict[str, str] = {}
    for relative, found in data_files.items():
        for path in found:
            name = paths.under(path, cfg.root).as_posix()
            data[name] = hashes[str(path.resolve())]
        if not found:
            data[relative] = "absent"
    return {
        "prompts": {n: hashes[str(p.resolve())] for n, p in prompt_files.items()},
        "models": {
            m: fingerprint(dataclasses.asdict(registry[m])) if m in registry else "missing"
            for m in sorted(stage_models(cfg, block))
        },
        "data": dict(sorted(data.items())),
    }


def write_inputs(cfg: RunConfig, *, dry: bool = False) -> list[Path]:
    """Write ``outputs/<run>/params/<block>.inputs.json`` for every stage, each only when it changed
    (with ``dry``, return the ones that would change and write nothing)."""
    changed = []
    registry = load_models(cfg.resolve(cfg.models_file))
    for block in catalogue.STAGES:
        target = cfg.run_dir() / "params" / f"{block}.inputs.json"
        found = inputs(cfg, block, registry, remember=not dry)
        if paths.write_text_if_changed(target, json.dumps(found, indent=1, sort_keys=True) + "\n", dry=dry):
            changed.append(target)
    return changed


def code_files(cfg: RunConfig) -> dict[str, list[Path]]:
    """Each stage's code: its notebook and the source files its imports reach (:mod:`declinecraft.core.deps`)."""
    source = cfg.root / "src" / deps.PACKAGE
    source = source if source.is_dir() else deps.SOURCE
    mods, edges = deps.modules(source), deps.graph(source)
    found = {}
    for block in catalogue.STAGES:
        notebook = cfg.root / "notebooks" / f"{catalogue.notebook(block)}.ipynb"
        start = deps.notebook_imports(notebook, mods) if notebook.is_file() else set()
        found[block] = [notebook, *sorted(mods[m] for m in deps.closure(start, edges))]
    return found


def write_code(cfg: RunConfig, *, dry: bool = False) -> list[Path]:
    """Write ``outputs/<run>/params/<block>.code.json`` (the sha256 of the stage's notebook and of
    every source file it runs) for every stage, each only when it changed.

    It stands for the code in Make's prerequisites, so a stage reruns when its code's content
    changes, not when a file is merely touched or an edit is undone before the next run.
    """
    changed = []
    found = code_files(cfg)
    every = [p for files in found.values() for p in files if p.is_file()]
    hashes = environment.file_hashes(every, cfg.cache_dir / "inputs-sha256.json", remember=not dry)
    for block, files in found.items():
        record = {paths.under(p, cfg.root).as_posix(): hashes.get(str(p.resolve()), "absent") for p in files}
        target = cfg.run_dir() / "params" / f"{block}.code.json"
        if paths.write_text_if_changed(target, json.dumps(record, indent=1, sort_keys=True) + "\n", dry=dry):
            changed.append(target)
    return changed


def _written(path: Path) -> bool:
    # Lock files come and go with readers (Tantivy's meta lock): they are not outputs.
    return path.is_file() and "lock" not in path.name.lower()


def output_files(cfg: RunConfig, block: str) -> list[Path]:
    """Every file the stage wrote: its stage folder, and what the paper stage writes beside it
    (the catalogue's artifacts in ``figures/``, ``paper/`` and ``paper/tables/``)."""
    folder = cfg.stage_dir(block)
    found = [p for p in folder.rglob("*") if _written(p)] if folder.is_dir() else []
    for artifact in catalogue.writes(block):
        if artifact.place not in ("paper", "tables", "figures") or artifact.decided(cfg) is False:
            continue
        where = artifact.folder(cfg)
        # The default run writes into the project's own paper/ and figures/, beside their sources.
        sources = catalogue.SOURCES.get(artifact.place, ()) if where.parent == cfg.root else ()
        for path in where.glob(artifact.pattern):
            name = path.relative_to(where).as_posix()
            if path.is_file() and artifact.matches(name) and name not in sources:
                found.append(path)
    return sorted(found)


def _stamp(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _outputs_file(cfg: RunConfig, block: str) -> Path:
    return cfg.run_dir() / "params" / f"{block}.outputs.json"


def record_outputs(cfg: RunConfig, block: str) -> Path:
    """Record the size and modification time of every file the stage just wrote."""
    files = {p.relative_to(cfg.root).as_posix(): _stamp(p) for p in output_files(cfg, block)}
    return paths.write_text_atomic(_outputs_file(cfg, block), json.dumps(files, indent=1, sort_keys=True) + "\n")


def changed_outputs(cfg: RunConfig, block: str) -> list[str]:
    """The recorded outputs of a stage that are now missing or changed (empty: all as written)."""
    record = _outputs_file(cfg, block)
    if not record.is_file():
        return []
    try:
        files = json.loads(record.read_text(encoding="utf-8"))
    except ValueError:
        return [record.relative_to(cfg.root).as_posix()]
    changed = []
    for name, stamp in files.items():
        path = cfg.root / name
        if not path.is_file() or _stamp(path) != stamp:
            changed.append(name)
    return changed


def check_outputs(cfg: RunConfig, *, dry: bool = False) -> list[Path]:
    """Remove the executed notebook of every stage (this run's own) whose outputs changed; say why.
    Return those notebooks (with ``dry``, remove nothing)."""
    reruns = []
    for block in catalogue.STAGES:
        notebook = catalogue.notebook(block)
        if cfg.owner(block) != cfg.run:
            continue
        target = cfg.run_dir() / "executed" / f"{notebook}.ipynb"
        if target.is_file() and (changed := changed_outputs(cfg, block)):
            more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
            print(f">> {notebook} reruns: its output {changed[0]}{more} is missing or changed", file=sys.stderr)
            if not dry:
                target.unlink()
                _outputs_file(cfg, block).unlink()
            reruns.append(target)
    return reruns


def make_variables() -> str:
    """The Make variables of the graph: ``STAGES`` in run order and ``UP_<notebook>`` per stage."""
    lines = ["# Generated by `python -m declinecraft.core.pipeline make` -- do not edit."]
    lines.append("STAGES := " + " ".join(map(catalogue.notebook, catalogue.STAGES)))
    for block in catalogue.STAGES:
        notebook = catalogue.notebook(block)
        lines.append(f"UP_{notebook} := " + " ".join(catalogue.notebook(b) for b in catalogue.read_stages(block)))
    return "\n".join(lines) + "\n"


def graph_table(cfg: RunConfig) -> str:
    """The stage table of docs/pipeline.md and ``make graph``: each stage, what it reads, calls and renders."""
    lines = [
        "| stage | notebook | reads the outputs of | models (this run) | prompts | data |",
        "|---|---|---|---|---|---|",
    ]
    registry = load_models(cfg.resolve(cfg.models_file))
    for block in catalogue.STAGES:
        notebook = catalogue.notebook(block)
        found = inputs(cfg, block, registry)
        cell = lambda items: ", ".join(f"`{i}`" for i in items) or "–"  # noqa: E731
        reads = [catalogue.notebook(b) for b in catalogue.read_stages(block)]
        lines.append(
            f"| {block} | `{notebook}` | {cell(reads)} | {cell(found['models'])} | {cell(found['prompts'])} "
            f"| {cell(n for n, h in found['data'].items() if h != 'absent')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """``make`` | ``graph PARAMS`` | ``stamp [--dry] PARAMS`` (inputs, then outputs checked) | ``record STAMP``."""
    if argv == ["make"]:
        print(make_variables(), end="")
        return 0
    if len(argv) == 2 and argv[0] == "graph":
        print(graph_table(load(argv[1])), end="")
        return 0
    if len(argv) in (2, 3) and argv[0] == "stamp" and argv[1:-1] in ([], ["--dry"]):
        dry = argv[1] == "--dry"
        cfg = load(argv[-1])
        chain: RunConfig | None = cfg
        stale: list[Path] = []
        while chain is not None:  # a derived run reads its base's outputs: check the base too
            stale += write_inputs(chain, dry=dry) + write_code(chain, dry=dry) + check_outputs(chain, dry=dry)
            chain = chain.base
        if dry:  # make -n: say which stamps would change (and which notebooks go) instead
            print(*(p.relative_to(cfg.root).as_posix() for p in stale))
        return 0
    if len(argv) == 2 and argv[0] == "record":
        # The stage's params stamp (outputs/<run>/params/<block>.yaml) names the run and the block.
        stamp = Path(argv[1])
        if not stamp.is_file():  # a notebook run without the pipeline's stamps: nothing to record against
            print(f"pipeline: no stage stamp {stamp}; outputs not recorded", file=sys.stderr)
            return 0
        block = stamp.stem
        params_file = yaml.safe_load(stamp.read_text(encoding="utf-8"))["params_file"]
        record_outputs(load(paths.find_root(stamp) / params_file), block)
        return 0
    usage = "make | graph PARAMS | stamp [--dry] PARAMS | record STAGE_STAMP"
    print(f"usage: python -m declinecraft.core.pipeline {usage}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
