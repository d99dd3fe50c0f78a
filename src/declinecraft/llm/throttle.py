"""Keeping one model's endpoint under its rate limits: requests per minute and tokens per minute.

A token bucket per limit (:class:`Bucket`): full at the start, refilled continuously at the limit's
rate, so a minute never holds more than the limit plus one bucket. A request waits until every bucket
can pay for it; waiters are served in arrival order. A request larger than a whole bucket waits
for a full bucket and then goes alone (a limit never makes a call impossible).
The limits come from the model's entry (:func:`declinecraft.core.model_terms.limits`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class Bucket:
    """A token bucket of ``per_minute`` units, refilled at ``per_minute / 60`` units per second."""

    def __init__(self, per_minute: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be above 0 per minute, got {per_minute!r}")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._clock = clock
        self._level = self.capacity
        self._at = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._at) * self.rate)
        self._at = now

    def wait_s(self, units: float) -> float:
        """Seconds until ``units`` can be taken (0: now); more than a full bucket waits for a full one."""
        self._refill()
        need = min(units, self.capacity)
        return 0.0 if self._level >= need else (need - self._level) / self.rate

    def take(self, units: float) -> None:
        """Take ``units`` (the level may go below zero for a request above a full bucket)."""
        self._refill()
        self._level -= units


class Throttle:
    """Requests-per-minute and tokens-per-minute buckets of one endpoint (either may be absent)."""

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.requests = Bucket(requests_per_minute, clock=clock) if requests_per_minute else None
        self.tokens = Bucket(tokens_per_minute, clock=clock) if tokens_per_minute else None
        self._sleep = sleep
        self._lock: asyncio.Lock | None = None

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return self.requests is not None or self.tokens is not None

    async def admit(self, tokens: int) -> None:
        """Wait (in arrival order) until one request of ``tokens`` tokens fits under both limits, then count it."""
        if not self.active:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            while True:
                wait = max(
                    self.requests.wait_s(1) if self.requests else 0.0,
                    self.tokens.wait_s(tokens) if self.tokens else 0.0,
                )
                if wait <= 0:
                    break
                await self._sleep(wait)
            if self.requests:
                self.requests.take(1)
            if self.tokens:
                self.tokens.take(tokens)
