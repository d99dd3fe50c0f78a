"""Tests for declinecraft.explore.question: the question view, as HTML and as text."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft import explore


class TestShow:
    def test_html(self, frame: pl.DataFrame) -> None:
        """The HTML names the question, target page, every response, rounds, ranks and thinking collapsed."""
        page = explore.show("q-sulfur", frame)._repr_html_()
        for text in (
            "Sulfur Cube",
            "archetypes of the Sulfur Cube",
            "Twelve archetypes",
            "reference of q-sulfur",
            "<p>The Magma Cube (sometimes called a 'Sulfur Cube')",  # the response, rendered from its markdown
            "Magma Cube sizes",
            "Insufficient",
            "bm25 1 · dense 3",
            "<details><summary>thinking trace",
            "dc-l-ABSTAIN",
            "<style>",
            'data-setting="single/bm25/k5"',
            "scenario chunk",
        ):
            assert text in page, text
        assert page.count('<tr class="dc-row ') == 10 and page.count('<tr class="dc-row" data-config=') == 3  # + grid

    def test_text(self, frame: pl.DataFrame) -> None:
        """The terminal form lists settings, labels, retrieved chunks and hides thinking unless asked."""
        view = explore.show("q-copper", frame)
        text = str(view)
        assert "q-copper · unanswerable" in text and "== iterative ==" in text and "Horse Armor (Horse_Armor#0)" in text
        assert "- m1 (thinking on): DENY" in text and "hmm, let me think" not in text
        assert "hmm, let me think" in view.text(thinking=True) and repr(view) == text

    def test_judge_label_beside_the_rules(self, frame: pl.DataFrame) -> None:
        """Where the rules' label is of record, the judge's own label is shown beside it, in HTML and text."""
        ruled = frame.with_columns(judge_label=pl.col("label"), label=pl.col("rule_label").fill_null(pl.col("label")))
        view = explore.show("q-panda", ruled, models=["m2"], settings=["single"])
        assert "judge ANSWER</small>" in view._repr_html_() and "(judge ANSWER)" in str(view)
        assert "judge ANSWER" not in explore.show("q-panda", frame, models=["m2"], settings=["single"])._repr_html_()

    def test_restrict(self, frame: pl.DataFrame) -> None:
        """Models and settings restrict the responses shown."""
        view = explore.show("q-panda", frame, models=["m2"], settings=["single"])
        assert [(r["model"], r["setting"]) for r in view.rows] == [("m2", "single")]

    def test_escapes(self, frame: pl.DataFrame) -> None:
        """Response text is HTML-escaped."""
        evil = frame.with_columns(response=pl.lit("<script>alert(1)</script>"))
        page = explore.show("q-panda", evil)._repr_html_()
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page

    def test_unknown(self, frame: pl.DataFrame) -> None:
        """An unknown question id is an error naming it."""
        with pytest.raises(ValueError, match="question 'q-nope' is not in the frame"):
            explore.show("q-nope", frame)


class TestQuestionHtml:
    def test_trace_cut(self, frame: pl.DataFrame) -> None:
        """With ``trace_chars`` a long thinking trace is cut and says how much is left out."""
        long = frame.with_columns(thinking_trace=pl.lit("x" * 50))
        page = explore.question_html(explore.show("q-panda", long), trace_chars=20)
        assert "x" * 20 + "\n[… 30 more characters" in page and "x" * 21 not in page
        assert "x" * 50 in explore.question_html(explore.show("q-panda", long))


class TestQuestionText:
    def test_rounds_and_ranks(self, frame: pl.DataFrame) -> None:
        """The text form lists each round's reflection and each hit's component ranks."""
        text = explore.question_text(explore.show("q-sulfur", frame, models=["m1"], settings=["iterative"]))
        assert (
            "round 0: queries ['q-sulfur'] -> 3 new; Insufficient: what it is follow-ups ['Magma Cube sizes']" in text
        )
        assert "4. Magma Cube (Magma_Cube#0) bm25 4, dense 1" in text and "Elytra (Elytra#0) [scenario]" in text


class TestHitsOf:
    def test_iterative(self, frame: pl.DataFrame) -> None:
        """Hits carry rank, component ranks, their round and target/scenario marks."""
        row = frame.filter(pl.col("question_id") == "q-panda", pl.col("setting") == "iterative").row(0, named=True)
        hits = explore.hits_of(row)
        assert [h["chunk_id"] for h in hits] == ["Bamboo#0", "Panda#0", "Leather#0", "Magma_Cube#0"]
        assert (
            hits[1]["target"]
            and hits[0]["scenario"]
            and hits[3]["round"] == 1
            and hits[0]["ranks"] == {"bm25": 1, "dense": 4}
        )


class TestRoundsOf:
    def test_malformed(self) -> None:
        """Missing or malformed rounds JSON gives no rounds."""
        assert explore.rounds_of({"rounds": None}) == [] and explore.rounds_of({"rounds": "{oops"}) == []
        assert explore.rounds_of({"rounds": '{"a": 1}'}) == []
