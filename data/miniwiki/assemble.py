#!/usr/bin/env python3
"""Assemble the mini wiki's MediaWiki export from its hand-written <page> fragments.

    python data/miniwiki/assemble.py            # parts/pre.xml-fragment + parts/post.xml-fragment
    python data/miniwiki/assemble.py --check    # validate only, write nothing

Wraps the fragments in a MediaWiki export-0.11 document (header and <siteinfo> as MediaWiki
1.39.17 writes them) and writes ``miniwiki.xml`` beside this script. Every revision gets the
<sha1> MediaWiki's importer needs to recognise re-imports (base-36 SHA-1 of the text, 31 digits)
and a correct ``bytes`` attribute. Titles, page ids and revision ids must be unique and every
revision needs an id and a timestamp; any problem is reported with its fragment and page, and
nothing is written. Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS = "http://www.mediawiki.org/xml/export-0.11/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SITENAME = "DeclineCraft Mini Wiki"
NAMESPACES = [
    (-2, "Media"), (-1, "Special"), (0, ""), (1, "Talk"), (2, "User"), (3, "User talk"),
    (4, SITENAME), (5, f"{SITENAME} talk"), (6, "File"), (7, "File talk"), (8, "MediaWiki"),
    (9, "MediaWiki talk"), (10, "Template"), (11, "Template talk"), (12, "Help"), (13, "Help talk"),
    (14, "Category"), (15, "Category talk"),
]


def sha1_base36(text: str) -> str:
    """Return MediaWiki's revision checksum: SHA-1 of the UTF-8 text in base 36, 31 digits."""
    number = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = ""
    while number:
        number, rest = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
    return digits.rjust(31, "0")


def read_pages(fragment: Path) -> list[ET.Element]:
    """Parse one fragment of <page> elements."""
    body = fragment.read_text(encoding="utf-8")
    try:
        root = ET.fromstring(f"<fragment>{body}</fragment>")
    except ET.ParseError as exc:
        line, column = exc.position
        raise SystemExit(f"{fragment}: malformed XML at line {line}, column {column}: {exc}") from exc
    pages = list(root)
    for elem in pages:
        if elem.tag != "page":
            raise SystemExit(f"{fragment}: unexpected <{elem.tag}> at top level (only <page>)")
    return pages


def check_and_fix(pages: list[tuple[Path, ET.Element]]) -> list[str]:
    """Validate pages and set every revision's <sha1> and text ``bytes``; return problems."""
    problems: list[str] = []
    titles: set[str] = set()
    page_ids: set[str] = set()
    rev_ids: set[str] = set()
    known_ns = {str(key) for key, _ in NAMESPACES}
    for fragment, page in pages:
        title = (page.findtext("title") or "").strip()
        where = f"{fragment.name}: page {title!r}"
        if not title:
            problems.append(f"{fragment.name}: a page has no <title>")
        if title in titles:
            problems.append(f"{where}: duplicate title")
        titles.add(title)
        if page.findtext("ns", "0").strip() not in known_ns:
            problems.append(f"{where}: undeclared namespace {page.findtext('ns')!r}")
        page_id = page.findtext("id", "").strip()
        if not page_id or page_id in page_ids:
            problems.append(f"{where}: missing or duplicate page <id> {page_id!r}")
        page_ids.add(page_id)
        revisions = page.findall("revision")
        if not revisions:
            problems.append(f"{where}: no <revision>")
        for rev in revisions:
            rev_id = rev.findtext("id", "").strip()
            if not rev_id or rev_id in rev_ids:
                problems.append(f"{where}: missing or duplicate revision <id> {rev_id!r}")
            rev_ids.add(rev_id)
            try:
                datetime.fromisoformat(rev.findtext("timestamp", "").strip().replace("Z", "+00:00"))
            except ValueError:
                problems.append(f"{where}, revision {rev_id}: bad <timestamp> {rev.findtext('timestamp')!r}")
            text = rev.find("text")
            if text is None:
                problems.append(f"{where}, revision {rev_id}: no <text>")
                continue
            content = text.text or ""
            text.set("bytes", str(len(content.encode("utf-8"))))
            text.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
            sha1 = rev.find("sha1")
            if sha1 is None:
                sha1 = ET.Element("sha1")
                rev.insert(list(rev).index(text) + 1, sha1)
            sha1.text = sha1_base36(content)
    return problems


def document(pages: list[ET.Element]) -> ET.Element:
    """Return the <mediawiki> export element holding ``pages``, all in the export namespace."""
    root = ET.Element(f"{{{NS}}}mediawiki", {
        f"{{{XSI}}}schemaLocation": f"{NS} http://www.mediawiki.org/xml/export-0.11.xsd",
        "version": "0.11",
        "{http://www.w3.org/XML/1998/namespace}lang": "en",
    })
    site = ET.SubElement(root, "siteinfo")
    for tag, value in (("sitename", SITENAME), ("dbname", "declinecraft_miniwiki"),
                       ("base", "http://127.0.0.1/index.php/Main_Page"),
                       ("generator", "MediaWiki 1.39.17"), ("case", "first-letter")):
        ET.SubElement(site, tag).text = value
    spaces = ET.SubElement(site, "namespaces")
    for key, name in NAMESPACES:
        ET.SubElement(spaces, "namespace", {"key": str(key), "case": "first-letter"}).text = name or None
    root.extend(pages)
    for elem in root.iter():
        if not elem.tag.startswith("{"):
            elem.tag = f"{{{NS}}}{elem.tag}"
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", type=Path,
                        default=[HERE / "parts" / "pre.xml-fragment", HERE / "parts" / "post.xml-fragment"])
    parser.add_argument("--out", type=Path, default=HERE / "miniwiki.xml")
    parser.add_argument("--check", action="store_true", help="validate only")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.parts if not p.is_file()]
    if missing:
        print(f"error: fragment(s) not found: {', '.join(missing)}", file=sys.stderr)
        return 1
    pages = [(fragment, page) for fragment in args.parts for page in read_pages(fragment)]
    problems = check_and_fix(pages)
    if problems:
        print("\n".join(f"error: {p}" for p in problems), file=sys.stderr)
        return 1
    root = document([page for _, page in pages])
    ET.register_namespace("", NS)
    ET.register_namespace("xsi", XSI)
    ET.indent(root, space="  ")
    xml = ET.tostring(root, encoding="unicode", xml_declaration=False)
    revisions = sum(len(page.findall(f"{{{NS}}}revision")) for _, page in pages)
    print(f"{len(pages)} pages, {revisions} revisions from {', '.join(p.name for p in args.parts)}")
    if args.check:
        return 0
    fd, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(xml + "\n")
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; the export is a shared, committed file
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
