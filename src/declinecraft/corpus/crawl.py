"""The live MediaWiki API as a corpus source: a polite, resumable crawler (Appendix D).

For every page it fetches the page's first revision (its creation), then, if the page existed
at the cut-off, its latest revision at or before the cut-off, else its latest revision at or
before the snapshot day — the same :class:`wiki.Page` records :func:`wiki.read_dump` gives, so
:func:`~declinecraft.corpus.corpora.build` applies one set of rules to both sources.

Titles come from a breadth-first crawl over page links from seed titles (``seed_source:
links``, the paper's method), or from ``list=allpages`` (``seed_source: allpages``: every page
of the article namespaces, for a wiki whose links do not reach every page, such as the mini
wiki in the crawler's integration test). The C_pre crawl follows links only out of pages that
existed at the cut-off, the C_post crawl only out of its seeds and pages created after it;
excluded titles are never followed. Pages found by either crawl are pooled: a page's corpus is
decided by its own history, not by which crawl found it. Links are the wiki's current link
table (``prop=links``), which includes links made by templates.

Every answer is cached in SQLite under ``<cache>/crawl/`` keyed by API URL, title, cut-off
and snapshot and committed per page, so an interrupted crawl resumes where it stopped and a
finished one replays without the network.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx

from declinecraft.core import config
from declinecraft.corpus import wiki

log = logging.getLogger(__name__)
STAMP = "%Y-%m-%dT%H:%M:%SZ"


class CrawlError(RuntimeError):
    """The API could not be read; the message names the URL, the request and the page."""


class ApiClient:
    """GET requests to a MediaWiki ``api.php``: rate-limited, ``maxlag``-aware, retried.

    5xx, 429, timeouts, connection errors and ``maxlag`` errors are retried with exponential
    backoff (``backoff_s * 2**attempt``), waiting at least as long as a ``Retry-After`` header
    asks, but never more than ``max_wait_s`` at once; other API errors fail at once.
    """

    def __init__(
        self,
        api_url: str,
        *,
        user_agent: str,
        requests_per_second: float = 1.0,
        max_retries: int = 6,
        timeout_s: float = 30.0,
        maxlag: int = 5,
        backoff_s: float = 1.0,
        max_wait_s: float = 600.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests_per_second <= 0:
            raise ValueError(f"requests_per_second must be positive, got {requests_per_second}")
        self.api_url = api_url
        self.interval = 1.0 / requests_per_second
        self.max_retries, self.maxlag = max_retries, maxlag
        self.backoff_s, self.max_wait_s = backoff_s, max_wait_s
        self.requests = 0
        self._sleep, self._clock = sleep, clock
        self._last = float("-inf")
        self._http = httpx.Client(
            headers={"User-Agent": user_agent, "Accept": "application/json"},
            timeout=timeout_s,
            transport=transport,
            follow_redirects=True,
        )

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def get(self, params: dict[str, Any], *, about: str) -> dict[str, Any]:
        """Return one API answer as JSON; ``about`` names the page for error messages.

        Raises:
            CrawlError: an API error, a non-retryable HTTP status, a non-JSON answer, or a
                retryable failure that persisted through ``max_retries`` retries.
        """
        full = {**params, "format": "json", "formatversion": "2", "maxlag": str(self.maxlag)}
        problem = ""
        for attempt in range(self.max_retries + 1):
            answer = self._request_once(full, about)
            if isinstance(answer, dict):
                return answer
            problem, wait = answer  # a retryable failure and the server's Retry-After, if any
            if attempt == self.max_retries:
                break
            delay = min(self.max_wait_s, max(self.backoff_s * 2**attempt, wait or 0.0))
            log.warning(
                "%s: %s for %s; retry %d/%d in %.1f s",
                self.api_url,
                problem,
                about,
                attempt + 1,
                self.max_retries,
                delay,
            )
            self._sleep(delay)
        raise CrawlError(
            f"{self.api_url}: request for {about} failed after {self.max_retries + 1} attempts "
            f"(last: {problem}); the crawl cache keeps every page fetched so far, rerun to resume"
        )

    def _request_once(self, params: dict[str, str], about: str) -> dict[str, Any] | tuple[str, float | None]:
        # The JSON answer, or (problem, Retry-After seconds) for a failure worth retrying.
        wait = self._last + self.interval - self._clock()
        if wait > 0:
            self._sleep(wait)
        self._last = self._clock()
        self.requests += 1
        try:
            response = self._http.get(self.api_url, params=params)
        except httpx.TimeoutException as exc:
            return f"timeout ({type(exc).__name__})", None
        except httpx.TransportError as exc:
            return f"connection error ({exc})", None
        retry_after = _retry_after(response.headers.get("Retry-After"))
        if response.status_code == 429 or response.status_code >= 500:
            return f"HTTP {response.status_code}", retry_after
        if response.status_code != 200:
            raise CrawlError(f"{self.api_url}: HTTP {response.status_code} for {about}")
        try:
            data = response.json()
        except ValueError as exc:
            raise CrawlError(f"{self.api_url}: answer for {about} is not JSON: {response.text[:200]!r}") from exc
        error = data.get("error") if isinstance(data, dict) else None
        if error:
            if error.get("code") == "maxlag":
                return f"maxlag ({error.get('lag', '?')} s)", retry_after or float(error.get("lag") or 0)
            raise CrawlError(f"{self.api_url}: API error {error.get('code')!r} for {about}: {error.get('info', '')}")
        return data

    def query(self, params: dict[str, Any], *, about: str) -> Iterator[dict[str, Any]]:
        """Yield every batch of an ``action=query`` request, following ``continue``."""
        extra: dict[str, Any] = {}
        while True:
            data = self.get({"action": "query", **params, **extra}, about=about)
            yield data
            if "continue" not in data:
                return
            extra = data["continue"]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - datetime.now(UTC)).total_seconds())


class CrawlCache:
    """Crawl answers in SQLite (WAL, one commit per entry): safe to kill, safe to share."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise CrawlError(f"{self.path}: crawl cache is not a usable SQLite file ({exc}); move it away") from exc
        self.hits = 0

    def __enter__(self) -> CrawlCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    def get(self, key: list[Any]) -> Any:
        """Return the cached value for ``key`` or ``None``."""
        row = self._db.execute("SELECT value FROM entries WHERE key = ?", (json.dumps(key),)).fetchone()
        if row is None:
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: list[Any], value: Any) -> None:
        """Store ``value`` under ``key`` and commit."""
        self._db.execute("INSERT OR REPLACE INTO entries VALUES (?, ?)", (json.dumps(key), json.dumps(value)))
        self._db.commit()


@dataclass
class CrawlResult:
    """Pages found (first found first), titles the wiki does not have, and counters."""

    pages: list[wiki.Page] = field(default_factory=list)
    missing: list[tuple[str, str, str]] = field(default_factory=list)  # (title, "pre"|"post", why)
    stats: dict[str, int] = field(default_factory=dict)


class Crawler:
    """Fetches pages through an :class:`ApiClient`, caching every answer."""

    def __init__(
        self, client: ApiClient, cache: CrawlCache, *, cutoff: str, snapshot: str = "", namespaces: Iterable[int] = (0,)
    ) -> None:
        self.client, self.cache = client, cache
        self.cut = wiki.end_of_day(cutoff)
        self.snapshot = wiki.end_of_day(snapshot) if snapshot else None
        self.namespaces = tuple(namespaces)
        self._key = [client.api_url, self.cut.strftime(STAMP), self.snapshot.strftime(STAMP) if self.snapshot else ""]

    def page(self, title: str) -> dict[str, Any]:
        """Return a page record: title, ns, missing, revisions (first, then the selected one)."""
        key = [*self._key, "page", title]
        record = self.cache.get(key)
        if record is None:
            record = self._fetch_page(title)
            self.cache.put(key, record)
        return record

    def _fetch_page(self, title: str) -> dict[str, Any]:
        about = f"page {title!r}"
        first = self._revision(title, {"rvdir": "newer", "rvprop": "ids|timestamp"}, about)
        if first.get("missing") or first.get("invalid") or not first.get("revisions"):
            return {"title": first.get("title", title), "ns": first.get("ns", 0), "missing": True, "revisions": []}
        created = wiki.parse_timestamp(first["revisions"][0]["timestamp"])
        until = self.cut if created <= self.cut else self.snapshot
        selected = {"rvprop": "ids|timestamp|content", "rvslots": "main"}
        if until is not None:
            selected["rvstart"] = until.strftime(STAMP)
        latest = self._revision(title, selected, about)
        revisions = [_rev(r) for r in first["revisions"] + latest.get("revisions", [])]
        return {"title": first["title"], "ns": first["ns"], "missing": False, "revisions": revisions}

    def _revision(self, title: str, params: dict[str, str], about: str) -> dict[str, Any]:
        # rvlimit=1 answers carry an rvcontinue for older revisions: never follow it here.
        data = self.client.get(
            {"action": "query", "prop": "revisions", "titles": title, "rvlimit": "1", **params}, about=about
        )
        pages = data.get("query", {}).get("pages", [])
        if len(pages) != 1:
            raise CrawlError(f"{self.client.api_url}: expected one page for {about}, got {len(pages)}")
        return pages[0]

    def links(self, title: str) -> list[str]:
        """Return the titles a page links to in the article namespaces (current link table)."""
        key = [*self._key, "links", title]
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        params = {
            "prop": "links",
            "titles": title,
            "pllimit": "max",
            "plnamespace": "|".join(map(str, self.namespaces)),
        }
        found = [
            link["title"]
            for batch in self.client.query(params, about=f"links of {title!r}")
            for page in batch.get("query", {}).get("pages", [])
            for link in page.get("links", [])
        ]
        self.cache.put(key, found)
        return found

    def all_titles(self) -> list[str]:
        """Return every page title in the article namespaces (``list=allpages``)."""
        key = [*self._key, "allpages", list(self.namespaces)]
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        titles: list[str] = []
        for namespace in self.namespaces:
            params = {"list": "allpages", "apnamespace": str(namespace), "aplimit": "max"}
            for batch in self.client.query(params, about=f"list=allpages namespace {namespace}"):
                titles.extend(p["title"] for p in batch.get("query", {}).get("allpages", []))
        self.cache.put(key, titles)
        return titles

    def crawl(
        self,
        seeds: Iterable[str],
        *,
        follow: Callable[[wiki.Page, bool], bool] | None = None,
        max_pages: int = 3000,
        side: str = "pre",
    ) -> CrawlResult:
        """Breadth-first over links from ``seeds`` (``follow=None``: visit the seeds only).

        ``follow(page, is_seed)`` says whether to expand a page's links; a redirect is always
        resolved by visiting its target. Stops after ``max_pages`` pages (logged, in stats).
        """
        queue = deque(dict.fromkeys(wiki.normalize_title(s) for s in seeds))
        queued, result = set(queue), CrawlResult()
        seeds_set, visited = set(queue), 0
        while queue and visited < max_pages:
            title = queue.popleft()
            record = self.page(title)
            visited += 1
            if record["missing"]:
                why = "seed title not on the wiki" if title in seeds_set else "link to a page that does not exist"
                if title in seeds_set:
                    log.warning("%s: seed %r is not on the wiki", self.client.api_url, title)
                result.missing.append((record["title"], side, why))
                continue
            page = to_page(record)
            result.pages.append(page)
            latest = page.latest()
            target = wiki.redirect_target(latest.text if latest else None)
            nexts = [target] if target else []
            if not target and follow is not None and follow(page, title in seeds_set):
                nexts = self.links(record["title"])
            for name in nexts:
                if name not in queued:
                    queued.add(name)
                    queue.append(name)
        if queue:
            log.warning(
                "crawl from %d seeds stopped at max_pages=%d with %d titles left", len(seeds_set), max_pages, len(queue)
            )
        result.stats = {"visited": visited, "frontier_left": len(queue)}
        return result


def _rev(raw: dict[str, Any]) -> dict[str, Any]:
    main = raw.get("slots", {}).get("main", {})
    text = None if main.get("texthidden") or "content" not in main else main["content"]
    return {"id": raw["revid"], "timestamp": raw["timestamp"], "text": text}


def to_page(record: dict[str, Any]) -> wiki.Page:
    """Return the :class:`wiki.Page` of a crawl record (revisions de-duplicated, oldest first)."""
    by_id: dict[int, wiki.Revision] = {}
    for raw in record["revisions"]:
        rev = wiki.Revision(int(raw["id"]), wiki.parse_timestamp(raw["timestamp"]), raw["text"])
        if rev.id not in by_id or by_id[rev.id].text is None:
            by_id[rev.id] = rev
    revisions = sorted(by_id.values(), key=lambda r: (r.timestamp, r.id))
    latest = revisions[-1].text if revisions else None
    return wiki.Page(record["title"], int(record["ns"]), revisions, redirect=wiki.redirect_target(latest))


def crawl_corpus(
    params: config.CorpusParams,
    cache_dir: str | Path,
    *,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> CrawlResult:
    """Crawl the pages of both corpora as the run's params say (seeds, allpages, politeness).

    Raises:
        CrawlError: the API failed (after retries), or there is nothing to crawl.
    """
    shared = [re.compile(p) for p in params.exclude_titles]
    cut = wiki.end_of_day(params.cutoff)

    def allowed(page: wiki.Page) -> bool:
        return page.namespace in params.namespaces and not any(p.search(page.title) for p in shared)

    def follow_pre(page: wiki.Page, is_seed: bool) -> bool:
        created = page.first()
        return allowed(page) and (is_seed or (created is not None and created.timestamp <= cut))

    def follow_post(page: wiki.Page, is_seed: bool) -> bool:
        created = page.first()
        return allowed(page) and (is_seed or (created is not None and created.timestamp > cut))

    client = ApiClient(
        params.api_url,
        user_agent=params.user_agent,
        requests_per_second=params.requests_per_second,
        max_retries=params.max_retries,
        timeout_s=params.timeout_s,
        maxlag=params.maxlag,
        transport=transport,
        sleep=sleep,
    )
    with client, CrawlCache(Path(cache_dir) / "crawl.sqlite") as cache:
        crawler = Crawler(client, cache, cutoff=params.cutoff, snapshot=params.snapshot, namespaces=params.namespaces)
        if params.seed_source == "allpages":
            parts = [crawler.crawl(crawler.all_titles(), max_pages=params.max_pages)]
        elif params.seed_source == "links":
            if not params.seeds_pre and not params.seeds_post:
                raise CrawlError(f"{params.api_url}: seed_source 'links' needs seeds_pre or seeds_post")
            parts = [
                crawler.crawl(params.seeds_pre, follow=follow_pre, max_pages=params.max_pages, side="pre"),
                crawler.crawl(params.seeds_post, follow=follow_post, max_pages=params.max_pages, side="post"),
            ]
        else:
            raise CrawlError(f"seed_source must be 'links' or 'allpages', got {params.seed_source!r}")
        merged, seen = CrawlResult(), set()
        for part in parts:
            for page in part.pages:
                if page.title not in seen:
                    seen.add(page.title)
                    merged.pages.append(page)
            merged.missing.extend(m for m in part.missing if m not in merged.missing)
        merged.stats = {
            "visited": sum(p.stats["visited"] for p in parts),
            "frontier_left": sum(p.stats["frontier_left"] for p in parts),
            "requests": client.requests,
            "cache_hits": cache.hits,
        }
    return merged
