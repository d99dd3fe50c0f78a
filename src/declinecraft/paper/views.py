"""The two views in the paper: their figures and number macros, read from the views' stage folders.

Know2Guess's protocol (``08_know2guess/``) and the evidence levels (``09_evidence/``) each provide
``plot_*`` functions over their own CSVs and a ``macros(folder)`` list; this module draws the
figures as ``figures/k2g_*`` and ``figures/esb_*`` and writes every macro into ``view_numbers.tex``.
A view that did not run (switched off, or no output yet) leaves its figures skipped with the reason
and its macros printed as n/a, never a figure drawn from nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from declinecraft.analysis import view_health
from declinecraft.core import catalogue
from declinecraft.core.catalogue import Artifact
from declinecraft.core.config import RunConfig
from declinecraft.paper import figure_check, view_protocol, view_size
from declinecraft.paper.figures import settle
from declinecraft.paper.latex import escape, macro_file
from declinecraft.paper.outputs import remove_stale
from declinecraft.views.evidence import plots as evidence_plots
from declinecraft.views.evidence import report as evidence_report
from declinecraft.views.know2guess import macros as know2guess_macros
from declinecraft.views.know2guess import plots as know2guess_plots

#: Figure files this module owns (an earlier run's leftovers are removed).
VIEW_FIGURE_FILE = re.compile(r"(k2g|esb)_[a-z0-9_]+\.(pdf|png)")

#: stem -> (drawing function, the view's table it reads, title)
FIGURES: dict[str, tuple[Callable[[pl.DataFrame], Figure], Artifact, str]] = {
    **{
        stem: (draw, table, f"Know2Guess: {stem[4:].replace('_', ' ')}")
        for stem, (draw, table) in know2guess_plots.FIGURES.items()
    },
    "esb_sufficiency_curve": (
        evidence_plots.plot_sufficiency_curve,
        catalogue.EVIDENCE_CURVE,
        "ESB: sufficiency curve",
    ),
    "esb_l5_distribution": (evidence_plots.plot_l5_distribution, catalogue.EVIDENCE_L5_TYPES, "ESB: L5 responses"),
    "esb_prompt_heatmap": (evidence_plots.plot_prompt_heatmap, catalogue.EVIDENCE_CURVE, "ESB: prompt x level"),
    "esb_position_bias": (evidence_plots.plot_position_bias, catalogue.EVIDENCE_POSITION_BIAS, "ESB: position bias"),
    "esb_helpfulness_safety": (
        evidence_plots.plot_helpfulness_safety,
        catalogue.EVIDENCE_SUMMARY,
        "ESB: helpfulness and safety",
    ),
}


def _table(cfg: RunConfig, table: Artifact) -> tuple[pl.DataFrame | None, str]:
    """A view's CSV, or why it is not there."""
    block = table.stage
    if not cfg.block(block).enabled:
        return None, f"the {block} view is switched off in this run ({block}.enabled: false)"
    path = table.path(cfg)
    if not path.is_file():
        return None, f"{path.relative_to(cfg.root)} is missing (the {block} view has not run)"
    frame = pl.read_csv(path, infer_schema_length=10_000)
    return (frame, "") if frame.height else (None, f"{path.name} has no rows in this run")


def write_view_figures(
    cfg: RunConfig,
    folder: Path,
    *,
    formats: tuple[str, ...],
    dpi: int,
    captions: Mapping[str, str] | None = None,
    places: Mapping[str, tuple[float, float]] | None = None,
    created: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """Draw every view figure the run supports into ``folder``; one status row per figure, with
    its layout problems (:func:`figure_check.problems`, '' when none; with ``captions``, also
    what its caption fails to name; each in its box of ``places``, the full width if absent).
    Figure PDFs carry ``created`` as their date."""
    rows, written = [], set()
    for stem, (draw, table, title) in FIGURES.items():
        frame, reason = _table(cfg, table)
        layout: list[str] = []
        drawn: list[str] = []
        if frame is not None:
            caption = None if captions is None else captions.get(stem, "")
            box = (places or {}).get(stem, figure_check.FULL_BOX_IN)
            drawn, layout, files = settle(
                draw(frame), folder, stem, formats, dpi=dpi, created=created, caption=caption, box=box
            )
            written |= files
        rows.append(
            dict(kind="figure", number=0, name=stem, title=title, reason=reason, layout="; ".join(layout), drawn=drawn)
        )
    remove_stale(folder, VIEW_FIGURE_FILE, written)
    return rows


def view_macros(cfg: RunConfig) -> list[tuple[str, str, str]]:
    """Every macro of both views' sections: (name, LaTeX value, what it is). ``KgEnabled`` and
    ``EsbEnabled`` (1 or 0) say whether the run has the view; ``paper/main.tex`` leaves out the
    section of a view that is switched off (its figures are listed as skipped, with the reason)."""
    switches = [
        (f"{prefix}Enabled", "1" if cfg.block(block).enabled else "0", f"{block}.enabled")
        for prefix, block in (("Kg", "know2guess"), ("Esb", "evidence"))
    ]
    rule = cfg.analysis.finding_n
    settings = [
        ("KgMaxTokens", f"{cfg.know2guess.max_tokens:,}", "know2guess.max_tokens"),
        ("KgResamples", f"{cfg.know2guess.bootstrap_resamples:,}", "know2guess.bootstrap_resamples"),
    ]
    out = [
        *switches,
        *settings,
        *know2guess_macros.macros(cfg.stage_dir("know2guess"), min_n=rule, alpha=cfg.analysis.alpha),
        *evidence_report.macros(cfg.stage_dir("evidence"), min_n=rule),
    ]
    # Compliance first: a view whose replies did not follow its protocol prints no behaviour.
    out = view_protocol.gate(out, view_health.collect_views(cfg), cfg.analysis.min_protocol)
    # A view too small to test anything says so in one sentence, pointing to its tables.
    out += view_size.macros(out, rule, cfg.stage_dir("know2guess").parent.relative_to(cfg.root))
    # Text values (model ids, words) are escaped here; values already in LaTeX (a macro, math, a
    # count with its {,} thousands separator) are left alone.
    return [(name, value if _is_latex(value) else escape(value), what) for name, value, what in out]


def _is_latex(value: str) -> bool:
    """Whether a macro value is already LaTeX: a control sequence, math or a ``{,}`` separator."""
    return "\\" in value or "$" in value or "{,}" in value


def view_numbers_tex(macros: list[tuple[str, str, str]], source: str = "notebooks/10_paper.ipynb") -> str:
    """``\\newcommand`` lines for the views' macros (``paper/view_numbers.tex``)."""
    return macro_file("declinecraft.paper.views", macros, source=source)
