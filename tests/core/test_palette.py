"""Tests for declinecraft.core.palette: one colour per family and model, in every figure."""

from __future__ import annotations

from declinecraft.core import palette, registry
from declinecraft.core.paths import find_root

SPECS = registry.load_models(find_root() / palette.MODELS_FILE)


def _family_of(model: str) -> str:
    return SPECS[model].family or model


class TestFamilyColors:
    def test_same_whatever_else_is_drawn(self) -> None:
        """A family's colour does not depend on the other families a figure shows."""
        alone = palette.family_colors(["SmolLM2"])
        crowded = palette.family_colors(["Gemma 3", "Qwen2.5", "SmolLM2", "Abstain-R1"])
        assert alone["SmolLM2"] == crowded["SmolLM2"]

    def test_every_registry_family_distinct(self) -> None:
        """The registry's families all get different colours."""
        families = {s.family for s in SPECS.values() if s.family}
        colors = palette.family_colors(families)
        assert len(families) <= len(palette.PALETTE) and len(set(colors.values())) == len(families)

    def test_unknown_family_gets_its_own(self) -> None:
        """A family the registry lacks still gets a colour no registry family has."""
        known = set(palette.family_colors({s.family for s in SPECS.values() if s.family}).values())
        assert palette.family_colors(["No Such Family"])["No Such Family"] not in known


class TestModelStyles:
    def test_model_in_its_family_colour(self) -> None:
        """A model is drawn in its family's colour, the one the scatter plots use."""
        model = next(m for m, s in SPECS.items() if s.family)
        color, _ = palette.model_styles([model])[model]
        assert color == palette.family_colors([_family_of(model)])[_family_of(model)]

    def test_siblings_share_colour_not_marker(self) -> None:
        """Two models of one family share the colour and differ in marker."""
        by_family: dict[str, list[str]] = {}
        for model in SPECS:
            by_family.setdefault(_family_of(model), []).append(model)
        first, second = next(ms for ms in by_family.values() if len(ms) > 1)[:2]
        styles = palette.model_styles([second, first])
        assert styles[first][0] == styles[second][0] and styles[first][1] != styles[second][1]

    def test_unknown_model(self) -> None:
        """A model outside the registry gets a colour of its own and the first marker."""
        assert palette.model_styles(["not-a-model"])["not-a-model"][1] == palette.MARKERS[0]
