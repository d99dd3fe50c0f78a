"""Tests for declinecraft.paper.caption_check: captions read from the LaTeX source, and the axis
quantities a caption leaves unnamed."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.figure import Figure

from declinecraft.core import drawn_parts
from declinecraft.paper import caption_check, figure_check, figures, figures_extra, flat_panels
from declinecraft.paper.figure_spec import FigureSpec
from declinecraft.views.evidence import plots as evidence_plots
from tests.support import projects


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


class TestResolve:
    def test_parts(self) -> None:
        """\\dcdrawn{stem/part}{text} prints text only when part is drawn, nested ones too."""
        caption = (
            "Mean\\dcdrawn{f/interval}{ with a $t$ interval}."
            "\\dcdrawn{f/counts}{ $n$\\dcdrawn{f/unscored}{, unscored}.}"
        )
        assert caption_check.resolve(caption, set()) == "Mean."
        assert caption_check.resolve(caption, {"interval", "counts"}) == "Mean with a $t$ interval. $n$."
        assert caption_check.resolve(caption, {"counts", "unscored"}) == "Mean. $n$, unscored."

    def test_promised(self) -> None:
        """A caption naming a part the figure did not draw is a problem; one it drew is not."""
        assert caption_check.promised("Dashed: frontier; P3 and J2.", {"frontier", "P3"}) == [
            "caption names 'J2', which the figure does not draw"
        ]


class TestCaptionsFollowTheFigure:
    """Each caption of paper/main.tex, resolved for what its figure drew, names an interval, a
    frontier, a prompt or a count only when the figure draws it (Figures 8, 19, 28 and E3)."""

    @staticmethod
    def caption(stem: str, fig: Figure) -> str:
        tex = (projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8")
        flat_panels.say_flat(fig)  # as the paper stage does before it checks a figure
        resolved = caption_check.resolve(caption_check.captions(tex)[stem], drawn_parts.parts(fig))
        assert figure_check.problems(fig, caption_check.captions(tex)[stem]) == []
        return resolved

    @staticmethod
    def spec(number: int) -> FigureSpec:
        return next(s for s in figures.figures() if s.number == number)

    def test_fig08_interval(self, tables: dict[str, pl.DataFrame]) -> None:
        """Fig. 8 names its t interval when over models the values vary, not when all are one value."""
        assert "$t$ interval" in self.caption("fig08_conditions", self.spec(8).draw(tables))
        flat = {**tables, "main_grid": tables["main_grid"].with_columns(car=pl.lit(0.0), accuracy=pl.lit(0.5))}
        assert "interval" not in self.caption("fig08_conditions", self.spec(8).draw(flat))

    def test_fig28_frontier(self, tables: dict[str, pl.DataFrame]) -> None:
        """Fig. 28 names its dashed frontiers only when a frontier line is drawn (two points on it)."""
        assert "dashed: observed frontiers" in self.caption("fig28_tradeoff", self.spec(28).draw(tables))
        corner = tables["main_grid"].with_columns(attempt=pl.lit(1.0), car=pl.lit(0.0))
        assert "dashed" not in self.caption("fig28_tradeoff", self.spec(28).draw({**tables, "main_grid": corner}))

    def test_fig19_counts(self) -> None:
        """Fig. 19 says its labels give n, and the unscored, only when they do."""
        frame = pl.DataFrame(
            {
                "model": ["a", "b"],
                "thinking": ["off", "off"],
                "attempt": [1.0, 0.5],
                "accuracy": [0.6, 0.2],
                "accuracy_low": [0.5, 0.1],
                "accuracy_high": [0.7, 0.3],
            }
        )
        bare = self.caption("fig19_leakage", figures_extra.plot_leakage(frame))
        assert "$n$" not in bare and "no score" not in bare and "bootstrap intervals" in bare
        counted = frame.with_columns(n=pl.lit(5), dropped=pl.Series([0, 0]))
        said = self.caption("fig19_leakage", figures_extra.plot_leakage(counted))
        assert "$n$" in said and "no score" not in said
        unscored = self.caption("fig19_leakage", figures_extra.plot_leakage(counted.with_columns(dropped=pl.lit(2))))
        assert "$n$" in unscored and "no score" in unscored

    def test_e3_prompts(self) -> None:
        """E3 names the prompts that have rows: P1 and P2 here, never P3 or J2."""
        curve = pl.DataFrame(
            [("m", "off", prompt, "L1", 0.5) for prompt in ("P1", "P2")],
            schema=["model", "thinking", "prompt", "level", "abstention"],
            orient="row",
        )
        said = self.caption("esb_prompt_heatmap", evidence_plots.plot_prompt_heatmap(curve))
        assert "P1 is" in said and "P2 is" in said and "P3" not in said and "J2" not in said
