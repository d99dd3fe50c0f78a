"""One client for every LLM call of the project: OpenAI-compatible, cached, bounded, retried.

Generator, verifier, models under test, judges, oracle, rewriter and reflection all call models
through :class:`Client`, on the openai SDK's HTTP client against any base URL: the project's own
llama.cpp server, ``vllm serve``, or a hosted API whose key is read from the environment variable
named in ``models.yaml`` (``api_key_env``) and never written anywhere.

Get a client with :func:`client_for` (or :func:`connect`, which also starts a local server, lazily:
a fully cached rerun never starts one). Run a batch with :func:`run_batch` (synchronous, also
inside Jupyter) or ``await client.arun(...)``. Every call goes through :mod:`declinecraft.llm.cache`
first; a cached call is never re-sent, a failure is recorded with its error and counted. With a
run's :class:`~declinecraft.llm.spend.Budget`, no call is sent that could pass it, and each sent
call's cost is stored with it. An entry with ``batch: true`` sends its uncached calls through its
provider's batch API (:mod:`declinecraft.llm.batch`); its rate limits and retry policy are its own
(:mod:`declinecraft.core.model_terms`).

Sampling is explicit in :class:`~declinecraft.llm.request.Request` (temperature 0 unless a param
says otherwise; max_tokens always given). Thinking is resolved per model (:func:`thinking_body`)
and the trace is stored apart from the answer (:mod:`declinecraft.llm.responses`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from declinecraft.core import model_terms
from declinecraft.core.registry import ModelSpec
from declinecraft.llm import batch, batch_files, cache, spend
from declinecraft.llm.body_fields import thinking_body
from declinecraft.llm.cache import Cache, CallRecord, canonical_json
from declinecraft.llm.progress import Progress
from declinecraft.llm.request import REASONING_PROMPT, Request, endpoint_identity, request_body
from declinecraft.llm.responses import (
    FormatError,
    Result,
    parse_json,
    results_frame,
    split_thinking,
    summary,
)
from declinecraft.llm.spend import Budget, BudgetExceeded
from declinecraft.llm.supervisor import MAX_SERVER_RESTARTS, LocalServer
from declinecraft.llm.transport import LLMError, RetryPolicy, Sender, ServerGone, Unreachable, run_sync
from declinecraft.llm.window import Window, window_size
from declinecraft.runtime import replay

__all__ = [
    "REASONING_PROMPT",
    "Budget",
    "BudgetExceeded",
    "Client",
    "FormatError",
    "LLMError",
    "Request",
    "Result",
    "RetryPolicy",
    "Unreachable",
    "client_for",
    "connect",
    "endpoint_identity",
    "parse_json",
    "request_body",
    "results_frame",
    "run_batch",
    "split_thinking",
    "summary",
    "thinking_body",
]

log = logging.getLogger(__name__)

# --- the client ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Prepared:
    request: Request
    key: str
    mode: str
    body_json: str
    """The request body (:func:`request_body`) as canonical JSON: keyed, stored and sent as this
    one text (the body itself is not kept: a window of requests holds half the memory)."""

    @property
    def body(self) -> dict[str, Any]:
        """The request body, read back from its JSON (for the rare paths that need the mapping:
        a budget's hold, a batch line)."""
        body: dict[str, Any] = json.loads(self.body_json)
        return body


class Client:
    """Calls one registry model through the cache. Build it with :func:`client_for`."""

    def __init__(
        self,
        spec: ModelSpec,
        cache: Cache,
        base_urls: Sequence[str] | Callable[[], Sequence[str]],
        *,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int | None = None,
        server: LocalServer | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.spec = spec
        self.server = server
        self.cache = cache
        self.budget = budget
        self.prices = model_terms.prices(spec)
        limits = model_terms.limits(spec)
        self.identity = endpoint_identity(
            spec, base_urls if not callable(base_urls) else (), server.cache_dir if server else None
        )
        self._identity_json = canonical_json(self.identity)
        self.endpoint = f"{spec.backend}:{spec.served_name}"
        self._unstored: list[CallRecord] = []
        self._unspent: list[spend.Spent] = []
        self._committed: asyncio.Future[None] | None = None
        self._sender = Sender(
            spec.served_name,
            base_urls,
            api_key=api_key,
            retry=retry
            or RetryPolicy(
                max_attempts=limits.max_retries + 1, max_delay_s=limits.max_retry_after_s, timeout_s=limits.timeout_s
            ),
            concurrency=concurrency or spec.concurrency(),
            alive=server.alive if server else None,
            requests_per_minute=limits.requests_per_minute,
            tokens_per_minute=limits.tokens_per_minute,
        )
        self._reached = False  # set once a call has been through: later batches need no probe
        self._api_key = api_key
        self.batch_terms = model_terms.batch_terms(spec)
        """Whether uncached calls go through the provider's batch API (``batch: true`` on a hosted
        entry; a local entry's are written for ``vllm run-batch`` by ``make batch-export`` instead)."""
        self.batching = self.batch_terms.enabled and not spec.is_local

    def __repr__(self) -> str:  # never shows the key
        return f"Client(model={self.spec.id!r}, endpoint={self.endpoint!r}, cache={self.cache.path})"

    def prepare(self, request: Request) -> _Prepared:
        """Resolve thinking and build the keyed body (raises LLMError on an impossible setting)."""
        mode, body = request_body(self.spec, request)
        body_json = cache.canonical_json(body)
        key = cache.body_key(self._identity_json, body_json, request.prompt_version)
        return _Prepared(request, key, mode, body_json)

    def key(self, request: Request) -> str:
        """Return the cache key of a request for this model."""
        return self.prepare(request).key

    async def arun(
        self,
        requests: Iterable[Request],
        *,
        retry_failures: bool = False,
        failed_before: str | None = None,
        progress: bool = True,
        desc: str | None = None,
        window: int | None = None,
    ) -> list[Result]:
        """Answer every request (cache first), in request order; see :func:`run_batch` and
        :meth:`astream` (which this collects).

        Raises:
            BudgetExceeded: a call would pass the run's budget; calls already sent are answered and
                stored first, nothing more is sent.
        """
        return [
            result
            async for result in self.astream(
                requests,
                retry_failures=retry_failures,
                failed_before=failed_before,
                progress=progress,
                desc=desc,
                window=window,
            )
        ]

    async def astream(
        self,
        requests: Iterable[Request],
        *,
        retry_failures: bool = False,
        failed_before: str | None = None,
        progress: bool = True,
        desc: str | None = None,
        window: int | None = None,
    ) -> AsyncIterator[Result]:
        """Answer requests (cache first) and yield their results in request order, as they come.

        ``requests`` is read lazily: a request is built and keyed only when it enters a window of
        at most ``window`` requests not yet yielded (default :func:`.window.window_size`: four times the
        slots, at least :data:`.window.WINDOW`), so memory stays bounded however many there are, and every
        slot stays busy while the oldest call is still out. Identical requests are sent once; a
        result is ``cached`` when no call of this stream sent its key. The first call this client
        sends goes alone, as a probe: when nothing answers at the endpoint it raises
        :class:`Unreachable` at once and records nothing. A call that raises (a local server that
        died too often) stops the stream at once, not when its turn to be yielded comes.

        Raises:
            ReplayMiss: replaying a bundle that lacks some of the calls (counted over them all).
        """
        ahead: dict[str, CallRecord] = {}
        if self.batching or batch_files.exporting() is not None:  # every uncached call at once, not a window
            requests = list(requests)
            ahead = await self._ahead(
                [self.prepare(r) for r in requests],
                retry_failures=retry_failures and not replay.replaying(),
                failed_before=failed_before or "~",
            )
        stream = Window(
            self,
            iter(requests),
            window or window_size(self._sender.slots()),
            retry_failures=retry_failures and not replay.replaying(),  # a replay keeps the run's failures
            failed_before=failed_before or "~",
            bar=Progress(
                len(requests) if isinstance(requests, Sized) else None, 0, 0, desc or self.spec.id, enabled=progress
            ),
            ahead=ahead,
        )
        try:
            while (prepared := await stream.next()) is not None:
                yield stream.result(*prepared)
        finally:
            await stream.close()
            if stream.counts["calls"]:
                _log_summary(self.spec.id, stream.counts)

    async def _ahead(
        self, prepared: Sequence[_Prepared], *, retry_failures: bool, failed_before: str
    ) -> dict[str, CallRecord]:
        """The records of calls answered before the stream starts: under ``make batch-export`` each
        uncached call written to its model's batch file (a stand-in record, never stored); with
        ``batch: true`` each sent through the provider's batch API (stored as it comes back)."""
        unique = {p.key: p for p in prepared}
        records = self.cache.fetch(unique)
        todo = [
            p
            for k, p in unique.items()
            if k not in records
            or (retry_failures and records[k].status != "ok" and records[k].created_at < failed_before)
        ]
        if not todo or replay.replaying():  # a replay's misses are named by the stream
            return {}
        if (folder := batch_files.exporting()) is not None:
            where = batch_files.export(
                folder, self.spec.id, self.spec.served_name, self.endpoint, self.spec.revision or "", todo
            )
            return {p.key: batch_files.stand_in(p.key, p.request.prompt_version, self.endpoint, where) for p in todo}
        return await self._batcher().run([batch.Pending(p.key, p.body, p.request.prompt_version) for p in todo])

    def _batcher(self) -> batch.Batcher:
        """The batch runner of this model (its provider's batch API at its first base URL)."""
        urls = self._sender.urls()
        return batch.Batcher(
            model_id=self.spec.id,
            served_name=self.spec.served_name,
            endpoint=self.endpoint,
            revision=self.spec.revision or "",
            base_url=urls[0],
            api_key=self._api_key,
            terms=self.batch_terms,
            prices=self.prices,
            cache=self.cache,
            budget=self.budget,
            identity=self.identity,
            hosted=not self.spec.is_local,
        )

    async def _call(self, prepared: _Prepared, *, probe: bool = False) -> CallRecord:
        """Send one call and commit its record before returning (a kill loses only calls in flight).
        A local server that dies under it is restarted (:class:`LocalServer`) and the call resent.
        With a budget, the call holds its most cost from just before it is sent until its record
        is stored with what it cost (:mod:`declinecraft.llm.spend`)."""
        hold: spend.Hold | None = None

        def admit() -> None:
            nonlocal hold
            if self.budget is not None and hold is None:
                hold = self.budget.reserve(
                    self.spec.id, self.prices, prepared.body, hosted=not self.spec.is_local, batch=False
                )

        try:
            while True:
                generation = self.server.generation if self.server else 0
                try:
                    answer = await self._sender.send(prepared.body_json, probe=probe, admit=admit)
                    break
                except ServerGone as exc:
                    if self.server is None:
                        raise
                    self._sender.set_urls(await asyncio.to_thread(self.server.restart, generation, str(exc)))
        except BaseException:
            if hold is not None and self.budget is not None:
                self.budget.release(hold)
            raise
        record = CallRecord(
            key=prepared.key,
            status="ok" if answer.ok else "failed",
            endpoint=self.endpoint,
            revision=self.spec.revision or "",
            prompt_version=prepared.request.prompt_version,
            request=prepared.body_json,
            text=answer.text,
            reasoning=answer.reasoning,
            finish_reason=answer.finish_reason,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            latency_s=answer.latency_s,
            error=answer.error,
            attempts=answer.attempts,
            created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )
        cost = spend.spent_row(self.budget, hold, record, model_id=self.spec.id, prices=self.prices, batch=False)
        await self._commit(record, cost)
        return record

    async def _commit(self, record: CallRecord, cost: Sequence[spend.Spent] = ()) -> None:
        """Store a record (and its spend row), in one transaction with the records of every call
        answered in the same turn of the event loop, and return once it is committed (its error, if
        any, raised here)."""
        self._unstored.append(record)
        self._unspent.extend(cost)
        if self._committed is None:
            self._committed = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(self._flush)
        await asyncio.shield(self._committed)

    def _flush(self) -> None:
        """Commit the records waiting in :meth:`_commit` now."""
        records, costs, committed = self._unstored, self._unspent, self._committed
        self._unstored, self._unspent, self._committed = [], [], None
        try:
            self.cache.store(records, costs)
        except BaseException as exc:
            if committed is None or committed.done():
                raise
            committed.set_exception(exc)
            return
        if committed is not None and not committed.done():
            committed.set_result(None)

    async def acall(self, request: Request, **kwargs: Any) -> Result:
        """Answer one request (cache first)."""
        return (await self.arun([request], progress=False, **kwargs))[0]

    def run(self, requests: Iterable[Request], **kwargs: Any) -> list[Result]:
        """Synchronous :meth:`arun` (see :func:`run_batch`)."""
        return run_batch(self, requests, **kwargs)

    def close(self) -> None:
        """Close this client's HTTP connections (in every event loop that opened some)."""
        self._sender.close()


# --- entry points ----------------------------------------------------------------------------


def _api_key(spec: ModelSpec, environ: Mapping[str, str] | None) -> str | None:
    if not spec.api_key_env or replay.replaying():  # a replay sends nothing, so needs no key
        return None
    key = (os.environ if environ is None else environ).get(spec.api_key_env)
    if not key:
        raise LLMError(f"model {spec.id!r}: environment variable {spec.api_key_env} (its API key) is not set")
    return key


def client_for(
    spec: ModelSpec,
    cache: Cache,
    base_url: str | Sequence[str] | Callable[[], Sequence[str]] | None = None,
    *,
    retry: RetryPolicy | None = None,
    concurrency: int | None = None,
    environ: Mapping[str, str] | None = None,
    server: LocalServer | None = None,
    budget: Budget | None = None,
) -> Client:
    """THE way to get a client for a registry model.

    Args:
        spec: the registry entry (``registry.get_model(cfg.resolve(cfg.models_file), model_id)``).
        cache: the call store (``cache.open_cache(cfg.cache_dir)``).
        base_url: for local backends, ``serve.start(spec, cfg.cache_dir).base_url`` (or several
            replica URLs, or a function returning them, called at the first uncached call);
            hosted entries default to ``spec.base_urls`` or ``spec.base_url``.
        concurrency: requests in flight per base URL (default ``spec.concurrency()``).
        environ: where the API key variable is read (default ``os.environ``).
        server: the supervised local server behind ``base_url`` (restarted when it dies).
        budget: the run's budget and spend (:class:`~declinecraft.llm.spend.Budget`); None: no cap,
            no spend recorded.

    Raises:
        LLMError: no base URL for a local model, or the key variable is unset.
    """
    if base_url is None:
        urls: Sequence[str] | Callable[[], Sequence[str]] = spec.base_urls or (
            (spec.base_url,) if spec.base_url else ()
        )
    elif isinstance(base_url, str):
        urls = (base_url,)
    else:
        urls = base_url if callable(base_url) else tuple(base_url)
    if not callable(urls) and not urls:
        raise LLMError(
            f"model {spec.id!r} ({spec.backend}) has no base URL: pass base_url=serve.start(spec, cfg.cache_dir)"
            ".base_url, or use client.connect(spec, cache, cfg.cache_dir)"
        )
    return Client(
        spec,
        cache,
        urls,
        api_key=_api_key(spec, environ),
        retry=retry,
        concurrency=concurrency,
        server=server,
        budget=budget,
    )


@contextmanager
def connect(
    spec: ModelSpec,
    cache: Cache,
    cache_dir: Path,
    *,
    max_restarts: int = MAX_SERVER_RESTARTS,
    gpus: Sequence[int] | None = None,
    threads: int | None = None,
    **options: Any,
) -> Iterator[Client]:
    """A client whose local server (llama.cpp/vLLM) starts at the first cache miss, stopped on exit.

    A local server that dies mid-batch is restarted up to ``max_restarts`` times (see
    :class:`LocalServer`); ``gpus`` are the GPUs lent to it (None: all), ``threads`` its
    llama.cpp threads (None: the default). Hosted models connect directly. ``options`` go to
    :func:`client_for`.
    """
    if not spec.is_local or spec.base_url or spec.base_urls:
        client = client_for(spec, cache, **options)
        try:
            yield client
        finally:
            client.close()
        return
    server = LocalServer(spec, cache_dir, max_restarts=max_restarts, gpus=gpus, threads=threads)
    client = client_for(spec, cache, server.urls, server=server, **options)
    try:
        yield client
    finally:
        client.close()
        server.close()


def run_batch(client: Client, requests: Iterable[Request], **kwargs: Any) -> list[Result]:
    """Answer ``requests`` synchronously, results in request order (one per request).

    ``requests`` may be a generator: it is read on the LLM event loop's thread, a window at a
    time (:meth:`Client.astream`), so no more requests are built at once than that window holds.

    Runs on a background event-loop thread, so it also works in Jupyter, where a loop is already
    running. Identical requests are sent once. Keyword options: ``retry_failures`` (re-send calls
    recorded as failed; default False: they come back as failures), ``failed_before`` (with it,
    re-send only failures recorded before this UTC ISO time: those of earlier runs), ``progress``
    (tqdm bar with rate, ETA, cache hits and failures), ``desc``.
    """
    return run_sync(client.arun(requests, **kwargs))


def _log_summary(model_id: str, counts: Mapping[str, int]) -> None:
    level = logging.WARNING if counts["failed"] or counts["lost_to_format"] else logging.INFO
    log.log(level, "%s: %s", model_id, ", ".join(f"{k} {v}" for k, v in counts.items()))
