"""What a stage declares: the files it writes (:class:`Artifact`) and the stage itself (:class:`Stage`).

A stage is one module of :mod:`declinecraft.core.stages`: its artifacts, then one :class:`Stage`
naming its params block, its notebook, what it reads (upstream artifacts, data files, prompt
templates), the params keys that name the models it calls, and its entry point. The catalogue, the
params blocks and ``RunConfig``, the bounds check, the referenced models, the Make graph and
docs/pipeline.md's stage table are all computed from these declarations (docs/design.md).

Standard library only: ``python -m declinecraft.runtime.system_packages`` imports the catalogue
before the project's environment exists.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from declinecraft.core import paths

# Runs that write an artifact, when not every run does.
SEVERAL_GENERATORS = "runs that compare generators (generate.generators)"
K2G_ON = "know2guess.enabled"
K2G_OFF = "know2guess.enabled: false"
EVIDENCE_ON = "evidence.enabled"
EVIDENCE_OFF = "evidence.enabled: false"
IMPORTED = "runs made by make import"
OTHER_RUNS = "runs other than default"
OTHER_RUNS_WITH_BIB = "runs other than default, where the project has paper/references.bib"
WITH_PDF = "paper.build_pdf with latexmk installed"
WITH_RESULTS = "runs with judged responses"

#: The conditions a run's config decides (the others depend on what the run found).
_DECIDED: dict[str, Callable[[Any], bool]] = {
    K2G_ON: lambda cfg: bool(cfg.know2guess.enabled),
    K2G_OFF: lambda cfg: not cfg.know2guess.enabled,
    EVIDENCE_ON: lambda cfg: bool(cfg.evidence.enabled),
    EVIDENCE_OFF: lambda cfg: not cfg.evidence.enabled,
    OTHER_RUNS: lambda cfg: cfg.run != "default",
}

#: A model role that stands for every model the run names (a stage that reports on all of them).
EVERY_MODEL = "*"


@dataclass(frozen=True)
class Artifact:
    """One file (or family of files, or folder) a stage writes."""

    stage: str
    """The params block of the stage that writes it (``judge``)."""
    name: str
    """Its name in its place; one ``{}`` makes a family (one file per key), a trailing ``/`` a folder."""
    about: str
    """What it holds: its columns or its kind of content."""
    when: str = ""
    """Which runs write it ("" for every run)."""
    place: str = "stage"
    """Where it sits: ``stage`` (the stage folder), ``paper``, ``tables`` (``paper/tables/``),
    ``figures`` or ``run`` (the run's folder)."""
    notebook: str = ""
    """The stage's notebook stem, also its folder's name (``06_judge``)."""

    @property
    def kind(self) -> str:
        """The file's format, from its suffix (``parquet``, ``csv``, ...); ``folder`` for a folder."""
        return "folder" if self.name.endswith("/") else self.name.rsplit(".", 1)[-1] if "." in self.name else "file"

    def file(self, key: str | None = None) -> str:
        """The file name (a family member's with ``key``)."""
        if ("{}" in self.name) != (key is not None):
            raise ValueError(f"{self.stage}/{self.name}: a family needs a key, a single file none (got {key!r})")
        return self.name.replace("{}", key or "").rstrip("/")

    def folder(self, cfg: Any, run: str | None = None) -> Path:
        """The folder it sits in for run ``cfg`` (the stage's owner's), or for ``run`` when given."""
        if self.place == "stage":
            return cfg.run_dir(run) / self.notebook if run else cfg.stage_dir(self.stage)
        return places(cfg, run)[self.place]

    def path(self, cfg: Any, key: str | None = None, *, run: str | None = None) -> Path:
        """Where it is for run ``cfg`` (in the folder of the run that owns its stage), or for ``run``.

        Inside a stage's notebook (``DECLINECRAFT_STAGE``, set by the Makefile), the path of another
        stage's artifact that the running stage does not declare it reads is an :class:`UndeclaredRead`.
        """
        if _guard is not None:
            _guard(self)
        return self.folder(cfg, run) / self.file(key)

    def relative(self, key: str | None = None) -> str:
        """Its path under a run folder, for a file in a stage folder (``04_verify/benchmark.parquet``)."""
        return f"{self.notebook}/{self.file(key)}"

    @property
    def pattern(self) -> str:
        """Its name as a glob pattern (a family's key as ``*``, a folder without its ``/``)."""
        return self.name.replace("{}", "*").rstrip("/")

    def matches(self, name: str) -> bool:
        """Whether ``name`` (a path relative to its place) is this artifact, or a file inside it."""
        if self.kind == "folder":
            return "/" in name and fnmatch.fnmatchcase(name.split("/", 1)[0], self.pattern)
        return fnmatch.fnmatchcase(name, self.pattern) and name.count("/") == self.pattern.count("/")

    def decided(self, cfg: Any) -> bool | None:
        """Whether runs under ``cfg`` write it: True, False, or None when that depends on what the run finds."""
        if self.when == "":
            return True
        return _DECIDED[self.when](cfg) if self.when in _DECIDED else None

    def required(self, cfg: Any) -> bool:
        """Whether every successful run of its stage under ``cfg`` leaves it (a family never is)."""
        return "{}" not in self.name and self.decided(cfg) is True


class UndeclaredRead(RuntimeError):
    """A stage asked for the path of another stage's file that its declaration does not list."""


#: Checks each artifact path asked for (set by :mod:`declinecraft.core.stages` inside a stage run).
_guard: Callable[[Artifact], None] | None = None


def set_guard(guard: Callable[[Artifact], None] | None) -> None:
    """Install (or remove, with None) the check every :meth:`Artifact.path` call makes."""
    global _guard
    _guard = guard


def places(cfg: Any, run: str | None = None) -> dict[str, Path]:
    """The folders the paper stage writes beside its stage folder, for run ``cfg`` (or ``run``)."""
    figures, paper = paths.paper_dirs(cfg.root, run or cfg.run)
    return {"paper": paper, "tables": paper / "tables", "figures": figures, "run": cfg.run_dir(run)}


def writer(block: str, notebook: str) -> Callable[..., Artifact]:
    """The function a stage module declares its artifacts with: ``_write(name, about, when="", place="stage")``."""

    def declare(name: str, about: str, when: str = "", place: str = "stage") -> Artifact:
        return Artifact(block, name, about, when, place, notebook)

    return declare


def _nothing(cfg: Any) -> list[str]:
    return []


@dataclass(frozen=True)
class Stage:
    """One stage, declared once in its module of :mod:`declinecraft.core.stages`."""

    block: str
    """The params block, also the stage's name (``judge``)."""
    notebook: str
    """The notebook's stem, also the stage folder's name (``06_judge``)."""
    params: type
    """The params dataclass of its block; each number's range is in its annotation
    (:mod:`declinecraft.core.bounds`)."""
    run: str
    """Its entry point, ``module:function`` (``declinecraft.evaluation.judge_stage:run``): the
    notebook calls it. A name, not an import, because core never imports a higher layer."""
    about: str = ""
    """What it does, with the paper's sections (one line: docs/pipeline.md's table)."""
    reads: tuple[Artifact, ...] = ()
    """The artifacts of earlier stages it reads (their stages' outputs are its prerequisites)."""
    reads_kinds: tuple[str, ...] = ()
    """It also reads every artifact of these kinds of every earlier stage (the paper stage reads
    every parquet file for its calls' cache keys)."""
    data: Callable[[Any], list[str]] = _nothing
    """Project-relative data files it reads under a run's config (a folder counts with every file inside)."""
    prompts: tuple[str, ...] = ()
    """The prompt templates of ``params/prompts/`` it may render, by name."""
    models: tuple[str, ...] = ()
    """Its model roles: each a params key naming one model or a list (``judge.oracle``); ``a|b``
    takes ``b`` when ``a`` is empty; :data:`EVERY_MODEL` for every model the run names."""
    writes: tuple[Artifact, ...] = field(default=(), compare=False)
    """The artifacts it writes (filled in from its module by :mod:`declinecraft.core.stages`)."""

    def role_models(self, cfg: Any, role: str) -> tuple[str, ...]:
        """The model ids one role names under ``cfg`` ("" and "none" name no model)."""
        for key in role.split("|"):
            block, name = key.split(".")
            value = getattr(cfg.block(block), name)
            found = tuple(value) if isinstance(value, tuple) else (value,)
            found = tuple(m for m in found if m and m != "none")
            if found or value:
                return found
        return ()
