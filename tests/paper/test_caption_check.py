"""Tests for declinecraft.paper.caption_check: captions read from the LaTeX source, and the axis
quantities a caption leaves unnamed."""

from __future__ import annotations

import matplotlib.pyplot as plt

from declinecraft.paper import caption_check


def test_captions_read_with_nested_braces() -> None:
    """Both figure macros, with or without a number, give stem -> caption, braces kept whole."""
    tex = "\\dcfigure[2]{fig02_x}{CAR at each $k$ (\\emph{single}).}\n\\dcfigurewide{k2g_y}{Reliability $R_\\lambda$.}"
    assert caption_check.captions(tex) == {
        "fig02_x": "CAR at each $k$ (\\emph{single}).",
        "k2g_y": "Reliability $R_\\lambda$.",
    }


class TestNamed:
    def test_abbreviation(self) -> None:
        """ "CAR" in a caption names the axis "Correct Abstention Rate (%)"."""
        assert caption_check.named("CAR per model.", "Correct Abstention Rate (%)")

    def test_plural_and_case(self) -> None:
        """ "abstentions" names "Abstention"; case does not matter."""
        assert caption_check.named("Missed abstentions per model.", "abstention (%)")

    def test_greek_from_latex(self) -> None:
        """$R_\\lambda$ in LaTeX names the axis "λ (weight of ...)" and "R_λ"."""
        assert caption_check.named("Reliability $R_\\lambda$.", "λ (weight of productive abstention)")
        assert caption_check.named("Reliability $R_\\lambda$.", "R_λ")

    def test_generic_words_name_nothing(self) -> None:
        """A caption sharing only "share" and "rate" with the axis does not name it."""
        assert not caption_check.named("Attempt share per model.", "Answer Accuracy rate (%)")


def test_unnamed_figure() -> None:
    """A caption written for another figure leaves both axes unnamed, each named in the problem."""
    fig, ax = plt.subplots()
    ax.set(xlabel="Answerable Attempt Rate (%)", ylabel="Answer Accuracy (%)")
    assert caption_check.unnamed("CAR per configuration.", caption_check.axis_quantities(fig)) == [
        "caption does not name 'Answerable Attempt Rate (%)'",
        "caption does not name 'Answer Accuracy (%)'",
    ]
    assert caption_check.unnamed("Attempt rate against accuracy.", caption_check.axis_quantities(fig)) == []
    plt.close(fig)
