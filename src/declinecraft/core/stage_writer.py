"""How every stage writes its files: atomically, only the catalogue's artifacts, with its manifest and timing.

A stage opens one :class:`StageWriter` when it starts (:meth:`StageWriter.of`) and writes each of
its artifacts (:mod:`declinecraft.core.catalogue`) through it: a frame as its file's format says
(:func:`write_frame`), text, JSON, the stage manifest. Every write goes to a temporary file
renamed into place (:func:`declinecraft.core.paths.atomic_path`), so a killed run never leaves a
truncated file under an output's name. The writer times the stage (:meth:`StageWriter.seconds`,
:meth:`StageWriter.lap`) and, when the stage finishes (:meth:`StageWriter.finish`), removes the
"not built" marker (:func:`not_built`) and any marker of an earlier switched-off run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from declinecraft.core import catalogue, paths
from declinecraft.core.catalogue import Artifact

if TYPE_CHECKING:
    from declinecraft.core.config import RunConfig


def write_frame(frame: pl.DataFrame, target: Path, *, float_precision: int | None = None) -> Path:
    """Write ``frame`` atomically as ``target``'s suffix says: Parquet, JSON lines, or CSV (nested
    columns as text; floats to ``float_precision`` digits when given). Returns ``target``."""
    with paths.atomic_path(target) as tmp:
        if target.suffix == ".parquet":
            frame.write_parquet(tmp)
        elif target.suffix == ".jsonl":
            frame.write_ndjson(tmp)
        else:
            flat = frame.with_columns(pl.col(c).cast(pl.String) for c, t in frame.schema.items() if t.is_nested())
            flat.write_csv(tmp, float_precision=float_precision)
    return target


def json_text(data: Any, *, indent: int | None = 2, sort_keys: bool = False, end: str = "\n") -> str:
    """``data`` as the stages write JSON (values JSON lacks, such as dates, as text)."""
    return json.dumps(data, indent=indent, sort_keys=sort_keys, default=str) + end


def not_built(cfg: RunConfig, stage: str) -> Path:
    """Record that a stage's code does not exist yet, so its notebook runs without faking results.

    Writes the stage's :data:`~declinecraft.core.catalogue.NOT_BUILT` marker and returns its path;
    downstream stages see the marker and say so instead of inventing inputs.
    """
    message = f"Stage {stage!r} is not built yet: this run has no {stage} outputs.\n"
    path = paths.write_text_atomic(cfg.stage_dir(stage) / catalogue.NOT_BUILT, message)
    print(message.strip())
    return path


class StageWriter:
    """Writes one stage's artifacts into its folder and times the stage."""

    def __init__(
        self,
        block: str,
        folder: Path,
        *,
        places: Mapping[str, Path] | None = None,
        float_precision: int | None = None,
    ) -> None:
        self.block = block
        self.folder = folder
        self.places = {**(places or {}), "stage": folder}
        """The folder of each place it writes (:attr:`declinecraft.core.catalogue.Artifact.place`)."""
        self.float_precision = float_precision
        self.started = self._mark = time.monotonic()
        self.laps: dict[str, float] = {}
        """Seconds of each part timed with :meth:`lap`, in order."""

    @classmethod
    def of(
        cls, cfg: RunConfig, block: str, *, own_run: bool = False, float_precision: int | None = None
    ) -> StageWriter:
        """The writer of stage ``block`` of run ``cfg``: into the stage folder of the run that owns
        it, or (``own_run``) of ``cfg``'s own run, and the run's paper folders."""
        folder = cfg.run_dir() / catalogue.notebook(block) if own_run else cfg.stage_dir(block)
        return cls(block, folder, places=catalogue.places(cfg), float_precision=float_precision)

    def path(self, artifact: Artifact, key: str | None = None) -> Path:
        """Where ``artifact`` (an artifact of this stage) goes.

        Raises:
            ValueError: the artifact is another stage's, or sits in a place this writer has no folder for.
        """
        if artifact.stage != self.block or artifact.place not in self.places:
            raise ValueError(f"stage {self.block!r} does not write {artifact.stage}'s {artifact.place} {artifact.name}")
        return self.places[artifact.place] / artifact.file(key)

    def frame(self, artifact: Artifact, frame: pl.DataFrame, key: str | None = None) -> Path:
        """Write a frame as ``artifact`` (:func:`write_frame`)."""
        return write_frame(frame, self.path(artifact, key), float_precision=self.float_precision)

    def text(self, artifact: Artifact, text: str, key: str | None = None) -> Path:
        """Write text as ``artifact``."""
        return paths.write_text_atomic(self.path(artifact, key), text)

    def json(
        self, artifact: Artifact, data: Any, *, indent: int | None = 2, sort_keys: bool = False, end: str = "\n"
    ) -> Path:
        """Write ``data`` as JSON (:func:`json_text`) as ``artifact``."""
        return self.text(artifact, json_text(data, indent=indent, sort_keys=sort_keys, end=end))

    def manifest(self, data: dict[str, Any], *, sort_keys: bool = False) -> Path:
        """Write the stage's ``manifest`` artifact: ``data``, indented by two."""
        return self.json(catalogue.manifest(self.block), data, sort_keys=sort_keys)

    def remove(self, *artifacts: Artifact) -> None:
        """Remove stale files of this stage (absent ones are fine)."""
        for artifact in artifacts:
            self.path(artifact).unlink(missing_ok=True)

    def seconds(self) -> float:
        """Seconds since the stage started, to a tenth."""
        return round(time.monotonic() - self.started, 1)

    def mark(self) -> None:
        """Start timing a part of the stage (the next :meth:`lap`)."""
        self._mark = time.monotonic()

    def lap(self, name: str) -> None:
        """Record the seconds since the last :meth:`mark` or :meth:`lap` as part ``name`` of ``laps``."""
        now = time.monotonic()
        self.laps[name] = round(now - self._mark, 1)
        self._mark = now

    def timing(self) -> dict[str, float]:
        """Every part timed so far, and the stage's ``total``."""
        return {**self.laps, "total": self.seconds()}

    def finish(self, *stale: Artifact) -> None:
        """The stage is done: remove the "not built" marker and the ``stale`` markers of earlier runs."""
        (self.folder / catalogue.NOT_BUILT).unlink(missing_ok=True)
        self.remove(*stale)
