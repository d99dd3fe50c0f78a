"""Tests for declinecraft.corpus.wiki (and the mini wiki's assembler): hand-written exports with known pages."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from declinecraft.corpus import wiki
from tests.support import projects

TINY = projects.REPO / "tests" / "data" / "tiny.xml"


HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n'
    '<siteinfo><sitename>T</sitename><namespaces><namespace key="0" />'
    '<namespace key="1">Talk</namespace></namespaces></siteinfo>\n'
)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def page_xml(
    title: str, ns: int = 0, revisions: tuple[tuple[int, str, str], ...] = ((1, "2024-01-01T00:00:00Z", "x"),)
) -> str:
    """Return one <page> element with revisions given as (id, timestamp, text)."""
    revs = "".join(
        f'<revision><id>{i}</id><timestamp>{t}</timestamp><text xml:space="preserve">{x}</text></revision>'
        for i, t, x in revisions
    )
    return f"<page><title>{title}</title><ns>{ns}</ns><id>1</id>{revs}</page>\n"


def write_dump(path: Path, body: str, *, close: bool = True) -> Path:
    """Write an export with ``body`` between the header and the closing tag."""
    path.write_text(HEADER + body + ("</mediawiki>\n" if close else ""), encoding="utf-8")
    return path


def load_assembler():
    spec = importlib.util.spec_from_file_location("assemble", projects.REPO / "data" / "miniwiki" / "assemble.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestReadDump:
    def test_titles_and_namespaces(self) -> None:
        """Every page of the tiny export is read, in file order, with its namespace."""
        pages = list(wiki.read_dump(TINY))
        assert len(pages) == 15
        assert pages[0].title == "Apple" and pages[0].namespace == 0
        assert {p.title: p.namespace for p in pages}["Talk:Apple"] == 1

    def test_revisions(self) -> None:
        """Revisions carry id, UTC timestamp and exact wikitext, oldest first."""
        apple = next(wiki.read_dump(TINY))
        assert [r.id for r in apple.revisions] == [101, 102, 103]
        assert apple.revisions[1].timestamp == utc(2025, 3, 31, 23, 59, 59)
        assert apple.revisions[1].text.startswith("{{Infobox item|title=Apple|renewable=Yes}}\nAn '''apple'''")
        assert "<ref>" in apple.revisions[1].text  # XML escapes decoded

    def test_redirect_and_empty(self) -> None:
        """A redirect page carries its target; an empty revision has text ''."""
        pages = {p.title: p for p in wiki.read_dump(TINY)}
        assert pages["Apples"].redirect == "Apple"
        assert pages["Apple"].redirect is None
        assert pages["Empty"].revisions[0].text == ""

    def test_deleted_text_is_none(self, tmp_path: Path) -> None:
        """A revision whose text is deleted in the export has text None, not ''."""
        body = (
            "<page><title>Hidden</title><ns>0</ns><revision><id>5</id>"
            '<timestamp>2024-01-01T00:00:00Z</timestamp><text deleted="deleted" /></revision></page>'
        )
        (page,) = wiki.read_dump(write_dump(tmp_path / "d.xml", body))
        assert page.revisions[0].text is None

    def test_unordered_revisions_are_sorted(self, tmp_path: Path) -> None:
        """Revisions listed newest first in the file come back oldest first."""
        body = page_xml("B", revisions=((2, "2025-01-02T00:00:00Z", "new"), (1, "2025-01-01T00:00:00Z", "old")))
        (page,) = wiki.read_dump(write_dump(tmp_path / "d.xml", body))
        assert [r.text for r in page.revisions] == ["old", "new"]

    @pytest.mark.parametrize("compress", [bz2.compress, gzip.compress])
    def test_compressed(self, tmp_path: Path, compress) -> None:
        """A .bz2 or .gz export (detected by content, whatever its name) reads like the plain file."""
        packed = tmp_path / "dump.xml"
        packed.write_bytes(compress(TINY.read_bytes()))
        assert list(wiki.read_dump(packed)) == list(wiki.read_dump(TINY))

    def test_truncated_xml(self, tmp_path: Path) -> None:
        """A truncated export fails with the file, the position and the last complete page."""
        cut = tmp_path / "cut.xml"
        data = TINY.read_text(encoding="utf-8")
        cut.write_text(data[: data.index("<title>Stub</title>") + 40], encoding="utf-8")
        with pytest.raises(
            wiki.DumpError, match=r"cut\.xml: malformed or truncated XML at line \d+.*'Java Edition 1\.21\.5'"
        ):
            list(wiki.read_dump(cut))

    def test_truncated_bz2(self, tmp_path: Path) -> None:
        """A truncated compressed stream fails with a message naming the file."""
        packed = tmp_path / "dump.xml.bz2"
        data = bz2.compress(TINY.read_bytes())
        packed.write_bytes(data[: len(data) // 2])
        with pytest.raises(wiki.DumpError, match=r"dump\.xml\.bz2: (truncated or corrupt|malformed)"):
            list(wiki.read_dump(packed))

    def test_malformed_xml(self, tmp_path: Path) -> None:
        """Broken markup in the middle of a page is an error, not a skipped page."""
        body = page_xml("A") + "<page><title>B</title><ns>0</oops></page>" + page_xml("C")
        with pytest.raises(wiki.DumpError, match=r"d\.xml: malformed.*last complete page: 'A'"):
            list(wiki.read_dump(write_dump(tmp_path / "d.xml", body)))

    def test_unknown_namespace(self, tmp_path: Path) -> None:
        """A page in a namespace the siteinfo does not declare is an error naming the page."""
        with pytest.raises(wiki.DumpError, match=r"page 'Ghost' is in namespace 99"):
            list(wiki.read_dump(write_dump(tmp_path / "d.xml", page_xml("Ghost", ns=99))))

    def test_revision_without_timestamp(self, tmp_path: Path) -> None:
        """A revision without a timestamp is an error naming its page."""
        body = "<page><title>NoTime</title><ns>0</ns><revision><id>1</id><text>x</text></revision></page>"
        with pytest.raises(wiki.DumpError, match=r"page 'NoTime' has a revision without"):
            list(wiki.read_dump(write_dump(tmp_path / "d.xml", body)))

    def test_not_an_export(self, tmp_path: Path) -> None:
        """An XML file that is not a MediaWiki export is rejected by its root element."""
        path = tmp_path / "x.xml"
        path.write_text("<html><body/></html>")
        with pytest.raises(wiki.DumpError, match=r"x\.xml: not a MediaWiki export"):
            list(wiki.read_dump(path))

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing export is a FileNotFoundError naming the path."""
        with pytest.raises(FileNotFoundError, match="nope.xml"):
            list(wiki.read_dump(tmp_path / "nope.xml"))

    def test_streams(self, tmp_path: Path) -> None:
        """The first page is yielded before the parser reaches a broken end of file."""
        path = write_dump(tmp_path / "d.xml", page_xml("First") + "<page><title>", close=False)
        pages = wiki.read_dump(path)
        assert next(pages).title == "First"
        with pytest.raises(wiki.DumpError):
            next(pages)

    def test_memory_does_not_grow(self, tmp_path: Path) -> None:
        """Peak memory while reading 8,000 pages is about that of 1,000 (elements are cleared)."""
        text = "Some text about blocks. " * 40

        def peak(n: int) -> int:
            path = tmp_path / f"d{n}.xml"
            with path.open("w", encoding="utf-8") as out:
                out.write(HEADER)
                for i in range(n):
                    out.write(page_xml(f"Page {i}", revisions=((i, "2024-01-01T00:00:00Z", text),)))
                out.write("</mediawiki>\n")
            tracemalloc.start()
            count = sum(1 for _ in wiki.read_dump(path))
            _, top = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert count == n
            return top

        small, large = peak(1000), peak(8000)
        assert large < small * 1.5 + 200_000


class TestPage:
    def test_latest_until(self) -> None:
        """latest(until) is the newest revision at or before the instant; first() the oldest."""
        apple = next(wiki.read_dump(TINY))
        assert apple.latest(utc(2025, 3, 31, 23, 59, 59)).id == 102
        assert apple.latest(utc(2025, 3, 31, 23, 59, 58)).id == 101
        assert apple.latest().id == 103
        assert apple.first().id == 101
        assert apple.latest(utc(2020, 1, 1)) is None


class TestEndOfDay:
    @pytest.mark.parametrize(
        ("day", "expected"),
        [
            ("2025-03-31", utc(2025, 3, 31, 23, 59, 59, 999999)),
            ("2025-03-31T12:00:00Z", utc(2025, 3, 31, 12)),
            (utc(2025, 1, 1, 5), utc(2025, 1, 1, 5)),
            (datetime(2025, 1, 1, 5), utc(2025, 1, 1, 5)),
        ],
    )
    def test_values(self, day, expected) -> None:
        """A day means its last instant (inclusive cut-off); an instant stays itself, in UTC."""
        assert wiki.end_of_day(day) == expected


class TestParseTimestamp:
    def test_utc(self) -> None:
        """A MediaWiki timestamp parses to an aware UTC datetime; an offset is converted."""
        assert wiki.parse_timestamp("2025-03-31T23:59:59Z") == utc(2025, 3, 31, 23, 59, 59)
        assert wiki.parse_timestamp("2025-04-01T01:00:00+02:00") == utc(2025, 3, 31, 23)

    @pytest.mark.parametrize("value", ["2025-03-31T23:59:59", "yesterday"])
    def test_rejects(self, value: str) -> None:
        """A timestamp without time zone, or not a timestamp, is a ValueError."""
        with pytest.raises(ValueError):
            wiki.parse_timestamp(value)


class TestRedirectTarget:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("#REDIRECT [[Apple]]", "Apple"),
            ("#redirect: [[happy_ghast#Riding|x]]", "Happy ghast"),
            ("  #REDIRECT[[Copper Sword]]\n[[Category:R]]", "Copper Sword"),
            ("See #REDIRECT [[Apple]]", None),
            ("", None),
            (None, None),
        ],
    )
    def test_values(self, text, expected) -> None:
        """Only a leading #REDIRECT link makes a redirect; the target is normalized."""
        assert wiki.redirect_target(text) == expected


class TestNormalizeTitle:
    def test_values(self) -> None:
        """Underscores become spaces and the first letter is upper-cased, the rest kept."""
        assert wiki.normalize_title(" copper_golem  chest ") == "Copper golem chest"


class TestAssemble:
    def test_sha1(self) -> None:
        """MediaWiki's base-36 SHA-1 of the empty text is the well-known value."""
        assert load_assembler().sha1_base36("") == "phoiac9h4m842xq45sp7s6u21eteeq1"

    def test_assembles_tiny(self, tmp_path: Path) -> None:
        """Assembling the tiny fragment reproduces tests/data/tiny.xml byte for byte."""
        out = tmp_path / "tiny.xml"
        assert load_assembler().main(["--parts", str(TINY.with_suffix(".xml-fragment")), "--out", str(out)]) == 0
        assert out.read_bytes() == TINY.read_bytes()

    def test_rejects_duplicates(self, tmp_path: Path) -> None:
        """A title twice across fragments is reported and nothing is written."""
        part = tmp_path / "a.xml-fragment"
        part.write_text(page_xml("A") + page_xml("A").replace("<id>1</id>", "<id>2</id>", 1))
        out = tmp_path / "out.xml"
        assert load_assembler().main(["--parts", str(part), "--out", str(out)]) == 1
        assert not out.exists()

    @pytest.mark.skipif(
        not (projects.REPO / "data" / "miniwiki" / "parts").is_dir(), reason="fragments are not committed"
    )
    def test_miniwiki_up_to_date(self, tmp_path: Path) -> None:
        """Where the fragments exist, the committed mini wiki is exactly their assembly."""
        out = tmp_path / "miniwiki.xml"
        assert load_assembler().main(["--out", str(out)]) == 0
        assert out.read_bytes() == (projects.REPO / "data" / "miniwiki" / "miniwiki.xml").read_bytes(), (
            "rerun: python data/miniwiki/assemble.py"
        )

    @pytest.mark.skipif(
        not (projects.REPO / "data" / "miniwiki" / "miniwiki.xml").exists(), reason="mini wiki not assembled yet"
    )
    def test_miniwiki_reads(self) -> None:
        """The committed mini wiki is a valid export with pages on both sides of the cut-off."""
        cut = wiki.end_of_day("2025-03-31")
        pages = list(wiki.read_dump(projects.REPO / "data" / "miniwiki" / "miniwiki.xml"))
        assert any(p.first().timestamp <= cut for p in pages)
        assert any(p.first().timestamp > cut for p in pages)
