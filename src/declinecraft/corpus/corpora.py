"""C_pre / C_post from MediaWiki pages, and their chunks (§3.1, Appendix D).

:func:`build` applies the cut-off and exclusion rules to any stream of :class:`wiki.Page`
(an XML export or an API crawl) and :func:`chunk` splits pages into retrieval chunks; the whole
``01_corpus`` stage (read, build, chunk, write, report) is :func:`declinecraft.corpus.stage.run`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, cast
from urllib.parse import quote

import polars as pl
from polars.datatypes import DataTypeClass

from declinecraft.core import config
from declinecraft.core.artifacts import CHUNK_COLUMNS  # noqa: F401  (the columns chunk tables carry)
from declinecraft.corpus import clean, wiki

#: The params of :class:`config.CorpusParams` that :func:`build` accepts as ``**rules``.
RULES = (
    "namespaces",
    "exclude_titles",
    "exclude_titles_pre",
    "exclude_titles_post",
    "drop_sections",
    "min_chars",
    "snapshot",
)
#: Why a page is not in a corpus, in the order the checks run (the first that applies wins).
REASONS = (
    "no revisions",
    "namespace",
    "excluded title",
    "created after snapshot",
    "text unavailable",
    "redirect",
    "empty page",
    "too short",
    "already in C_pre",
    "missing page",
)
#: Column name to polars type.
Schema = dict[str, pl.DataType | DataTypeClass]
PAGE_SCHEMA: Schema = {
    "title": pl.String,
    "revision_id": pl.Int64,
    "timestamp": pl.Datetime("us", "UTC"),
    "created": pl.Datetime("us", "UTC"),
    "text": pl.String,
}
DROP_SCHEMA = {"title": pl.String, "corpus": pl.String, "reason": pl.String, "detail": pl.String}
# Split points, coarsest first: paragraphs, lines, sentences, words (then a hard cut).
SEPARATORS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?])\s+"), re.compile(r"\s+"))


@dataclass(frozen=True)
class Corpus:
    """The two corpora (columns :data:`PAGE_SCHEMA`, sorted by title) and the drop log
    (title, corpus, reason, detail): every input page is in exactly one of the three."""

    pre: pl.DataFrame
    post: pl.DataFrame
    dropped: pl.DataFrame


def rules_from(params: config.CorpusParams) -> dict[str, Any]:
    """Return the :func:`build` rules held in a run's corpus params."""
    return {name: getattr(params, name) for name in RULES}


def build(pages: Iterable[wiki.Page], cutoff: str | date | datetime = "2025-03-31", **rules: Any) -> Corpus:
    """Split pages into C_pre and C_post at ``cutoff`` and clean their text.

    A page belongs to C_pre's side if its first revision is at or before the cut-off (the whole
    cut-off day counts, UTC) and then uses its latest revision at or before it; otherwise to
    C_post's side at its latest revision (at or before ``snapshot`` when set). A page that
    existed before the cut-off never enters C_post. Each page then passes, in order: namespace,
    title exclusions (shared and per corpus), snapshot, text available, not a redirect, not
    empty, at least ``min_chars`` after cleaning, and (C_post) no C_pre page of the same title
    ignoring case. The first failed check is logged as the page's drop reason.

    Args:
        pages: any iterable of pages; consumed once (streaming).
        cutoff: ``YYYY-MM-DD`` (inclusive day), or an exact datetime.
        **rules: overrides of the :data:`RULES` params; defaults are the paper's.

    Raises:
        TypeError: an unknown rule. ValueError: an invalid title pattern, or a title twice.
    """
    unknown = sorted(set(rules) - set(RULES))
    if unknown:
        raise TypeError(f"unknown corpus rule {unknown[0]!r} (allowed: {', '.join(RULES)})")
    params = dataclasses.replace(config.CorpusParams(), **rules)
    cut = wiki.end_of_day(cutoff)
    snapshot = wiki.end_of_day(params.snapshot) if params.snapshot else None
    shared = _compile(params.exclude_titles)
    patterns = {
        "pre": shared + _compile(params.exclude_titles_pre),
        "post": shared + _compile(params.exclude_titles_post),
    }
    rows: dict[str, list[tuple[Any, ...]]] = {"pre": [], "post": []}
    dropped: list[tuple[str, str, str, str]] = []
    seen: set[str] = set()
    for page in pages:
        if page.title in seen:
            raise ValueError(f"page {page.title!r} appears twice in the input")
        seen.add(page.title)
        first = page.first()
        side = "pre" if first is None or first.timestamp <= cut else "post"
        row, reason, detail = _select(page, side, cut, snapshot, params, patterns[side])
        if row is None:
            dropped.append((page.title, side, reason, detail))
        else:
            rows[side].append(row)
    pre_titles = {row[0].casefold() for row in rows["pre"]}
    post_rows = []
    for row in rows["post"]:
        if row[0].casefold() in pre_titles:
            dropped.append((row[0], "post", "already in C_pre", "a C_pre page has this title"))
        else:
            post_rows.append(row)
    drops = pl.DataFrame(dropped, schema=DROP_SCHEMA, orient="row").sort("corpus", "title")
    return Corpus(pre=_pages(rows["pre"]), post=_pages(post_rows), dropped=drops)


def _pages(rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=PAGE_SCHEMA, orient="row").sort("title")


def _compile(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"invalid title pattern {pattern!r}: {exc}") from exc
    return compiled


def _select(
    page: wiki.Page,
    side: str,
    cut: datetime,
    snapshot: datetime | None,
    params: config.CorpusParams,
    patterns: list[re.Pattern[str]],
) -> tuple[tuple[Any, ...] | None, str, str]:
    first = page.first()
    if first is None:
        return None, "no revisions", "the page has no revision at all"
    if page.namespace not in params.namespaces:
        return None, "namespace", f"namespace {page.namespace}"
    hit = next((p.pattern for p in patterns if p.search(page.title)), None)
    if hit is not None:
        return None, "excluded title", hit
    if side == "post" and snapshot is not None and first.timestamp > snapshot:
        return None, "created after snapshot", f"created {first.timestamp:%Y-%m-%d}"
    rev = page.latest(cut if side == "pre" else snapshot)
    assert rev is not None  # the first revision qualifies in both cases
    if rev.text is None:
        return None, "text unavailable", f"revision {rev.id} has no text"
    target = wiki.redirect_target(rev.text)
    if target is not None:
        return None, "redirect", f"to {target}"
    if not rev.text.strip():
        return None, "empty page", f"revision {rev.id} is empty"
    text = clean.wikitext_to_text(rev.text, drop_sections=params.drop_sections)
    if len(text) < params.min_chars:
        return None, "too short", f"{len(text)} characters after cleaning"
    return (page.title, rev.id, rev.timestamp, first.timestamp, text), "", ""


def chunk(df: pl.DataFrame, size: int = 1500, overlap: int = 250) -> pl.DataFrame:
    """Split each page's text into chunks prefixed with ``[Page: <title>]``.

    The text is split recursively at blank lines, then line breaks, then sentence ends, then
    spaces (a hard cut only for a longer word), and the pieces are packed into chunks whose
    body is at most ``size`` characters; the prefix line is not counted, as in the paper's
    "chunks of at most 1,500 characters ... each prefixed". Consecutive chunks share the
    trailing pieces of the previous chunk up to ``overlap`` characters. Every chunk body is a
    substring of the page text. ``chunk_id`` is ``<Title_with_underscores>#<n>``: stable across
    runs and machines, unique because titles are unique across C_pre and C_post.

    Returns:
        chunk_id, title, text, plus ``url``, ``revision_id``, ``timestamp``, ``corpus`` when
        ``df`` has them.
    """
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"chunk size {size} and overlap {overlap}: need 0 <= overlap < size")
    carried = [c for c in CHUNK_COLUMNS[3:] if c in df.columns]
    out: dict[str, list[Any]] = {name: [] for name in ("chunk_id", "title", "text", *carried)}
    for row in df.iter_rows(named=True):
        title = row["title"]
        for n, body in enumerate(_merge(_pieces(row["text"], size, 0), size, overlap)):
            out["chunk_id"].append(f"{title.replace(' ', '_')}#{n}")
            out["title"].append(title)
            out["text"].append(f"[Page: {title}]\n{body}")
            for name in carried:
                out[name].append(row[name])
    schema: Schema = {"chunk_id": pl.String, "title": pl.String, "text": pl.String}
    schema.update({name: df.schema[name] for name in carried})
    return pl.DataFrame(out, schema=schema)


def _pieces(text: str, size: int, level: int) -> list[str]:
    # Pieces of at most `size` characters whose concatenation is exactly `text`.
    if len(text) <= size:
        return [text]
    if level == len(SEPARATORS):
        return [text[i : i + size] for i in range(0, len(text), size)]
    parts, start = [], 0
    for match in SEPARATORS[level].finditer(text):
        if match.end() > start:
            parts.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        parts.append(text[start:])
    out: list[str] = []
    for part in parts:
        out.extend([part] if len(part) <= size else _pieces(part, size, level + 1))
    return out


def _merge(pieces: list[str], size: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    window: deque[str] = deque()
    length = 0
    for piece in pieces:
        if window and length + len(piece) > size:
            chunks.append("".join(window))
            while window and (length > overlap or length + len(piece) > size):
                length -= len(window.popleft())
        window.append(piece)
        length += len(piece)
    if window:
        chunks.append("".join(window))
    return [body for body in (c.strip() for c in chunks) if body]


def page_url(template: str, title: str) -> str:
    """Return a page's URL from a template such as ``https://minecraft.wiki/w/{title}``."""
    return template.format(title=quote(title.replace(" ", "_"), safe="/:()',!"))


def stats_table(result: Corpus, chunks: dict[str, pl.DataFrame], dropped: pl.DataFrame) -> pl.DataFrame:
    """Return one row per corpus: pages, chunks, revision and creation date ranges (UTC days),
    chunks per page (median, max), the longest chunk text (prefix line included), and the count
    of dropped pages, in total and for every reason of :data:`REASONS`."""
    rows = []
    for name, pages in (("pre", result.pre), ("post", result.post)):
        per_page = chunks[name].group_by("title").len()["len"]
        day = lambda s: s.min().strftime("%Y-%m-%d") if len(s) else ""  # noqa: E731
        last = lambda s: s.max().strftime("%Y-%m-%d") if len(s) else ""  # noqa: E731
        row: dict[str, Any] = {
            "corpus": name,
            "pages": pages.height,
            "chunks": chunks[name].height,
            "revision_from": day(pages["timestamp"]),
            "revision_to": last(pages["timestamp"]),
            "created_from": day(pages["created"]),
            "created_to": last(pages["created"]),
            "chunks_per_page_median": float(cast(float, per_page.median())) if len(per_page) else 0.0,
            "chunks_per_page_max": int(cast(int, per_page.max())) if len(per_page) else 0,
            "chunk_chars_max": int(cast(int, chunks[name]["text"].str.len_chars().max() or 0)),
        }
        mine = dropped.filter(pl.col("corpus") == name)
        row["dropped"] = mine.height
        for reason in REASONS:
            row[f"dropped_{reason.replace(' ', '_').lower()}"] = mine.filter(pl.col("reason") == reason).height
        rows.append(row)
    return pl.DataFrame(rows)
