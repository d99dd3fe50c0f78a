"""One colour per model family, the same in every figure of every run.

A family's colour is fixed by its place among the families of the model registry
(``params/models.yaml``), sorted by name, so it never depends on which families a figure
happens to show. A model is drawn in its family's colour wherever models are drawn (the
paper's scatter plots colour configurations by family, the views' curves colour them by
model); two models of one family share the colour and are told apart by their marker
(:func:`model_styles`). A family or model the registry lacks comes after the registry's
families, sorted, so it still gets a colour of its own.

Colours are hex strings (matplotlib's ``tab20`` and ``Set1`` values), so this module needs no
plotting library.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

from declinecraft.core import paths, registry

#: ``tab20`` (darker shade of each pair first, then the lighter ones), then ``Set1``: 29
#: distinguishable colours; the registry has 22 families.
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
    "#e41a1c",
    "#377eb8",
    "#4daf4a",
    "#984ea3",
    "#ff7f00",
    "#a65628",
    "#f781bf",
    "#999999",
    "#ffff33",
)
#: Markers that tell apart models of one family, in the registry's order.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
#: The registry the colours are read from, relative to the project root.
MODELS_FILE = Path("params/models.yaml")


@functools.cache
def _registry(models_file: Path | None) -> dict[str, registry.ModelSpec]:
    path = models_file or paths.find_root(Path(__file__)) / MODELS_FILE
    return registry.load_models(path) if path.is_file() else {}


def _family_order(extra: Iterable[str], models_file: Path | None) -> list[str]:
    known = sorted({s.family or s.id for s in _registry(models_file).values()})
    return known + sorted({f for f in extra if f and f not in known})


def family_colors(families: Iterable[str], models_file: Path | None = None) -> dict[str, str]:
    """The colour of each family named (fixed by the registry, whatever else a figure shows)."""
    wanted = [f for f in families if f]
    order = _family_order(wanted, models_file)
    return {f: PALETTE[order.index(f) % len(PALETTE)] for f in wanted}


def model_styles(models: Iterable[str], models_file: Path | None = None) -> dict[str, tuple[str, str]]:
    """Each model's (colour, marker): its family's colour, and a marker by its place in the family."""
    specs = _registry(models_file)
    wanted = list(dict.fromkeys(m for m in models if m))
    family = {m: (specs[m].family or m) if m in specs else m for m in wanted}
    colors = family_colors(family.values(), models_file)
    siblings = {f: [m for m in specs if (specs[m].family or m) == f] for f in set(family.values())}
    out = {}
    for model in wanted:
        members = siblings[family[model]] or [model]
        place = members.index(model) if model in members else len(members)
        out[model] = (colors[family[model]], MARKERS[place % len(MARKERS)])
    return out
