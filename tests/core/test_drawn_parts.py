"""Tests for declinecraft.core.drawn_parts: the parts a figure records for its caption."""

from __future__ import annotations

import matplotlib.pyplot as plt

from declinecraft.core import drawn_parts


class TestMark:
    def test_accumulates(self) -> None:
        """Marks add up; a figure marked with nothing has no parts."""
        fig = plt.figure()
        assert drawn_parts.parts(fig) == frozenset()
        drawn_parts.mark(fig, "interval")
        drawn_parts.mark(fig, "P1", "P2")
        assert drawn_parts.parts(fig) == {"interval", "P1", "P2"}
        plt.close(fig)
