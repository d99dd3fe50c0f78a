"""MediaWiki pages and revisions, and a streaming reader for XML exports (§3.1, Appendix D).

Both sources of the corpus, an XML export (:func:`read_dump`) and the live API
(:mod:`declinecraft.corpus.crawl`), produce the same :class:`Page`/:class:`Revision` records, so the
cut-off rules in :mod:`declinecraft.corpus.corpora` never know where a page came from.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import re
import xml.etree.ElementTree as ET
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import numpy as np

#: ``#REDIRECT [[Target#section|label]]`` at the start of a revision's text (English magic word).
REDIRECT_RE = re.compile(r"^\s*#REDIRECT\s*:?\s*\[\[\s*([^\]|#]+)", re.IGNORECASE)


class DumpError(ValueError):
    """An XML export is malformed, truncated or inconsistent; the message names file and page."""


@dataclass(frozen=True)
class Revision:
    """One revision of a page.

    ``text`` is the wikitext; ``None`` means the text is not available (hidden in the export, or
    a revision the crawler fetched for its timestamp only), which is different from ``""``.
    """

    id: int
    timestamp: datetime
    text: str | None = None


@dataclass(frozen=True)
class Page:
    """A page with the revisions known for it, oldest first.

    ``redirect`` is the page's current redirect target (``<redirect title=...>`` in an export),
    or ``None``. Whether the revision a corpus selects is a redirect is read from its own text
    (:func:`redirect_target`), because a page can stop or start being a redirect over time.
    """

    title: str
    namespace: int
    revisions: list[Revision] = field(default_factory=list)
    redirect: str | None = None

    def first(self) -> Revision | None:
        """Return the oldest revision (the page's creation), or ``None`` without revisions."""
        return self.revisions[0] if self.revisions else None

    def latest(self, until: datetime | None = None) -> Revision | None:
        """Return the newest revision stamped at or before ``until`` (newest overall if None)."""
        for rev in reversed(self.revisions):
            if until is None or rev.timestamp <= until:
                return rev
        return None


def redirect_target(text: str | None) -> str | None:
    """Return the target title if ``text`` is a redirect (``#REDIRECT [[X]]``), else ``None``."""
    match = REDIRECT_RE.match(text or "")
    return normalize_title(match.group(1)) if match else None


def normalize_title(title: str) -> str:
    """Return a title as MediaWiki stores it: underscores as spaces, single spaces, first letter
    upper-case (the ``first-letter`` case setting of minecraft.wiki and the mini wiki)."""
    title = re.sub(r"[\s_]+", " ", title).strip()
    return title[:1].upper() + title[1:]


def parse_timestamp(value: str) -> datetime:
    """Parse a MediaWiki timestamp (``2025-03-31T23:59:59Z``) as an aware UTC datetime."""
    stamp = datetime.fromisoformat(value.strip())
    if stamp.tzinfo is None:
        raise ValueError(f"timestamp {value!r} has no time zone")
    return stamp.astimezone(UTC)


def end_of_day(day: str | date | datetime) -> datetime:
    """Return the last instant that counts as ``day`` (UTC): the cut-off day is inclusive.

    A full datetime is returned unchanged (as UTC), so callers may pass an exact instant.
    """
    if isinstance(day, datetime):
        return day.astimezone(UTC) if day.tzinfo else day.replace(tzinfo=UTC)
    if isinstance(day, str):
        if "T" in day:
            return parse_timestamp(day)
        day = date.fromisoformat(day)
    start = datetime.combine(day, time(0), tzinfo=UTC)
    return start + timedelta(days=1) - timedelta(microseconds=1)


def read_dump(path: str | Path) -> Iterator[Page]:
    """Stream the pages of a MediaWiki XML export (plain, ``.bz2`` or ``.gz``, by content).

    Elements are cleared as soon as a page is yielded, so memory holds one page at a time
    whatever the size of the export.

    Raises:
        FileNotFoundError: no such file.
        DumpError: malformed or truncated XML or compressed stream, a page without title, a
            revision without id or timestamp, a page in a namespace the export's
            ``<siteinfo>`` does not declare, or a title that occurs twice (two ``<page>``
            elements would make two versions of one page) — naming the file and the page.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such MediaWiki export")
    with _open(path) as stream:
        yield from _parse(stream, path)


def _open(path: Path) -> io.BufferedIOBase:
    with path.open("rb") as probe:
        magic = probe.read(3)
    if magic == b"BZh":
        return bz2.open(path, "rb")
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return path.open("rb")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(elem: ET.Element) -> dict[str, ET.Element]:
    # First child of each name; revision/contributor nest their own <id>, so never search deep.
    out: dict[str, ET.Element] = {}
    for child in elem:
        out.setdefault(_local(child.tag), child)
    return out


def _parse(stream: io.BufferedIOBase, path: Path, *, check_duplicates: bool = True) -> Iterator[Page]:
    namespaces: dict[int, str] = {}
    root: ET.Element | None = None
    page_elem: ET.Element | None = None
    revisions: list[Revision] = []
    last_title: str | None = None
    # 8 bytes per page, checked once the export ends: memory stays flat in the size of the pages.
    seen = array("Q") if check_duplicates else None
    try:
        for event, elem in ET.iterparse(stream, events=("start", "end")):
            tag = _local(elem.tag)
            if event == "start":
                if root is None:
                    if tag != "mediawiki":
                        raise DumpError(f"{path}: not a MediaWiki export (root element <{tag}>)")
                    root = elem
                elif tag == "page":
                    page_elem, revisions = elem, []
                continue
            if tag == "namespace":
                namespaces[int(elem.get("key", "0"))] = elem.text or ""
            elif tag == "revision" and page_elem is not None:
                revisions.append(_revision(elem, _title_of(page_elem, path), path))
                elem.clear()
            elif tag == "page":
                page = _page(elem, revisions, namespaces, path)
                if seen is not None:
                    seen.append(_title_digest(page.namespace, page.title))
                last_title = page.title
                page_elem = None
                elem.clear()
                if root is not None:
                    root.clear()  # drop the reference the root keeps to every finished page
                yield page
        if seen is not None and (digest := _repeated(seen)) is not None:
            title = next(p.title for p in _pages(path) if _title_digest(p.namespace, p.title) == digest)
            raise DumpError(
                f"{path}: page {title!r} occurs twice (two <page> elements with one title would make two "
                "versions of one page): merge its revisions into one <page> or drop one"
            )
    except ET.ParseError as exc:
        line, column = exc.position
        raise DumpError(
            f"{path}: malformed or truncated XML at line {line}, column {column} "
            f"(last complete page: {last_title!r}): {exc}{_encoding_problem(path, line)}"
        ) from exc
    except (EOFError, OSError) as exc:
        raise DumpError(
            f"{path}: truncated or corrupt compressed stream (last complete page: {last_title!r}): {exc}"
        ) from exc


def _encoding_problem(path: Path, line: int) -> str:
    """Say so when line ``line`` of the export holds bytes that its encoding (the XML declaration's,
    else UTF-8, XML's default) cannot read: expat reports them only as an "invalid token"."""
    try:
        with _open(path) as stream:
            head = stream.read(200)
            declared = re.search(rb"""^<\?xml[^>]*encoding=["']([A-Za-z0-9._-]+)["']""", head)
            encoding = declared.group(1).decode() if declared else "UTF-8"
            stream.seek(0)
            for number, raw in enumerate(stream, start=1):
                if number == line:
                    raw.decode(encoding)
                    return ""
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.end]
        said = "the encoding its XML declaration names" if declared else "XML's default, as it declares none"
        return (
            f". Line {line} holds bytes that are not {encoding} ({bad!r} at byte {exc.start + 1} of the line; "
            f"{encoding} is {said}): convert the file to {encoding} (e.g. `iconv -f latin1 -t utf-8`) or "
            "declare its real encoding"
        )
    except (OSError, EOFError, LookupError):
        return ""
    return ""


def _pages(path: Path) -> Iterator[Page]:
    with _open(path) as stream:
        yield from _parse(stream, path, check_duplicates=False)


def _repeated(digests: array[int]) -> int | None:
    """The smallest digest that occurs twice, or None."""
    ordered = np.sort(np.frombuffer(digests, dtype=np.uint64))
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    return int(ordered[same[0]]) if same.size else None


def _title_digest(namespace: int, title: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{namespace}:{title}".encode(), digest_size=8).digest(), "big")


def _title_of(page_elem: ET.Element, path: Path) -> str:
    title = _children(page_elem).get("title")
    text = (title.text or "").strip() if title is not None else ""
    if not text:
        raise DumpError(f"{path}: a <page> has no <title> (it must come before its revisions)")
    return text


def _revision(elem: ET.Element, title: str, path: Path) -> Revision:
    kids = _children(elem)
    rev_id, stamp = kids.get("id"), kids.get("timestamp")
    if rev_id is None or stamp is None:
        raise DumpError(f"{path}: page {title!r} has a revision without <id> or <timestamp>")
    try:
        number, when = int(rev_id.text or ""), parse_timestamp(stamp.text or "")
    except ValueError as exc:
        raise DumpError(f"{path}: page {title!r}, revision {rev_id.text!r}: {exc}") from exc
    text_elem = kids.get("text")
    if text_elem is None or text_elem.get("deleted") is not None:
        text = None
    else:
        text = text_elem.text or ""
    return Revision(id=number, timestamp=when, text=text)


def _page(elem: ET.Element, revisions: list[Revision], namespaces: dict[int, str], path: Path) -> Page:
    title = _title_of(elem, path)
    kids = _children(elem)
    ns_elem = kids.get("ns")
    if ns_elem is not None:
        try:
            namespace = int(ns_elem.text or "")
        except ValueError as exc:
            raise DumpError(f"{path}: page {title!r} has a non-numeric <ns> {ns_elem.text!r}") from exc
        if namespaces and namespace not in namespaces:
            raise DumpError(
                f"{path}: page {title!r} is in namespace {namespace}, which the export's "
                f"<siteinfo> does not declare (declared: {sorted(namespaces)})"
            )
    else:
        prefix = title.split(":", 1)[0] if ":" in title else ""
        namespace = next((k for k, v in namespaces.items() if v and v == prefix), 0)
    redirect = kids.get("redirect")
    target = normalize_title(redirect.get("title", "")) if redirect is not None else None
    ordered = sorted(revisions, key=lambda r: (r.timestamp, r.id))
    return Page(title=title, namespace=namespace, revisions=ordered, redirect=target or None)
