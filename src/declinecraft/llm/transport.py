"""Sending chat requests: bounded concurrency per base URL, load balancing, retries with backoff.

The only network code of the LLM layer. :class:`Sender` posts a request body to
``<base_url>/chat/completions`` through the openai SDK's own HTTP client
(``openai.DefaultAsyncHttpxClient``, with the SDK's defaults) and returns an :class:`Answer`,
successful or a recorded failure; the attempts are ours, with errors read as the SDK reads them
(``HTTP <status>: <error.message>``).

Retried, with exponential backoff and jitter (and ``Retry-After`` when sent): 429, 408, 409, 5xx,
timeouts, connection errors and malformed bodies (gateways truncate); other 4xx fail at once.

Why the HTTP client rather than ``AsyncOpenAI.post`` or ``chat.completions.create``: our keyed
bodies are JSON text already, and the SDK's request building (options models, header merging,
deep copies) cost about 0.4 ms of CPU per call, ``create``'s typed parameters another 1 ms. Why
several HTTP clients per base URL (:data:`CONNECTIONS_PER_CLIENT`): the HTTP layer scans every
connection of its pool for each request. Measured against a fake server answering in 0-10 ms
with 256 in flight (``benchmarks/bench_llm_client.py --requests 3000 --concurrency 256
--latency-min 0 --latency-max 0.01``, on two shared cores): 3.6 ms of client CPU per call and
82-91 calls/s through ``AsyncOpenAI.post`` with one client, 0.72-0.75 ms and 733-899 calls/s now.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import logging
import random
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx2
import openai

from declinecraft.llm.throttle import Throttle

T = TypeVar("T")
RETRY_STATUS = frozenset({408, 409, 429})

# httpx2 logs every request at INFO: 100,000 calls would flood a notebook or log that shows INFO.
# Quieted only when nobody configured that logger.
if logging.getLogger("httpx2").level == logging.NOTSET:
    logging.getLogger("httpx2").setLevel(logging.WARNING)


class LLMError(RuntimeError):
    """An LLM client cannot be configured or used as asked (the message names the model)."""


class ServerGone(LLMError):
    """The local server behind the base URLs stopped running while a call was being sent.

    Raised instead of retrying against a dead port, so the client can restart the server and
    send the call again; the call is not recorded as failed (a rerun sends it).
    """


class Unreachable(LLMError):
    """Nothing answers at a model's base URL: the first call of a client could not connect at all.

    Raised by a probe (:meth:`Sender.send` with ``probe=True``) at its first attempt, so a dead
    endpoint is reported at once instead of recording every call of a batch as failed.
    """


@dataclass(frozen=True)
class RetryPolicy:
    """How long one call may take and how often it is tried (a model entry's ``max_retries``,
    ``max_retry_after_s`` and ``timeout_s``: :func:`declinecraft.core.model_terms.limits`)."""

    max_attempts: int = 6
    """Attempts in total, the first included; then the call is recorded as failed."""
    base_delay_s: float = 1.0
    """Backoff before the second attempt; doubles each attempt (with ±50% jitter)."""
    max_delay_s: float = 60.0
    """Longest wait between attempts (also caps a server's Retry-After)."""
    timeout_s: float = 900.0
    """Seconds one attempt may take (16k-token outputs on a slow server take minutes)."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.base_delay_s < 0 or self.max_delay_s < 0 or self.timeout_s <= 0:
            raise ValueError(f"invalid retry policy {self}: needs max_attempts >= 1, delays >= 0, timeout > 0")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        backoff = self.base_delay_s * 2 ** (attempt - 1) * random.uniform(0.5, 1.5)
        return min(self.max_delay_s, max(backoff, retry_after or 0.0))


@dataclass(frozen=True, slots=True)
class Answer:
    """What the server finally said (or why it could not be asked)."""

    ok: bool
    text: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    error: str | None = None
    attempts: int = 1


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


#: Most connections one HTTP client holds. The HTTP layer looks at every connection of its pool
#: for each request it sends (``httpcore``'s ``_assign_requests_to_connections``, with a socket
#: check per idle connection): at 256 connections in one pool that was about 2 ms of CPU per
#: call, so a base URL's connections are spread over several clients of at most this many.
CONNECTIONS_PER_CLIENT = 8


class _Pool:
    """Per-event-loop HTTP state: semaphore, in-flight counts, the SDK's HTTP clients per base URL
    (enough of them that none holds more than :data:`CONNECTIONS_PER_CLIENT` connections)."""

    def __init__(self, urls: Sequence[str], api_key: str, per_url: int, timeout_s: float, throttle: Throttle) -> None:
        self.semaphore = asyncio.Semaphore(per_url * len(urls))
        self.throttle = throttle
        shards = -(-per_url // CONNECTIONS_PER_CLIENT)
        per_client = -(-per_url // shards)
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"declinecraft (openai-python/{openai.__version__})",
        }
        self.clients = [
            (
                f"{url}/chat/completions",
                openai.DefaultAsyncHttpxClient(
                    timeout=timeout_s,
                    limits=httpx2.Limits(max_connections=per_client, max_keepalive_connections=per_client),
                ),
            )
            for _ in range(shards)
            for url in urls  # the URLs interleaved: the least busy of equals is the next URL
        ]
        self.inflight = [0] * len(self.clients)
        self.turn = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[tuple[str, httpx2.AsyncClient]]:
        """Wait for a free slot, then lend the least busy client (of the least busy base URL)
        with its completions URL."""
        async with self.semaphore:
            n, first = len(self.inflight), self.turn
            self.turn = (first + 1) % n  # of equally busy clients, each in turn
            url = min(range(first, first + n), key=lambda i: self.inflight[i % n]) % n
            self.inflight[url] += 1
            try:
                yield self.clients[url]
            finally:
                self.inflight[url] -= 1

    async def aclose(self) -> None:
        for _, client in self.clients:
            await client.aclose()


class Sender:
    """Posts chat bodies for one served model to one or more replica base URLs."""

    def __init__(
        self,
        model: str,
        base_urls: Sequence[str] | Callable[[], Sequence[str]],
        *,
        api_key: str | None,
        retry: RetryPolicy,
        concurrency: int,
        alive: Callable[[], bool] | None = None,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
    ) -> None:
        self.model = model
        self._limits = (requests_per_minute, tokens_per_minute)  # one Throttle per event loop
        self._alive = alive  # False when the local server process has exited
        self.retry = retry
        self.concurrency = concurrency
        self._urls = base_urls
        self._api_key = api_key  # kept private; never logged, stored or shown
        self._lock = threading.Lock()
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()
        self._last: tuple[asyncio.AbstractEventLoop, _Pool] | None = None
        self._retired: list[tuple[asyncio.AbstractEventLoop, _Pool]] = []

    def __repr__(self) -> str:
        return f"Sender(model={self.model!r}, concurrency={self.concurrency})"

    def _resolve(self) -> tuple[str, ...]:
        with self._lock:
            if callable(self._urls):  # e.g. start a local server at the first cache miss
                self._urls = tuple(self._urls())
            if not self._urls:
                raise LLMError(f"model {self.model!r}: no base URL to send to")
            return tuple(u.rstrip("/") for u in self._urls)

    def urls(self) -> tuple[str, ...]:
        """The base URLs calls go to (resolved now if they were given as a function)."""
        return self._resolve()

    async def _pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0] is loop:  # fast path: WeakKeyDictionary lookups are slow
            return last[1]
        if loop not in self._pools:
            urls = self._resolve() if not callable(self._urls) else await asyncio.to_thread(self._resolve)
            if loop not in self._pools:
                self._pools[loop] = _Pool(
                    urls, self._api_key or "EMPTY", self.concurrency, self.retry.timeout_s, Throttle(*self._limits)
                )
        self._last = (loop, self._pools[loop])
        return self._last[1]

    def set_urls(self, base_urls: Sequence[str]) -> None:
        """Send to new base URLs from the next attempt on (a restarted local server's port)."""
        with self._lock:  # calls in flight keep the old pool until their attempt ends; close() ends it
            self._urls = tuple(base_urls)
            self._retired += list(self._pools.items())
            self._pools, self._last = weakref.WeakKeyDictionary(), None

    def _check_alive(self, error: str) -> None:
        if self._alive is not None and not self._alive():
            raise ServerGone(f"model {self.model!r}: the local server stopped running ({error})")

    def slots(self) -> int:
        """Requests in flight at most: the concurrency per base URL times the URLs (one URL's
        worth while the URLs are not known yet: a local server not yet started)."""
        urls = self._urls
        return self.concurrency * (1 if callable(urls) else max(1, len(urls)))

    async def send(
        self,
        body: Mapping[str, Any] | str,
        *,
        probe: bool = False,
        admit: Callable[[], None] | None = None,
    ) -> Answer:
        """Post one body (``model`` added) with retries; never raises for a failed call.

        Every attempt waits for the entry's rate limits (requests and tokens per minute; a request
        counts its prompt at 4 bytes a token plus its whole output budget, as providers count it).

        Args:
            body: the body without ``model``, as a mapping or as the text of a JSON object.
            probe: this is the first call to the endpoint: a connection that cannot be made at all
                (refused, no route, unknown host) raises :class:`Unreachable` at once.
            admit: called once, when the call has its slot and just before its first attempt is
                sent (the run's budget: it raises to stop the call unsent).

        Raises:
            ServerGone: a connection failed and the local server process has exited.
            Unreachable: a probe could not connect.
        """
        # Serialized once here: the SDK then neither deep-copies nor re-encodes the body per attempt.
        if isinstance(body, str):  # already JSON (the client's keyed text): only ``model`` is written here
            rest = body.strip()[1:].lstrip()
            payload = f'{{"model":{json.dumps(self.model, ensure_ascii=False)}{"," if rest[:1] != "}" else ""}{rest}'
            payload_bytes = payload.encode("utf-8")
        else:
            payload_bytes = json.dumps({"model": self.model, **body}, ensure_ascii=False).encode("utf-8")
        error, latency = "", None
        for attempt in range(1, self.retry.max_attempts + 1):
            retry_after = None
            pool = await self._pool()  # per attempt: a restarted server has a new URL
            async with pool.slot() as (url, client):
                if admit is not None and attempt == 1:
                    admit()
                if pool.throttle.active:
                    await pool.throttle.admit(_tokens(body, payload_bytes))
                start = time.perf_counter()
                try:
                    response = await client.post(url, content=payload_bytes, headers=pool.headers)
                    latency = time.perf_counter() - start
                    if response.status_code >= 400:
                        raise _StatusError(response)
                    return _answer(response.content, latency, attempt)
                except _Retryable as exc:
                    error, retry_after = str(exc), exc.retry_after
                except _StatusError as exc:
                    status = exc.response.status_code
                    error = f"HTTP {status}: {_message(exc.response)}"
                    if status not in RETRY_STATUS and status < 500:
                        return self._failed(error, time.perf_counter() - start, attempt)
                    retry_after = _retry_after(exc.response)
                except httpx2.TimeoutException:
                    error = f"timeout after {self.retry.timeout_s:g} s"
                    self._check_alive(error)
                except httpx2.TransportError as exc:
                    error = f"connection error: {exc}"
                    self._check_alive(error)
                    if probe and isinstance(exc, httpx2.ConnectError):
                        raise Unreachable(
                            f"model {self.model!r}: nothing answers at {url.removesuffix('/chat/completions')} "
                            f"({error}); no call was sent or recorded"
                        ) from None
                latency = time.perf_counter() - start
            if attempt < self.retry.max_attempts:
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
        return self._failed(error, latency, self.retry.max_attempts)

    def _failed(self, error: str, latency: float | None, attempts: int) -> Answer:
        if self._api_key:
            error = error.replace(self._api_key, "***")
        return Answer(ok=False, error=error, latency_s=latency, attempts=attempts)

    def close(self) -> None:
        """Close the connections of pools whose loop still runs in another thread (best effort)."""
        for loop, pool in [*self._pools.items(), *self._retired]:
            if loop.is_running() and not _in_loop(loop):
                asyncio.run_coroutine_threadsafe(pool.aclose(), loop).result(timeout=30)
        self._pools.clear()
        self._retired.clear()
        self._last = None


def _answer(content: bytes, latency: float, attempt: int) -> Answer:
    """Read a completion body; a body without a usable first choice is malformed (retryable)."""
    try:
        data = json.loads(content)
        if "error" in data and not data.get("choices"):
            raise _Retryable(f"error in body: {str(data['error'])[:500]}")
        choice = data["choices"][0]
        message = choice.get("message") or {}
        usage = data.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise _Retryable(f"malformed response body ({type(exc).__name__}): {content[:200]!r}") from None
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return Answer(
        ok=True,
        text=message.get("content"),
        reasoning=reasoning if isinstance(reasoning, str) else None,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_s=latency,
        attempts=attempt,
    )


def answer_of(content: bytes, latency: float | None = None) -> Answer:
    """Read a chat completion body that came some other way (a batch's result line); a body
    without a usable first choice is a failed answer, with the reason."""
    try:
        answer = _answer(content, 0.0, 1)
    except _Retryable as exc:
        return Answer(ok=False, error=str(exc), latency_s=latency)
    return dataclasses.replace(answer, latency_s=latency)


def _tokens(body: Mapping[str, Any] | str, payload: bytes) -> int:
    """What a request counts against a tokens-per-minute limit: its prompt at 4 bytes a token plus
    its whole output budget, as providers count it."""
    fields = json.loads(body) if isinstance(body, str) else body
    return len(payload) // 4 + int(fields.get("max_tokens") or fields.get("max_completion_tokens") or 0)


class _StatusError(Exception):
    """An HTTP error status (4xx, 5xx) from the server."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _message(response: httpx2.Response) -> str:
    """The error message of an error response: its JSON ``error.message`` (as the SDK reads
    it), else the body's text, else the status."""
    text = response.text
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    if isinstance(body, dict):
        body = body.get("error", body)
    if isinstance(body, dict):
        body = body.get("message", body)
    return str(body or f"Error code: {response.status_code}")[:500]


def _retry_after(response: httpx2.Response) -> float | None:
    """Seconds a server asked us to wait: ``retry-after-ms``, ``Retry-After`` in seconds or as an
    HTTP date (RFC 9110 §10.2.3); None when absent or unreadable."""
    headers = response.headers
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after", "").strip()
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError, IndexError):
        return None


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


# --- a background event loop for synchronous callers (notebooks, stage code) ------------------

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """Return the process's LLM event loop, running in a daemon thread (started on first use)."""
    global _loop
    with _loop_lock:
        if _loop is None or not _loop.is_running():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="declinecraft-llm", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the background loop and wait for it (works under a running Jupyter loop).

    Ctrl-C cancels it; calls already answered are in the cache.
    """
    loop = background_loop()
    if _in_loop(loop):
        coroutine.close()
        raise LLMError("run_batch called from inside the LLM event loop: await client.arun(...) instead")
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise
