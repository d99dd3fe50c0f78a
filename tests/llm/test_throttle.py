"""Tests for declinecraft.llm.throttle: requests and tokens per minute, on a scripted clock."""

from __future__ import annotations

import asyncio

import pytest

from declinecraft.llm.throttle import Bucket, Throttle


class Clock:
    """A clock that moves only when the throttle sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class TestThrottle:
    def test_requests_per_minute(self) -> None:
        """At 2 requests a minute, the third request waits 30 s (the bucket refills at 1 per 30 s)."""
        clock = Clock()
        throttle = Throttle(2, None, clock=clock, sleep=clock.sleep)

        async def three() -> None:
            for _ in range(3):
                await throttle.admit(10)

        asyncio.run(three())
        assert clock.slept == [pytest.approx(30.0)]

    def test_tokens_per_minute(self) -> None:
        """At 600 tokens a minute, after 500 tokens a 400-token request waits for 300 more (30 s)."""
        clock = Clock()
        throttle = Throttle(None, 600, clock=clock, sleep=clock.sleep)

        async def two() -> None:
            await throttle.admit(500)
            await throttle.admit(400)

        asyncio.run(two())
        assert clock.slept == [pytest.approx(30.0)]

    def test_no_limits(self) -> None:
        """Without limits nothing waits."""
        assert not Throttle(None, None).active


class TestBucket:
    def test_oversized_request_waits_for_full_bucket(self) -> None:
        """A request larger than the bucket waits only for a full bucket (a limit never blocks a call)."""
        clock = Clock()
        bucket = Bucket(60, clock=clock)
        bucket.take(60)
        assert bucket.wait_s(1000) == pytest.approx(60.0)
        with pytest.raises(ValueError, match="above 0"):
            Bucket(0)
