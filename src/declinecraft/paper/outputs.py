"""Where the paper stage writes, and how generated files of an earlier run are cleared.

``figures/`` and ``paper/`` are shared by every run: the ``default`` run writes them at the
project root, any other run under ``outputs/<run>/``. ``main.tex`` finds its figures as
``../figures/<stem>.pdf``, which resolves in both layouts.
"""

from __future__ import annotations

import re
from collections.abc import Set
from pathlib import Path

from declinecraft.analysis.results import FLOAT_PRECISION
from declinecraft.core import paths
from declinecraft.core.config import RunConfig
from declinecraft.core.stage_writer import StageWriter


def output_dirs(cfg: RunConfig) -> tuple[Path, Path]:
    """``(figures, paper)`` folders of a run: the project's own for ``default``, else under outputs/<run>/."""
    return paths.paper_dirs(cfg.root, cfg.run)


def paper_writer(paper_dir: Path, stage_dir: Path) -> StageWriter:
    """The paper stage's writer into its stage folder ``stage_dir`` and the LaTeX folder ``paper_dir``."""
    places = {"paper": paper_dir, "tables": paper_dir / "tables"}
    return StageWriter("paper", stage_dir, places=places, float_precision=FLOAT_PRECISION)


def remove_stale(folder: Path, pattern: re.Pattern[str], keep: Set[str]) -> None:
    """Remove generated files (names matching ``pattern``) this run did not write, so a figure or
    table the run cannot fill never shows an earlier run's version."""
    for path in folder.glob("*") if folder.is_dir() else []:
        if pattern.fullmatch(path.name) and path.name not in keep:
            path.unlink()
