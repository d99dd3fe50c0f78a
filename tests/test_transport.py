"""Tests of the sending layer: backoff policy and the background event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from declinecraft.llm import transport


class TestRetryPolicy:
    def test_exponential_with_jitter(self) -> None:
        """Delays double per attempt within ±50% jitter and stop at the cap."""
        policy = transport.RetryPolicy(base_delay_s=1.0, max_delay_s=10.0)
        for attempt, nominal in [(1, 1.0), (2, 2.0), (3, 4.0)]:
            delays = {policy.delay(attempt) for _ in range(50)}
            assert all(0.5 * nominal <= d <= 1.5 * nominal for d in delays) and len(delays) > 1
        assert policy.delay(10) == 10.0

    def test_retry_after(self) -> None:
        """A server's Retry-After lengthens the wait, but never past the cap."""
        policy = transport.RetryPolicy(base_delay_s=0.1, max_delay_s=5.0)
        assert policy.delay(1, retry_after=3.0) == 3.0
        assert policy.delay(1, retry_after=60.0) == 5.0


    @pytest.mark.parametrize("change", [{"max_attempts": 0}, {"base_delay_s": -1.0}, {"timeout_s": 0.0}])
    def test_invalid(self, change: dict[str, float]) -> None:
        """A policy that could never send, or wait backwards, is refused."""
        with pytest.raises(ValueError, match="invalid retry policy"):
            transport.RetryPolicy(**change)  # type: ignore[arg-type]


class TestRunSync:
    def test_result(self) -> None:
        """A coroutine's value comes back, computed on the background thread."""

        async def where() -> str:
            return threading.current_thread().name

        assert transport.run_sync(where()) == "declinecraft-llm"

    def test_error_propagates(self) -> None:
        """An exception inside the coroutine is raised to the caller."""

        async def boom() -> None:
            raise ValueError("inner")

        with pytest.raises(ValueError, match="inner"):
            transport.run_sync(boom())

    def test_nested_refused(self) -> None:
        """Calling it from the LLM loop itself is an error, not a deadlock."""

        async def nested() -> None:
            async def inner() -> None:
                return None

            transport.run_sync(inner())

        with pytest.raises(transport.LLMError, match="await client.arun"):
            transport.run_sync(nested())


class TestSender:
    def test_repr_hides_key(self) -> None:
        """Neither repr nor str of a sender shows its API key."""
        sender = transport.Sender("m", ["http://127.0.0.1:1/v1"], api_key="sk-hidden", retry=transport.RetryPolicy(),
                                  concurrency=2)  # fmt: skip
        assert "sk-hidden" not in repr(sender) + str(sender)

    def test_no_url(self) -> None:
        """A lazy URL source that yields nothing is an error naming the model."""
        sender = transport.Sender("m", lambda: (), api_key=None, retry=transport.RetryPolicy(), concurrency=1)

        with pytest.raises(transport.LLMError, match="'m': no base URL"):
            asyncio.run(sender.send({"messages": []}))
