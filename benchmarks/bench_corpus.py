"""Benchmark the C_pre build at the paper's size: read an export, clean, filter, chunk.

    .venv/bin/python benchmarks/bench_corpus.py [--pages 2642] [--merge 3]

Replicates the mini wiki's article pages (or the test export while the mini wiki is not
assembled) into a 2,642-page export (the paper's C_pre size) with distinct titles, each page's
text joining ``--merge`` source pages so pages are about as long as minecraft.wiki's (the paper
has 4.4 chunks per page). Every revision is dated before the cut-off, so every page goes to
C_pre. Measures read + clean + filter (``corpus.build``) and ``corpus.chunk`` separately, and
writes ``outputs/bench/corpus.json``. Goal: the whole build in at most 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from declinecraft.core import paths
from declinecraft.corpus import corpora, wiki

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "data" / "miniwiki" / "miniwiki.xml", ROOT / "tests" / "data" / "tiny.xml")
HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n'
    '<siteinfo><sitename>Bench</sitename><namespaces><namespace key="0" case="first-letter" />'
    "</namespaces></siteinfo>\n"
)


def source_texts(source: Path) -> list[str]:
    """Return the newest non-redirect wikitext of every article page of the source export."""
    texts = []
    for page in wiki.read_dump(source):
        latest = page.latest()
        if page.namespace == 0 and latest and latest.text and not wiki.redirect_target(latest.text):
            texts.append(latest.text)
    return texts


def write_export(path: Path, texts: list[str], pages: int, merge: int) -> None:
    """Write an export of ``pages`` pages, page i joining ``merge`` source texts from i."""
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        for i in range(pages):
            body = "\n\n".join(texts[(i + k) % len(texts)] for k in range(merge)) + f"\n\nBench page {i}."
            out.write(
                f"<page><title>{escape(f'Bench page {i:04d}')}</title><ns>0</ns><id>{i + 1}</id>"
                f"<revision><id>{i + 1}</id><timestamp>2024-{i % 12 + 1:02d}-15T12:00:00Z</timestamp>"
                f"<text xml:space={quoteattr('preserve')}>{escape(body)}</text></revision></page>\n"
            )
        out.write("</mediawiki>\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2642)
    parser.add_argument("--merge", type=int, default=3, help="source pages joined into one bench page")
    parser.add_argument("--quick", action="store_true", help="a small run, for CI (300 pages)")
    args = parser.parse_args()
    if args.quick:
        args.pages = min(args.pages, 300)
    source = next(p for p in SOURCES if p.is_file())
    texts = source_texts(source)
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "bench.xml"
        write_export(export, texts, args.pages, args.merge)
        cpu, start = time.process_time(), time.perf_counter()
        built = corpora.build(wiki.read_dump(export), "2025-03-31")
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        chunks = corpora.chunk(built.pre)
        chunk_s = time.perf_counter() - start
        cpu_s = time.process_time() - cpu
        size_mb = export.stat().st_size / 1e6
    per_page = chunks.group_by("title").len()["len"]
    seconds = build_s + chunk_s
    result = {
        "source": str(source.relative_to(ROOT)),
        "export_mb": round(size_mb, 1),
        "pages": built.pre.height,
        "dropped": built.dropped.height,
        "chunks": chunks.height,
        "chunks_per_page_median": float(per_page.median()),
        "chunks_per_page_max": int(per_page.max()),
        "read_clean_filter_seconds": round(build_s, 2),
        "chunk_seconds": round(chunk_s, 2),
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_s, 2),  # wall seconds include waiting for other processes' CPU
        "pages_per_second": round(built.pre.height / seconds, 1),
        "goal_seconds": 60,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }
    out = ROOT / "outputs" / "bench" / "corpus.json"
    paths.write_text_atomic(out, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
