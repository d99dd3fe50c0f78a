"""The stages of the pipeline: one module each in this package, found by looking, never listed.

A module here that defines ``STAGE`` (a :class:`~declinecraft.core.declaration.Stage`) is a stage;
the :class:`~declinecraft.core.declaration.Artifact` constants it defines for its own block are
what it writes. :func:`declared` returns them in run order, which is their notebooks' number order:
a stage reads only artifacts of stages numbered before it. Adding a stage is adding a
module here, its notebook and its block in ``params/default.yaml`` (docs/pipeline.md, "Adding a stage").

Standard library only, like the catalogue built from it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import pkgutil

from declinecraft.core import declaration
from declinecraft.core.declaration import Artifact, Stage, UndeclaredRead

#: The variable the Makefile sets to the notebook stem of the stage it runs (``06_judge``).
STAGE_VARIABLE = "DECLINECRAFT_STAGE"


@functools.cache
def declared() -> dict[str, Stage]:
    """Every stage by block, in run order, with the artifacts its module declares as its writes."""
    found: dict[str, Stage] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        stage = getattr(module, "STAGE", None)
        if not isinstance(stage, Stage):
            continue
        if stage.block != info.name:
            raise ValueError(
                f"{module.__name__}: declares stage {stage.block!r}; a stage's module is named for its block"
            )
        if stage.block in found:
            raise ValueError(f"{module.__name__}: stage {stage.block!r} is declared twice")
        writes = tuple(v for v in vars(module).values() if isinstance(v, Artifact) and v.stage == stage.block)
        if stray := [a.name for a in writes if a.notebook != stage.notebook]:
            raise ValueError(f"{module.__name__}: artifacts {stray} are not in {stage.notebook}/")
        found[stage.block] = dataclasses.replace(stage, writes=writes)
    return _run_order(found)


def _run_order(stages: dict[str, Stage]) -> dict[str, Stage]:
    """The stages by notebook number, each of which must read only stages numbered before it."""
    ordered = dict(sorted(stages.items(), key=lambda item: item[1].notebook))
    before: set[str] = set()
    for block, stage in ordered.items():
        upstream = {a.stage for a in stage.reads} - {block}
        if unknown := upstream - set(stages):
            raise ValueError(f"stage {block!r} reads artifacts of undeclared stages {sorted(unknown)}")
        if later := upstream - before:
            names = sorted(stages[b].notebook for b in later)
            raise ValueError(
                f"stage {block!r} ({stage.notebook}) reads artifacts of {names}, numbered after it; "
                "number the notebooks in run order"
            )
        before.add(block)
    return ordered


def artifacts() -> tuple[Artifact, ...]:
    """Every artifact, in run order of the stages that write them."""
    return tuple(a for s in declared().values() for a in s.writes)


def reads(block: str) -> tuple[Artifact, ...]:
    """Every artifact a stage reads: its declared reads and every earlier artifact of its read kinds."""
    stages = declared()
    stage = stages[block]
    earlier = list(stages)[: list(stages).index(block)]
    extra = tuple(a for b in earlier for a in stages[b].writes if a.kind in stage.reads_kinds and a not in stage.reads)
    return stage.reads + extra


def guard_reads(stage_notebook: str | None = None) -> None:
    """Make every artifact path a stage asks for go through its declaration: inside the stage
    whose notebook is ``stage_notebook`` (by default ``$DECLINECRAFT_STAGE``), asking for another
    stage's artifact that it does not declare it reads raises :class:`UndeclaredRead`."""
    stem = stage_notebook if stage_notebook is not None else os.environ.get(STAGE_VARIABLE, "")
    running = next((s for s in declared().values() if s.notebook == stem), None)
    if running is None:
        declaration.set_guard(None)
        return
    allowed = frozenset(reads(running.block))

    def check(artifact: Artifact) -> None:
        if artifact.stage != running.block and artifact not in allowed:
            name = artifact.relative() if artifact.place == "stage" else artifact.name
            raise UndeclaredRead(
                f"stage {running.block} ({running.notebook}) reads {name} "
                f"of stage {artifact.stage}, which its declaration (declinecraft.core.stages.{running.block}) "
                "does not list in its reads"
            )

    declaration.set_guard(check)
