"""Tests for declinecraft.corpus.corpora: known cut-off outcomes on the tiny export, rules, chunking."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from declinecraft.core import config
from declinecraft.corpus import corpora, wiki
from tests.support import projects

TINY = projects.REPO / "tests" / "data" / "tiny.xml"


LONG = "Copper golems sort items from copper chests into matching chests nearby. " * 4  # 296 chars


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def page(title: str, *revisions: tuple[datetime, str | None], namespace: int = 0) -> wiki.Page:
    """A page with revisions (timestamp, text), ids 1, 2, ... in order."""
    revs = [wiki.Revision(i + 1, stamp, text) for i, (stamp, text) in enumerate(revisions)]
    return wiki.Page(title, namespace, revs)


@pytest.fixture(scope="module")
def tiny() -> corpora.Corpus:
    return corpora.build(wiki.read_dump(TINY), "2025-03-31")


def reasons(result: corpora.Corpus) -> dict[str, tuple[str, str]]:
    return {row["title"]: (row["corpus"], row["reason"]) for row in result.dropped.iter_rows(named=True)}


class TestBuild:
    def test_pre_pages(self, tiny: corpora.Corpus) -> None:
        """C_pre holds the latest revision at or before the cut-off day (23:59:59 counts)."""
        assert tiny.pre.select("title", "revision_id").rows() == [("Apple", 102), ("Bread", 201)]
        assert tiny.pre["timestamp"].to_list()[0] == utc(2025, 3, 31, 23, 59, 59)
        assert tiny.pre["created"].to_list() == [utc(2024, 5, 1, 8), utc(2023, 1, 10, 12)]

    def test_post_pages(self, tiny: corpora.Corpus) -> None:
        """C_post holds pages created after the cut-off at their latest revision up to the snapshot."""
        assert tiny.post.select("title", "revision_id").rows() == [
            ("Camel Husk", 1301),
            ("Copper Sword", 302),
            ("Harness", 1401),
        ]

    def test_existing_page_never_post(self, tiny: corpora.Corpus) -> None:
        """A page edited after the cut-off but created before it is only in C_pre, at its old text."""
        assert "Bread" not in tiny.post["title"].to_list()
        text = tiny.pre.filter(pl.col("title") == "Bread")["text"][0]
        assert "EDITED AFTER CUTOFF" not in text and "restores 5" in text

    def test_cleaned_text(self, tiny: corpora.Corpus) -> None:
        """Page text is cleaned: dropped sections, refs and categories are gone."""
        apple = tiny.pre.filter(pl.col("title") == "Apple")["text"][0]
        assert "CUTOFF REVISION" in apple and "Golden Apple" in apple
        assert "History" not in apple and "Checked in" not in apple and "Category" not in apple
        assert "UPCOMING" not in tiny.post.filter(pl.col("title") == "Harness")["text"][0]

    def test_drop_reasons(self, tiny: corpora.Corpus) -> None:
        """Every excluded page is logged with its corpus and the first rule it failed."""
        assert reasons(tiny) == {
            "Apples": ("pre", "redirect"),
            "Empty": ("pre", "empty page"),
            "Glare": ("pre", "excluded title"),
            "Java Edition 1.21.5": ("pre", "excluded title"),
            "Mob Vote 2023": ("pre", "excluded title"),
            "Stub": ("pre", "too short"),
            "Talk:Apple": ("pre", "namespace"),
            "Harnesses": ("post", "redirect"),
            "Sulfur Cube": ("post", "created after snapshot"),
            "Tutorial:Copper farming": ("post", "excluded title"),
        }

    def test_every_page_accounted(self, tiny: corpora.Corpus) -> None:
        """Each input page is in exactly one of C_pre, C_post and the drop log."""
        titles = tiny.pre["title"].to_list() + tiny.post["title"].to_list() + tiny.dropped["title"].to_list()
        assert sorted(titles) == sorted(p.title for p in wiki.read_dump(TINY))

    @pytest.mark.parametrize(
        ("cutoff", "apple_revision"),
        [("2025-03-31", 102), ("2025-03-30", 101), ("2025-04-01", 103), (utc(2025, 3, 31, 23, 59, 58), 101)],
    )
    def test_cutoff_boundary(self, cutoff, apple_revision: int) -> None:
        """The cut-off day is inclusive; an exact instant is used as given."""
        result = corpora.build(wiki.read_dump(TINY), cutoff, min_chars=0)
        assert result.pre.filter(pl.col("title") == "Apple")["revision_id"][0] == apple_revision

    def test_no_revision_before_cutoff(self) -> None:
        """A page whose every revision is after the cut-off is never in C_pre."""
        result = corpora.build([page("Spear", (utc(2025, 4, 1), LONG))], "2025-03-31")
        assert result.pre.is_empty() and result.post["title"].to_list() == ["Spear"]

    def test_snapshot_off(self) -> None:
        """With no snapshot C_post takes the newest revision and pages created any time later."""
        result = corpora.build(wiki.read_dump(TINY), "2025-03-31", snapshot="", min_chars=0)
        assert dict(result.post.select("title", "revision_id").rows())["Camel Husk"] == 1302
        assert "Sulfur Cube" in result.post["title"].to_list()

    def test_no_revisions_and_hidden_text(self) -> None:
        """A page without revisions and one whose text is hidden are dropped with their reason."""
        pages = [page("Void"), page("Hidden", (utc(2024, 1, 1), None))]
        assert reasons(corpora.build(pages)) == {"Void": ("pre", "no revisions"), "Hidden": ("pre", "text unavailable")}

    def test_redirect_at_cutoff_only(self) -> None:
        """Redirect status is read from the selected revision: a later redirect does not matter."""
        pages = [page("Glow Berries", (utc(2024, 1, 1), LONG), (utc(2025, 6, 1), "#REDIRECT [[Glow Berry]]"))]
        assert corpora.build(pages).pre["title"].to_list() == ["Glow Berries"]

    def test_already_in_pre(self) -> None:
        """A post page whose title matches a C_pre page (ignoring case) is excluded from C_post."""
        pages = [page("Nautilus", (utc(2020, 1, 1), LONG)), page("NAUTILUS", (utc(2025, 9, 1), LONG))]
        result = corpora.build(pages)
        assert result.pre["title"].to_list() == ["Nautilus"]
        assert reasons(result) == {"NAUTILUS": ("post", "already in C_pre")}

    def test_proposal_title_only_pre(self) -> None:
        """A mob-vote proposal title is excluded from C_pre but a page created later is C_post."""
        pages = [page("Copper Golem", (utc(2025, 7, 2), LONG)), page("Crab", (utc(2023, 10, 1), LONG))]
        result = corpora.build(pages)
        assert result.post["title"].to_list() == ["Copper Golem"]
        assert reasons(result) == {"Crab": ("pre", "excluded title")}

    @pytest.mark.parametrize(
        ("title", "side"),
        [
            ("Java Edition 1.21.6", "post"),
            ("Bedrock Edition 1.21.80", "pre"),
            ("Minecraft Live 2025", "post"),
            ("MINECON Earth 2017", "pre"),
            ("A Minecraft Movie", "post"),
            ("Mob Vote 2025 proposals", "post"),
            ("Minecraft Dungeons 2", "post"),
            ("Tutorial:Happy ghast taxi", "post"),
            ("Mentioned features", "pre"),
            ("Minecraft: The Official Soundtrack Vol. 2", "post"),
            ("Java Edition", "post"),
            ("Java Edition version history", "pre"),
            ("Festive skin pack", "pre"),
        ],
    )
    def test_title_exclusions(self, title: str, side: str) -> None:
        """The paper's kinds of excluded page are recognised by title."""
        created = utc(2024, 1, 1) if side == "pre" else utc(2025, 6, 1)
        assert reasons(corpora.build([page(title, (created, LONG))])) == {title: (side, "excluded title")}

    @pytest.mark.parametrize("title", ["Java Edition", "Happy Ghast", "Tuff", "Movement"])
    def test_kept_titles(self, title: str) -> None:
        """Ordinary and edition pages stay in C_pre (edition pages are a C_post exclusion only)."""
        assert corpora.build([page(title, (utc(2024, 1, 1), LONG))]).pre.height == 1

    def test_min_chars(self) -> None:
        """Pages under min_chars characters after cleaning are dropped; the limit is a rule."""
        pages = [page("A", (utc(2024, 1, 1), "x" * 199)), page("B", (utc(2024, 1, 1), "y" * 200))]
        assert corpora.build(pages).pre["title"].to_list() == ["B"]
        assert corpora.build(pages, min_chars=100).pre.height == 2

    def test_errors(self) -> None:
        """Unknown rules, invalid patterns and duplicate titles fail loudly, naming the culprit."""
        with pytest.raises(TypeError, match="unknown corpus rule 'chunk_size'"):
            corpora.build([], chunk_size=10)
        with pytest.raises(ValueError, match=r"invalid title pattern '\('"):
            corpora.build([], exclude_titles=("(",))
        with pytest.raises(ValueError, match="page 'A' appears twice"):
            corpora.build([page("A", (utc(2024, 1, 1), LONG)), page("A", (utc(2024, 1, 1), LONG))])

    def test_schema(self, tiny: corpora.Corpus) -> None:
        """Both corpora and the drop log have the documented columns and types."""
        assert dict(tiny.pre.schema) == corpora.PAGE_SCHEMA == dict(tiny.post.schema)
        assert dict(tiny.dropped.schema) == corpora.DROP_SCHEMA


class TestRulesFrom:
    def test_defaults(self) -> None:
        """The rules of the default params are exactly the rule names, with the paper's values."""
        rules = corpora.rules_from(config.CorpusParams())
        assert set(rules) == set(corpora.RULES)
        assert rules["min_chars"] == 200 and rules["snapshot"] == "2026-09-08"


def frame(title: str, text: str) -> pl.DataFrame:
    return pl.DataFrame({"title": [title], "text": [text], "revision_id": [7]})


class TestChunk:
    TEXT = "\n".join((f"Line {i}: " + "copper golems sort items. " * (i % 5 + 1)).strip() for i in range(120))

    def test_prefix_and_size(self) -> None:
        """Each chunk starts with [Page: <title>] and its body is at most size characters."""
        chunks = corpora.chunk(frame("Copper Golem", self.TEXT), size=500, overlap=100)
        assert chunks.height > 5
        for text in chunks["text"]:
            head, body = text.split("\n", 1)
            assert head == "[Page: Copper Golem]" and len(body) <= 500

    def test_bodies_cover_text(self) -> None:
        """Bodies are substrings of the page and together contain every line of it."""
        bodies = [t.split("\n", 1)[1] for t in corpora.chunk(frame("P", self.TEXT), size=500, overlap=100)["text"]]
        assert all(body in self.TEXT for body in bodies)
        assert all(any(line in body for body in bodies) for line in self.TEXT.splitlines())

    def test_overlap(self) -> None:
        """Consecutive chunks share whole lines, at most overlap characters, at least one line here."""
        bodies = [t.split("\n", 1)[1] for t in corpora.chunk(frame("P", self.TEXT), size=500, overlap=100)["text"]]
        for left, right in zip(bodies, bodies[1:], strict=False):
            shared = next(n for n in range(min(len(left), len(right)), -1, -1) if left.endswith(right[:n]))
            assert 0 < shared <= 100

    def test_no_overlap(self) -> None:
        """With overlap 0 the chunks partition the text."""
        bodies = [t.split("\n", 1)[1] for t in corpora.chunk(frame("P", self.TEXT), size=500, overlap=0)["text"]]
        assert "".join(bodies).replace("\n", "") == self.TEXT.replace("\n", "")
        assert sum(map(len, bodies)) + len(bodies) - 1 == len(self.TEXT)  # only the split newlines go

    def test_split_order(self) -> None:
        """Long lines split at sentence ends, long sentences at spaces, one long word by a hard cut."""
        text = "First sentence here. Second one follows. " * 3 + "x" * 25
        bodies = [t.split("\n", 1)[1] for t in corpora.chunk(frame("P", text), size=45, overlap=0)["text"]]
        assert bodies[:2] == ["First sentence here. Second one follows.", "First sentence here. Second one follows."]
        assert bodies[-1] == "x" * 25

    def test_short_page(self) -> None:
        """A page shorter than size is one chunk, its id <Title_with_underscores>#0."""
        chunks = corpora.chunk(frame("Happy Ghast", "Floats."))
        assert chunks.rows() == [("Happy_Ghast#0", "Happy Ghast", "[Page: Happy Ghast]\nFloats.", 7)]

    def test_ids_stable_and_unique(self) -> None:
        """Chunk ids are unique and identical on a second run."""
        df = pl.concat([frame("A b", self.TEXT), frame("C", self.TEXT)])
        first, second = corpora.chunk(df, 400, 50), corpora.chunk(df, 400, 50)
        assert first["chunk_id"].n_unique() == first.height
        assert first["chunk_id"].to_list() == second["chunk_id"].to_list()
        assert first["chunk_id"][0] == "A_b#0"

    def test_paper_defaults(self) -> None:
        """Default size and overlap are the paper's 1,500 and 250."""
        bodies = [t.split("\n", 1)[1] for t in corpora.chunk(frame("P", self.TEXT))["text"]]
        assert max(map(len, bodies)) <= 1500 and max(map(len, bodies)) > 1250

    @pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1)])
    def test_invalid(self, size: int, overlap: int) -> None:
        """A size that is not positive or an overlap outside [0, size) is an error."""
        with pytest.raises(ValueError, match="overlap"):
            corpora.chunk(frame("P", "x"), size, overlap)


class TestPageUrl:
    def test_values(self) -> None:
        """Spaces become underscores and unsafe characters are percent-encoded."""
        assert (
            corpora.page_url("https://minecraft.wiki/w/{title}", "Happy Ghast")
            == "https://minecraft.wiki/w/Happy_Ghast"
        )
        assert corpora.page_url("http://x/{title}", "Tutorial:A?b") == "http://x/Tutorial:A%3Fb"


class TestStatsTable:
    def test_counts(self) -> None:
        """Rows per corpus with page/chunk counts, chunks per page and every drop reason counted."""
        built = corpora.Corpus(
            pre=corpora.build([page("A", (utc(2024, 1, 2), LONG)), page("B", (utc(2024, 3, 4), LONG * 3))]).pre,
            post=pl.DataFrame(schema=corpora.PAGE_SCHEMA),
            dropped=pl.DataFrame(
                [("X", "pre", "too short", ""), ("Y", "post", "redirect", "")], schema=corpora.DROP_SCHEMA, orient="row"
            ),
        )
        chunks = {"pre": corpora.chunk(built.pre, 500, 50), "post": corpora.chunk(built.post)}
        table = {row["corpus"]: row for row in corpora.stats_table(built, chunks, built.dropped).iter_rows(named=True)}
        assert (table["pre"]["pages"], table["pre"]["chunks"]) == (2, 3)
        assert (table["pre"]["chunks_per_page_median"], table["pre"]["chunks_per_page_max"]) == (1.5, 2)
        assert (table["pre"]["revision_from"], table["pre"]["revision_to"]) == ("2024-01-02", "2024-03-04")
        assert (table["pre"]["dropped_too_short"], table["pre"]["dropped_redirect"]) == (1, 0)
        assert (table["post"]["pages"], table["post"]["revision_from"], table["post"]["dropped_redirect"]) == (0, "", 1)
        assert all(f"dropped_{r.replace(' ', '_').lower()}" in table["pre"] for r in corpora.REASONS)
