"""A tiny in-memory MediaWiki ``api.php`` for crawler tests, served through ``httpx.MockTransport``.

It answers the requests :mod:`declinecraft.corpus.crawl` makes (``prop=revisions`` with
rvlimit/rvstart/rvdir/rvprop, ``prop=links``, ``list=allpages``) from a list of
:class:`wiki.Page`, in ``formatversion=2`` JSON, paging links and allpages two at a time so
continuation is exercised. ``failures`` scripts answers to give before the real ones: an int
status, ``(status, retry_after)``, ``"timeout"``, ``"maxlag"`` or ``"garbage"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

import httpx

from declinecraft.corpus import wiki

LINK_RE = re.compile(r"\[\[([^\]|#]+)")
PAGE_SIZE = 2


class MockWiki:
    """An api.php over ``pages``; records every request's query parameters."""

    def __init__(self, pages: Iterable[wiki.Page], failures: Iterable[object] = ()) -> None:
        self.pages = {page.title: page for page in pages}
        self.failures = list(failures)
        self.requests: list[dict[str, str]] = []
        self.headers: list[httpx.Headers] = []

    def transport(self) -> httpx.MockTransport:
        """Return an httpx transport answering with this wiki."""
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        self.requests.append(params)
        self.headers.append(request.headers)
        if self.failures:
            failure = self.failures.pop(0)
            if failure == "timeout":
                raise httpx.ReadTimeout("mock timeout", request=request)
            if failure == "maxlag":
                return httpx.Response(
                    200, headers={"Retry-After": "5"}, json={"error": {"code": "maxlag", "info": "Waiting", "lag": 7}}
                )
            if failure == "garbage":
                return httpx.Response(200, text="<html>oops</html>")
            status, retry_after = failure if isinstance(failure, tuple) else (failure, None)
            headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
            return httpx.Response(int(status), headers=headers, text="busy")
        if params.get("list") == "allpages":
            return httpx.Response(200, json=self._allpages(params))
        if params.get("prop") == "links":
            return httpx.Response(200, json=self._links(params))
        if params.get("prop") == "revisions":
            return httpx.Response(200, json=self._revisions(params))
        return httpx.Response(200, json={"error": {"code": "badvalue", "info": f"unsupported {params}"}})

    def _page(self, params: dict[str, str]) -> tuple[str, wiki.Page | None]:
        if "|" in params["titles"]:
            raise AssertionError("the crawler must ask for one title at a time")
        title = wiki.normalize_title(params["titles"])
        return title, self.pages.get(title)

    def _revisions(self, params: dict[str, str]) -> dict[str, object]:
        if params.get("rvlimit") != "1":
            return {"error": {"code": "invalidparammix", "info": "test wiki serves rvlimit=1 only"}}
        title, page = self._page(params)
        if page is None:
            return {"query": {"pages": [{"ns": 0, "title": title, "missing": True}]}}
        revs = list(page.revisions)
        start = params.get("rvstart")
        if params.get("rvdir") == "newer":
            chosen = [r for r in revs if start is None or r.timestamp >= _stamp(start)][:1]
        else:
            chosen = [r for r in revs if start is None or r.timestamp <= _stamp(start)][-1:]
        content = "content" in params.get("rvprop", "")
        out = []
        for rev in chosen:
            item: dict[str, object] = {"revid": rev.id, "timestamp": rev.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")}
            if content:
                main = {"texthidden": True} if rev.text is None else {"content": rev.text}
                item["slots"] = {"main": {"contentmodel": "wikitext", **main}}
            out.append(item)
        answer: dict[str, object] = {
            "query": {"pages": [{"ns": page.namespace, "title": page.title, "revisions": out}]}
        }
        if len(revs) > 1:
            answer["continue"] = {"rvcontinue": "more", "continue": "||"}  # never to be followed
        return answer

    def _links(self, params: dict[str, str]) -> dict[str, object]:
        title, page = self._page(params)
        if page is None:
            return {"query": {"pages": [{"ns": 0, "title": title, "missing": True}]}}
        latest = page.latest()
        targets = sorted({wiki.normalize_title(t) for t in LINK_RE.findall(latest.text or "")} if latest else set())
        offset = int(params.get("plcontinue", "0"))
        batch = targets[offset : offset + PAGE_SIZE]
        answer: dict[str, object] = {
            "query": {
                "pages": [{"ns": page.namespace, "title": page.title, "links": [{"ns": 0, "title": t} for t in batch]}]
            }
        }
        if offset + PAGE_SIZE < len(targets):
            answer["continue"] = {"plcontinue": str(offset + PAGE_SIZE), "continue": "||"}
        return answer

    def _allpages(self, params: dict[str, str]) -> dict[str, object]:
        namespace = int(params.get("apnamespace", "0"))
        titles = sorted(t for t, p in self.pages.items() if p.namespace == namespace)
        offset = int(params.get("apcontinue", "0"))
        answer: dict[str, object] = {
            "query": {"allpages": [{"ns": namespace, "title": t} for t in titles[offset : offset + PAGE_SIZE]]}
        }
        if offset + PAGE_SIZE < len(titles):
            answer["continue"] = {"apcontinue": str(offset + PAGE_SIZE), "continue": "-||"}
        return answer


def _stamp(value: str) -> datetime:
    return wiki.parse_timestamp(value)
