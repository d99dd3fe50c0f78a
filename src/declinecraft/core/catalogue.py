"""The catalogue of the pipeline: every stage, every file it writes and every file it reads.

Each stage declares these once, in its module of :mod:`declinecraft.core.stages` (a stage's files
are :class:`Artifact` constants there: ``JUDGE_JUDGED`` is ``06_judge/judged.parquet``); this module
is the one place the rest of the code asks. ``catalogue.JUDGE_JUDGED`` is the stage module's constant,
found by name. The code that writes a file and the code that reads it both ask its artifact for the
path (:meth:`Artifact.path`), so no file name is spelt anywhere else. From what each stage reads come
the stages it reads (:func:`read_stages`), the Make graph (:mod:`declinecraft.core.pipeline`) and
which base run owns a stage of a derived run (:meth:`declinecraft.core.config.RunConfig.owner`).

An artifact's name may hold one ``{}``: a family of files, one per key (the analysis stage's
``<table>.csv``, the paper's figures). Most artifacts sit in their stage's folder
(``outputs/<run>/NN_stage/``); the paper stage also writes into the run's ``paper/`` and
``figures/`` folders (the project's own for the default run, :func:`declinecraft.core.paths.paper_dirs`)
and the run's folder itself. ``when`` says which runs write an artifact ("" for every run).

Standard library only: ``python -m declinecraft.runtime.system_packages`` imports it before the
project's environment exists.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from declinecraft.core import stages
from declinecraft.core.declaration import (  # noqa: F401  (re-exported: the catalogue's vocabulary)
    EVIDENCE_OFF,
    EVIDENCE_ON,
    IMPORTED,
    K2G_OFF,
    K2G_ON,
    OTHER_RUNS,
    OTHER_RUNS_WITH_BIB,
    SEVERAL_GENERATORS,
    WITH_PDF,
    WITH_RESULTS,
    Artifact,
    Stage,
    places,
)
from declinecraft.core.stages.corpus import CORPUS_CHUNKS, CORPUS_PAGES  # noqa: F401  (by corpus name)

#: The marker of a stage whose code does not exist yet (written by
#: :func:`declinecraft.core.stage_writer.not_built`, removed when the stage first runs).
NOT_BUILT = "NOT_BUILT.md"

#: The stages in run order: their notebooks' number order (a stage reads only stages numbered before it).
STAGES: dict[str, Stage] = stages.declared()

#: Every artifact, in stage order.
ARTIFACTS: tuple[Artifact, ...] = stages.artifacts()

_PAPER = STAGES["paper"].writes
#: Files in the paper's folders that are the project's own sources, not outputs (the default run
#: writes its paper into the project's ``paper/`` and ``figures/``).
SOURCES = {
    "paper": tuple(a.name for a in _PAPER if a.name in ("main.tex", "references.bib") and a.place == "paper"),
    "figures": ("README.md",),
}


def __getattr__(name: str) -> Artifact:
    """A stage module's constant by name (``CORPUS_CHUNKS_PRE``, ``JUDGE_JUDGED``, ``CORPUS_CHUNKS``)."""
    if name.isupper() or name.startswith(tuple(f"{b.upper()}_" for b in STAGES)):
        for stage in STAGES.values():
            module = sys.modules[f"{stages.__name__}.{stage.block}"]
            if name in vars(module):
                found: Artifact = vars(module)[name]
                return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def stage(block: str) -> Stage:
    """The stage of a params block (KeyError naming the known blocks for another name)."""
    try:
        return STAGES[block]
    except KeyError:
        raise KeyError(f"no stage {block!r} (stages: {', '.join(STAGES)})") from None


def notebook(block: str) -> str:
    """The notebook stem and stage folder name of a block (``judge`` -> ``06_judge``)."""
    return stage(block).notebook


def block_of(notebook_stem: str) -> str:
    """The block of a notebook stem (``06_judge`` -> ``judge``)."""
    found = [s.block for s in STAGES.values() if s.notebook == notebook_stem]
    if not found:
        raise KeyError(f"no stage notebook {notebook_stem!r}")
    return found[0]


def writes(block: str) -> tuple[Artifact, ...]:
    """The artifacts a stage writes, in declaration order."""
    stage(block)
    return tuple(a for a in ARTIFACTS if a.stage == block)


def read_stages(block: str) -> tuple[str, ...]:
    """The blocks whose artifacts a stage reads directly, in run order."""
    found = {a.stage for a in stages.reads(block)} - {block}
    return tuple(b for b in STAGES if b in found)


def upstream(block: str) -> list[str]:
    """Every block whose outputs ``block`` reads, directly or through another stage, in run order."""
    seen: set[str] = set()
    todo = list(read_stages(block))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(read_stages(name))
    return [b for b in STAGES if b in seen]


def find(block: str, name: str, place: str = "stage") -> Artifact | None:
    """The artifact of stage ``block`` that file ``name`` (relative to ``place``) is, or None."""
    for artifact in writes(block):
        if artifact.place == place and "{}" not in artifact.name and artifact.matches(name):
            return artifact
    return next((a for a in writes(block) if a.place == place and a.matches(name)), None)


def manifest(block: str) -> Artifact:
    """The manifest a stage writes (KeyError for a stage without one)."""
    found = [a for a in writes(block) if a.place == "stage" and a.name == "manifest.json"]
    if not found:
        raise KeyError(f"stage {block!r} declares no manifest")
    return found[0]


def missing(cfg: Any, block: str) -> list[Path]:
    """The files a successful run of stage ``block`` under ``cfg`` leaves that are not there."""
    return [a.path(cfg) for a in writes(block) if a.required(cfg) and not a.path(cfg).exists()]
