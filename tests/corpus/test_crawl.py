"""Tests for declinecraft.corpus.crawl: a mock api.php for retries, politeness, caching and equality with
the export path, and (slow) a real MediaWiki 1.39 serving the same export."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import polars as pl
import psutil
import pytest

from declinecraft.core import config
from declinecraft.corpus import corpora, crawl, wiki
from tests.support import mock_mediawiki, projects

TINY = projects.REPO / "tests" / "data" / "tiny.xml"


MINIWIKI = projects.REPO / "data" / "miniwiki" / "miniwiki.xml"


MW = Path("/usr/share/mediawiki")


API = "http://mock/api.php"


def pages() -> list[wiki.Page]:
    return list(wiki.read_dump(TINY))


def client(mock: mock_mediawiki.MockWiki, sleeps: list[float] | None = None, **kwargs: object) -> crawl.ApiClient:
    """An ApiClient on the mock wiki that records sleeps instead of sleeping."""
    record = sleeps if sleeps is not None else []
    options = {"user_agent": "test-agent/1.0", "requests_per_second": 1000.0, "max_retries": 3, **kwargs}
    return crawl.ApiClient(API, transport=mock.transport(), sleep=record.append, **options)


def params(**overrides: object) -> config.CorpusParams:
    base = {"source": "api", "api_url": API, "requests_per_second": 1000.0, "seed_source": "allpages"}
    return dataclasses.replace(config.CorpusParams(), **{**base, **overrides})


def comparable(result: corpora.Corpus) -> dict[str, list[tuple[object, ...]]]:
    """The parts of both corpora two sources must agree on: title, timestamps, cleaned text."""
    return {
        name: getattr(result, name).select("title", "timestamp", "created", "text").rows() for name in ("pre", "post")
    }


class TestApiClient:
    def test_params_and_headers(self) -> None:
        """Every request sends the User-Agent, JSON format version 2 and maxlag=5."""
        mock = mock_mediawiki.MockWiki(pages())
        with client(mock) as api:
            api.get({"action": "query", "list": "allpages"}, about="test")
        assert mock.headers[0]["User-Agent"] == "test-agent/1.0"
        assert {k: mock.requests[0][k] for k in ("format", "formatversion", "maxlag")} == {
            "format": "json",
            "formatversion": "2",
            "maxlag": "5",
        }

    @pytest.mark.parametrize("failure", [503, 500, 429, "timeout", "maxlag"])
    def test_retries_transient(self, failure: object) -> None:
        """5xx, 429, timeouts and maxlag are retried after a backoff, then succeed."""
        mock, sleeps = mock_mediawiki.MockWiki(pages(), failures=[failure, failure]), []
        with client(mock, sleeps) as api:
            data = api.get({"action": "query", "list": "allpages"}, about="test")
        assert "query" in data and len(mock.requests) == 3
        assert [s for s in sleeps if s >= 1.0][:2] in ([1.0, 2.0], [5.0, 5.0])  # backoff, or maxlag's Retry-After

    def test_retry_after_honoured(self) -> None:
        """A 429 with Retry-After waits at least that long before the retry."""
        mock, sleeps = mock_mediawiki.MockWiki(pages(), failures=[(429, 17)]), []
        with client(mock, sleeps) as api:
            api.get({"action": "query", "list": "allpages"}, about="test")
        assert max(sleeps) == 17.0

    def test_gives_up_naming_page(self) -> None:
        """A failure that persists raises CrawlError naming the page and the last problem."""
        mock = mock_mediawiki.MockWiki(pages(), failures=[503] * 10)
        with (
            client(mock, max_retries=2) as api,
            pytest.raises(crawl.CrawlError, match=r"page 'Apple' failed after 3 attempts \(last: HTTP 503\)"),
        ):
            api.get({"action": "query", "prop": "revisions", "titles": "Apple"}, about="page 'Apple'")
        assert len(mock.requests) == 3

    def test_timeouts_give_up(self) -> None:
        """Persistent timeouts end in a CrawlError that says so."""
        mock = mock_mediawiki.MockWiki(pages(), failures=["timeout"] * 10)
        with client(mock, max_retries=1) as api, pytest.raises(crawl.CrawlError, match=r"last: timeout"):
            api.get({"action": "query"}, about="page 'X'")

    @pytest.mark.parametrize(("failure", "message"), [(404, "HTTP 404 for page 'X'"), ("garbage", "not JSON")])
    def test_fatal_answers(self, failure: object, message: str) -> None:
        """A 4xx other than 429, or an answer that is not JSON, fails at once."""
        mock = mock_mediawiki.MockWiki(pages(), failures=[failure])
        with client(mock) as api, pytest.raises(crawl.CrawlError, match=message):
            api.get({"action": "query"}, about="page 'X'")
        assert len(mock.requests) == 1

    def test_api_error(self) -> None:
        """An API error answer fails at once with its code and the page."""
        with (
            client(mock_mediawiki.MockWiki(pages())) as api,
            pytest.raises(crawl.CrawlError, match=r"'invalidparammix' for page 'Apple'"),
        ):
            api.get({"action": "query", "prop": "revisions", "titles": "Apple", "rvlimit": "5"}, about="page 'Apple'")

    def test_rate_limit(self) -> None:
        """At 2 requests per second, each request after the first waits 0.5 s (on a fake clock)."""
        now, sleeps = [100.0], []

        def sleep(seconds: float) -> None:
            sleeps.append(seconds)
            now[0] += seconds

        mock = mock_mediawiki.MockWiki(pages())
        with crawl.ApiClient(
            API, user_agent="t", requests_per_second=2.0, transport=mock.transport(), sleep=sleep, clock=lambda: now[0]
        ) as api:
            for _ in range(4):
                api.get({"action": "query", "list": "allpages"}, about="x")
        assert sleeps == [0.5, 0.5, 0.5]


class TestQuery:
    def test_continuation(self) -> None:
        """query() follows 'continue' until the last batch (allpages in batches of 2)."""
        with client(mock_mediawiki.MockWiki(pages())) as api:
            batches = list(api.query({"list": "allpages", "apnamespace": "0"}, about="x"))
        titles = [p["title"] for b in batches for p in b["query"]["allpages"]]
        assert len(batches) == 7 and len(titles) == 14 and titles == sorted(titles)


@pytest.fixture()
def crawler(tmp_path: Path) -> Iterator[crawl.Crawler]:
    mock = mock_mediawiki.MockWiki(pages())
    with client(mock) as api, crawl.CrawlCache(tmp_path / "c.sqlite") as cache:
        found = crawl.Crawler(api, cache, cutoff="2025-03-31", snapshot="2026-09-08")
        found.mock = mock  # type: ignore[attr-defined]
        yield found


class TestCrawler:
    def test_pre_page(self, crawler: crawl.Crawler) -> None:
        """A page that existed at the cut-off yields its creation and its revision at the cut-off."""
        page = crawl.to_page(crawler.page("Apple"))
        assert [(r.id, r.text is None) for r in page.revisions] == [(101, True), (102, False)]

    def test_post_page(self, crawler: crawl.Crawler) -> None:
        """A page created later yields its creation and its latest revision up to the snapshot."""
        page = crawl.to_page(crawler.page("Camel Husk"))
        assert [r.id for r in page.revisions] == [1301]
        assert page.revisions[0].text.startswith("The '''camel husk'''")

    def test_requests_one_title_at_the_cutoff(self, crawler: crawl.Crawler) -> None:
        """The content request asks for one revision at or before <cutoff>T23:59:59Z."""
        crawler.page("Apple")
        ask = crawler.mock.requests[1]  # type: ignore[attr-defined]
        assert (ask["titles"], ask["rvlimit"], ask["rvstart"], ask["rvslots"]) == (
            "Apple",
            "1",
            "2025-03-31T23:59:59Z",
            "main",
        )
        assert ask["rvprop"] == "ids|timestamp|content"

    def test_missing(self, crawler: crawl.Crawler) -> None:
        """A title the wiki lacks is reported missing, with the seed side and why."""
        result = crawler.crawl(["Nonexistent page"], side="post")
        assert result.pages == [] and result.missing == [("Nonexistent page", "post", "seed title not on the wiki")]

    def test_follows_links_and_redirects(self, crawler: crawl.Crawler) -> None:
        """BFS visits seeds, then their links in order; a redirect leads to its target."""
        result = crawler.crawl(["Harnesses", "Copper Sword"], follow=lambda page, seed: True)
        assert [p.title for p in result.pages] == ["Harnesses", "Copper Sword", "Harness"]
        assert {m[0] for m in result.missing} == {
            "Anvil",
            "Copper ingot",
            "Stick",
            "Sword",
            "Glass",
            "Happy ghast",
            "Leather",
            "Wool",
        }

    def test_max_pages(self, crawler: crawl.Crawler) -> None:
        """The crawl stops at max_pages and reports how much frontier was left."""
        result = crawler.crawl(["Copper Sword"], follow=lambda page, seed: True, max_pages=2)
        assert result.stats == {"visited": 2, "frontier_left": 3}

    def test_cache_replays_offline(self, crawler: crawl.Crawler, tmp_path: Path) -> None:
        """A second crawl with the same cache sends no request, even if the API is down."""
        first = crawler.crawl(crawler.all_titles())
        down = mock_mediawiki.MockWiki([], failures=["timeout"] * 100)
        with client(down, max_retries=0) as api, crawl.CrawlCache(tmp_path / "c.sqlite") as cache:
            again = crawl.Crawler(api, cache, cutoff="2025-03-31", snapshot="2026-09-08")
            second = again.crawl(again.all_titles())
        assert second.pages == first.pages and down.requests == []

    def test_resumes_after_failure(self, tmp_path: Path) -> None:
        """A crawl stopped by a dead API resumes from the cache and asks only for the rest."""
        upstream, calls = mock_mediawiki.MockWiki(pages()), 0

        def dies_after_15(request: httpx.Request) -> httpx.Response:
            nonlocal calls
            calls += 1
            return upstream.handle(request) if calls <= 15 else httpx.Response(503)

        # 7 allpages batches + 2 requests for each of the first 4 pages succeed, then all fail.
        with pytest.raises(crawl.CrawlError, match="rerun to resume"):
            crawl.crawl_corpus(
                params(max_retries=1), tmp_path, transport=httpx.MockTransport(dies_after_15), sleep=lambda s: None
            )
        healthy = mock_mediawiki.MockWiki(pages())
        result = crawl.crawl_corpus(params(), tmp_path, transport=healthy.transport())
        assert len(result.pages) == 14 and result.stats["cache_hits"] == 1 + 4
        assert len(healthy.requests) == 2 * (14 - 4)


class TestCrawlCache:
    def test_roundtrip(self, tmp_path: Path) -> None:
        """A stored value survives closing and reopening the cache, and counts as a hit."""
        with crawl.CrawlCache(tmp_path / "c.sqlite") as cache:
            cache.put(["a", 1], {"x": [1, 2]})
        with crawl.CrawlCache(tmp_path / "c.sqlite") as cache:
            assert cache.get(["a", 1]) == {"x": [1, 2]} and cache.get(["a", 2]) is None and cache.hits == 1

    def test_corrupt(self, tmp_path: Path) -> None:
        """A file that is not SQLite is a CrawlError naming it."""
        bad = tmp_path / "c.sqlite"
        bad.write_bytes(b"not a database at all" * 100)
        with pytest.raises(crawl.CrawlError, match=r"c\.sqlite: crawl cache is not a usable SQLite file"):
            crawl.CrawlCache(bad)


class TestToPage:
    def test_merges_revisions(self) -> None:
        """Duplicate revision ids merge, keeping the one with text, oldest first."""
        record = {
            "title": "A",
            "ns": 0,
            "revisions": [
                {"id": 2, "timestamp": "2025-01-02T00:00:00Z", "text": "#REDIRECT [[B]]"},
                {"id": 1, "timestamp": "2025-01-01T00:00:00Z", "text": None},
                {"id": 2, "timestamp": "2025-01-02T00:00:00Z", "text": None},
            ],
        }
        page = crawl.to_page(record)
        assert [(r.id, r.text) for r in page.revisions] == [(1, None), (2, "#REDIRECT [[B]]")]
        assert page.redirect == "B"


class TestCrawlCorpus:
    def test_allpages_equals_export(self, tmp_path: Path) -> None:
        """Crawling every page of a wiki gives the same C_pre/C_post as reading its export."""
        crawled = crawl.crawl_corpus(params(), tmp_path, transport=mock_mediawiki.MockWiki(pages()).transport())
        p = params()
        assert comparable(corpora.build(crawled.pages, p.cutoff, **corpora.rules_from(p))) == comparable(
            corpora.build(pages(), p.cutoff, **corpora.rules_from(p))
        )

    def test_links_mode(self, tmp_path: Path) -> None:
        """Link mode crawls from both seed lists, follows pre links only out of pre pages and
        post links only out of post pages, and pools what it finds."""
        p = params(seed_source="links", seeds_pre=["Bread"], seeds_post=["Harnesses", "Nowhere"])
        result = crawl.crawl_corpus(p, tmp_path, transport=mock_mediawiki.MockWiki(pages()).transport())
        assert [pg.title for pg in result.pages] == ["Bread", "Harnesses", "Harness"]
        assert ("Nowhere", "post", "seed title not on the wiki") in result.missing
        assert result.stats["visited"] == 1 + 3 + 4  # Bread; Harnesses, Nowhere, Harness; its 4 links

    def test_needs_seeds(self, tmp_path: Path) -> None:
        """Link mode without seeds is an error, not an empty corpus."""
        with pytest.raises(crawl.CrawlError, match="needs seeds_pre or seeds_post"):
            crawl.crawl_corpus(
                params(seed_source="links"), tmp_path, transport=mock_mediawiki.MockWiki(pages()).transport()
            )


# --- a real MediaWiki (Debian's mediawiki 1.39 + php-sqlite3) ----------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def php(script: str, *args: str, env: dict[str, str]) -> None:
    subprocess.run(
        ["php", str(MW / "maintenance" / script), *args], env=env, check=True, stdout=subprocess.DEVNULL, timeout=300
    )


def ensure_mediawiki() -> None:
    """Install Debian's mediawiki when running as root (CI); otherwise skip with the reason."""
    if MW.is_dir() and shutil.which("php"):
        return
    if os.geteuid() != 0:
        pytest.skip(
            "needs Debian's mediawiki + php-sqlite3 (/usr/share/mediawiki absent and not root to "
            "install it: apt-get install -y --no-install-recommends mediawiki php-sqlite3)"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(
        ["apt-get", "install", "-y", "--no-install-recommends", "mediawiki", "php-sqlite3"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=900,
    )


@pytest.fixture(scope="module", params=["tiny", "miniwiki"])
def mediawiki(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A throwaway wiki holding one export, served by `php -S`; yields (api_url, export)."""
    dump = TINY if request.param == "tiny" else MINIWIKI
    if not dump.is_file():
        pytest.skip(f"{dump} not assembled yet")
    ensure_mediawiki()
    folder, port = tmp_path_factory.mktemp(f"mw-{request.param}"), free_port()
    env = {**os.environ, "MW_CONFIG_FILE": str(folder / "LocalSettings.php")}
    php(
        "install.php",
        "--quiet",
        "--dbtype",
        "sqlite",
        "--dbpath",
        str(folder / "data"),
        "--dbname",
        "mwtest",
        "--confpath",
        str(folder),
        "--server",
        f"http://127.0.0.1:{port}",
        "--scriptpath",
        "",
        "--lang",
        "en",
        "--pass",
        "declinecraft-test-pass",
        "--skins",
        "Vector",
        "TestWiki",
        "Admin",
        env=env,
    )
    with (folder / "LocalSettings.php").open("a") as settings:
        settings.write(f'\n$wgCacheDirectory = "{folder}/cache";\n$wgUploadDirectory = "{folder}/images";\n')
        # A throwaway wiki needs no fsync per write: importing the mini wiki takes ~1 s, not ~40 s.
        settings.write(
            "$wgDBservers = [['host' => '', 'user' => '', 'password' => '', 'dbname' => $wgDBname, "
            "'type' => 'sqlite', 'load' => 1, 'flags' => DBO_DEFAULT, "
            "'variables' => ['synchronous' => 'OFF']]];\n"
        )
    # --no-updates skips per-page link updates (several times faster); refreshLinks rebuilds them.
    php("importDump.php", "--quiet", "--no-updates", "--username-prefix=imported", str(dump), env=env)
    (folder / "delete.txt").write_text("Main Page\n")  # the installer's page is not in the export
    php("deleteBatch.php", str(folder / "delete.txt"), env=env)
    php("initSiteStats.php", "--update", env=env)
    php("refreshLinks.php", env=env)
    php("runJobs.php", "--quiet", env=env)
    server = subprocess.Popen(
        ["php", "-S", f"127.0.0.1:{port}", "-t", str(MW)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    api = f"http://127.0.0.1:{port}/api.php"
    try:
        for _ in range(100):
            try:
                if httpx.get(api, params={"action": "query", "meta": "siteinfo", "format": "json"}).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield api, dump
    finally:
        for child in psutil.Process(server.pid).children(recursive=True):  # workers outlive the master
            child.kill()
        server.kill()
        server.wait(timeout=10)


@pytest.mark.slow
class TestRealMediaWiki:
    def test_crawl_equals_export(self, mediawiki: tuple[str, Path], tmp_path: Path) -> None:
        """Crawling a real MediaWiki that imported an export gives the export's C_pre and C_post."""
        api, dump = mediawiki
        p = params(api_url=api)
        crawled = crawl.crawl_corpus(p, tmp_path)
        from_api = corpora.build(crawled.pages, p.cutoff, **corpora.rules_from(p))
        from_dump = corpora.build(wiki.read_dump(dump), p.cutoff, **corpora.rules_from(p))
        assert from_api.pre.height > 0 and from_api.post.height > 0
        assert comparable(from_api) == comparable(from_dump)
        assert crawled.missing == []

    def test_links_mode(self, mediawiki: tuple[str, Path], tmp_path: Path) -> None:
        """Link mode on the real wiki finds the export's post pages reachable from a seed."""
        api, dump = mediawiki
        if dump != TINY:
            pytest.skip("link structure is asserted on the tiny export only")
        p = params(api_url=api, seed_source="links", seeds_pre=["Bread"], seeds_post=["Harnesses"])
        crawled = crawl.crawl_corpus(p, tmp_path)
        built = corpora.build(crawled.pages, p.cutoff, **corpora.rules_from(p))
        assert built.pre["title"].to_list() == ["Bread"] and built.post["title"].to_list() == ["Harness"]
        assert pl.Series([m[0] for m in crawled.missing]).is_in(["Glass", "Happy ghast", "Leather", "Wool"]).all()
