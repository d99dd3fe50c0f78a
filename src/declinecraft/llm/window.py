"""The window of :meth:`Client.astream <declinecraft.llm.client.Client.astream>`: requests
built, looked up and sent as room frees, results taken in request order.

Part of the client's own machinery, kept apart for length: :class:`Window` calls the client's
``prepare``, ``_call`` (send one call and commit its record) and ``_flush`` (commit the records
waiting now), and sets its ``_reached`` once the first call (the probe) went through.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Any, Protocol

from declinecraft.llm.cache import CallRecord
from declinecraft.llm.progress import Progress
from declinecraft.llm.responses import Result, make_result
from declinecraft.llm.spend import BudgetExceeded
from declinecraft.runtime import replay


class Prepared(Protocol):
    """What the window reads of a request the client prepared (its ``_Prepared``)."""

    @property
    def request(self) -> Any: ...  # the client's Request
    @property
    def key(self) -> str: ...
    @property
    def mode(self) -> str: ...


#: Fewest requests a stream holds between building one and yielding its result.
WINDOW = 1024
#: Requests built and looked up in the cache together (one query).
CHUNK = 256


def window_size(slots: int) -> int:
    """Requests ``Client.astream`` holds at once: four times the slots (calls in flight at
    once), at least :data:`WINDOW`, so the oldest call being slow never leaves a slot idle."""
    return max(WINDOW, 4 * slots)


def _stale(record: CallRecord, failed_before: str) -> bool:
    """A failure recorded before ``failed_before`` (an earlier run's), to be sent again."""
    return record.status != "ok" and record.created_at < failed_before


_Source = asyncio.Future[CallRecord] | CallRecord


class Window:
    """The window of one :meth:`~declinecraft.llm.client.Client.astream`: requests built, looked up and sent as room
    frees, results taken in request order."""

    def __init__(
        self,
        client: Any,
        requests: Iterator[Any],
        size: int,
        *,
        retry_failures: bool,
        failed_before: str,
        bar: Progress,
        ahead: Mapping[str, CallRecord] | None = None,
    ) -> None:
        self.client, self.requests, self.size = client, requests, size
        self.ahead = dict(ahead or {})
        """Records of calls answered before the stream (a batch API's, or stand-ins of calls written
        for a batch run): taken as they are, never looked up or sent."""
        self.retry_failures, self.failed_before, self.bar = retry_failures, failed_before, bar
        self.pending: deque[tuple[Prepared, _Source]] = deque()
        self.open: dict[str, _Source] = {}
        """The source of each key in the window (a call in flight, or its record)."""
        self.sent: set[str] = set(self.ahead)
        """Keys this stream sent (64 hex characters each: 480k calls take about 60 MB)."""
        self.broken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Set with the first error a call raised (not a failed call: that is a record)."""
        self.counts = dict.fromkeys(("calls", "cached", "sent", "failed", "budget_exhausted", "lost_to_format"), 0)

    async def next(self) -> tuple[Prepared, CallRecord] | None:
        """Fill the window, then wait for the oldest request's record (None when all are done)."""
        while len(self.pending) < self.size:
            chunk = [self.client.prepare(r) for r in islice(self.requests, min(CHUNK, self.size - len(self.pending)))]
            if not chunk:
                break
            await self._admit(chunk)
        if not self.pending:
            return None
        prepared, source = self.pending.popleft()
        if isinstance(source, asyncio.Future):
            if not source.done():
                await asyncio.wait((source, self.broken), return_when=asyncio.FIRST_COMPLETED)
            if self.broken.done():
                self.broken.result()  # raises the call's error
            if isinstance(source.exception(), BudgetExceeded):  # the calls already out finish and are stored first
                await asyncio.gather(
                    *(s for _, s in self.pending if isinstance(s, asyncio.Future)), return_exceptions=True
                )
            record = source.result()
        else:
            record = source
        if self.open.get(prepared.key) is source:
            del self.open[prepared.key]
        return prepared, record

    def result(self, prepared: Prepared, record: CallRecord) -> Result:
        """The result of one request, counted for the summary."""
        result = make_result(
            record,
            model_id=self.client.spec.id,
            tag=prepared.request.tag,
            thinking_mode=prepared.mode,
            json_mode=prepared.request.json_mode,
            cached=prepared.key not in self.sent,
        )
        counts = self.counts
        counts["calls"] += 1
        counts["cached" if result.cached else "sent"] += 1
        counts["failed"] += not result.ok
        counts["budget_exhausted"] += result.budget_exhausted
        counts["lost_to_format"] += result.lost_to_format
        return result

    async def _admit(self, chunk: list[Prepared]) -> None:
        """Look a chunk up in the cache and start the calls it lacks (the first one alone, as a probe)."""
        client = self.client
        client._flush()  # a call answered a moment ago is found, not sent twice
        new = {p.key: p for p in chunk if p.key not in self.open}
        records = client.cache.fetch(new) if new else {}
        records |= {k: self.ahead[k] for k in new if k in self.ahead}
        replay.ledger_note("llm", client.endpoint, new)
        todo = [
            k
            for k in new
            if k not in records
            or (self.retry_failures and k not in self.sent and _stale(records[k], self.failed_before))
        ]
        if todo and replay.replaying():
            missing = len(todo) + _replay_misses(client, self.requests)
            raise replay.replay_miss("llm", client.spec.id, missing, _prompt_text(new[todo[0]].request))
        for key in new.keys() - set(todo):
            self.open[key] = records[key]
        for key in todo:
            self.sent.add(key)
            if not client._reached:  # the probe: alone, so a dead endpoint is told at once
                record = self.open[key] = await client._call(new[key], probe=True)
                client._reached = True
                self.bar.step(failed=record.status != "ok")
                continue
            task = asyncio.ensure_future(client._call(new[key]))
            task.add_done_callback(self._done)
            self.open[key] = task
        counted = set(todo)  # a call sent is counted when it ends; every other request here, now
        for p in chunk:
            source = self.open[p.key]
            self.pending.append((p, source))
            if p.key in counted:
                counted.discard(p.key)
            else:
                self.bar.cached(failed=isinstance(source, CallRecord) and source.status != "ok")

    def _done(self, task: asyncio.Future[CallRecord]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, BudgetExceeded):  # raised in request order (:meth:`next`), once the rest are in
            return
        if error is not None:
            if not self.broken.done():
                self.broken.set_exception(error)
            return
        self.bar.step(failed=task.result().status != "ok")

    async def close(self) -> None:
        """Cancel the calls still out (their records, if any came, are already stored); close the bar."""
        futures = [s for _, s in self.pending if isinstance(s, asyncio.Future)]
        for future in futures:
            future.cancel()
        await asyncio.gather(*futures, return_exceptions=True)  # also retrieves any error: never "unhandled"
        if self.broken.done() and not self.broken.cancelled():
            self.broken.exception()
        self.bar.close()
        self.client._flush()


def _replay_misses(client: Any, rest: Iterator[Any]) -> int:
    """How many further requests a replay's bundle lacks (read to the end to name the count)."""
    missing = 0
    while chunk := {p.key: p for p in (client.prepare(r) for r in islice(rest, CHUNK))}:
        missing += len(chunk.keys() - client.cache.fetch(chunk).keys())
    return missing


def _prompt_text(request: Any) -> str:
    """The text of a request's first user message (what a replay's miss error quotes)."""
    users = [m for m in request.messages if m.get("role") == "user"] or list(request.messages)
    return str(users[0].get("content") or "") if users else ""
