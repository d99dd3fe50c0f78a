"""Tests for declinecraft.llm.transport: backoff policy, the background event loop, and what goes over the wire."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable

import pytest

from declinecraft.llm import transport
from tests.support import keys


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
        sender = transport.Sender(
            "m",
            ["http://127.0.0.1:1/v1"],
            api_key=keys.planted_key("hidden"),
            retry=transport.RetryPolicy(),
            concurrency=2,
        )
        assert keys.planted_key("hidden") not in repr(sender) + str(sender)

    def test_no_url(self) -> None:
        """A lazy URL source that yields nothing is an error naming the model."""
        sender = transport.Sender("m", lambda: (), api_key=None, retry=transport.RetryPolicy(), concurrency=1)

        with pytest.raises(transport.LLMError, match="'m': no base URL"):
            asyncio.run(sender.send({"messages": []}))


COMPLETION = json.dumps({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}).encode()


Handler = Callable[[asyncio.StreamWriter, int], Awaitable[None]]


"""Answers the n-th request (0-based, counted over all connections) on ``writer``."""


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One HTTP/1.1 request with a Content-Length body, head and body together."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length"))
    return head + await reader.readexactly(length)


def reply(body: bytes, status: bytes = b"200 OK") -> bytes:
    """A complete HTTP/1.1 JSON response."""
    head = b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (status, len(body))
    return head + body


def exchange(
    handler: Handler, *bodies: dict[str, object] | str, attempts: int = 1
) -> tuple[list[transport.Answer], list[bytes]]:
    """Send ``bodies`` one after another through one Sender to a raw-socket server running ``handler``.

    Returns the answers and every request the server read, in order.
    """
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                seen.append(await read_request(reader))
                await handler(writer, len(seen) - 1)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> list[transport.Answer]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        policy = transport.RetryPolicy(max_attempts=attempts, base_delay_s=0.0, timeout_s=5.0)
        sender = transport.Sender("m", [url], api_key=None, retry=policy, concurrency=1)
        try:
            return [await sender.send(body) for body in bodies]
        finally:
            for pool in sender._pools.values():
                await pool.aclose()
            server.close()

    return asyncio.run(main()), seen


async def answer_ok(writer: asyncio.StreamWriter, n: int) -> None:
    writer.write(reply(COMPLETION))
    await writer.drain()


class TestWire:
    def test_informational_response_skipped(self) -> None:
        """A 100 Continue before the answer is not taken as the answer."""

        async def handler(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
            await answer_ok(writer, n)

        (answer,), seen = exchange(handler, {"messages": []})
        assert answer.ok and answer.text == "hi" and answer.finish_reason == "stop" and len(seen) == 1

    def test_post_not_resent_when_dropped(self) -> None:
        """A kept-alive connection dropped after the server read the request: one failed attempt,
        never a silent second POST (the server may have acted on the first)."""

        async def handler(writer: asyncio.StreamWriter, n: int) -> None:
            if n == 0:
                await answer_ok(writer, n)
            else:
                raise ConnectionError("hang up without answering")

        (first, second), seen = exchange(handler, {"messages": [1]}, {"messages": [2]})
        assert first.ok and not second.ok and second.attempts == 1
        assert (second.error or "").startswith("connection error") and len(seen) == 2

    def test_retries_are_counted(self) -> None:
        """A 503 then a 200: two requests on the wire, reported as two attempts."""

        async def handler(writer: asyncio.StreamWriter, n: int) -> None:
            if n == 0:
                writer.write(reply(b'{"error": {"message": "busy"}}', b"503 Service Unavailable"))
                await writer.drain()
            else:
                await answer_ok(writer, n)

        (answer,), seen = exchange(handler, {"messages": []}, attempts=3)
        assert answer.ok and answer.attempts == 2 and len(seen) == 2

    @pytest.mark.parametrize("body", ['{"messages":[{"content":"ü","role":"user"}]}', "{}", ' { "a" : 1 } '])
    def test_json_text_body(self, body: str) -> None:
        """A body given as JSON text reaches the server as that object with the model name added."""
        (answer,), seen = exchange(answer_ok, body)
        sent = json.loads(seen[0].split(b"\r\n\r\n", 1)[1])
        assert answer.ok and sent == {"model": "m", **json.loads(body)}

    @pytest.mark.parametrize(
        ("body", "error"),
        [
            (b'{"error": {"message": "bad field"}}', "HTTP 400: bad field"),
            (b'{"detail": "no"}', "HTTP 400: {'detail': 'no'}"),
            (b"plain words", "HTTP 400: plain words"),
            (b"", "HTTP 400: Error code: 400"),
        ],
    )
    def test_status_error_message(self, body: bytes, error: str) -> None:
        """A 4xx fails at once, its error read as the SDK reads it: error.message, else the body."""

        async def handler(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(reply(body, b"400 Bad Request"))
            await writer.drain()

        (answer,), seen = exchange(handler, {"messages": []}, attempts=3)
        assert (answer.ok, answer.error, answer.attempts, len(seen)) == (False, error, 1, 1)

    def test_large_body_intact(self) -> None:
        """A 2 MB request reaches the server whole: the body as given, with the model name added."""
        text = "ü" * 1_000_000
        (answer,), seen = exchange(answer_ok, {"messages": [{"role": "user", "content": text}]})
        body = json.loads(seen[0].split(b"\r\n\r\n", 1)[1])
        assert answer.ok and body == {"model": "m", "messages": [{"role": "user", "content": text}]}
