"""Tests of the loopback HTTP/1.1 transport against a scripted raw-socket server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx2
import pytest

from declinecraft.llm.http11 import LoopbackTransport, is_loopback_http

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next((int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length")), 0)
    return head + await reader.readexactly(length)


async def exchange(handler: Handler, requests: int = 1, timeout: float | None = 5.0) -> list[httpx2.Response]:
    """Serve ``handler`` on a free port and send ``requests`` POSTs through one transport."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with httpx2.AsyncClient(transport=LoopbackTransport(), timeout=timeout) as client:
        try:
            return [await client.post(f"http://127.0.0.1:{port}/v1/x", json={"i": i}) for i in range(requests)]
        finally:
            server.close()


class TestLoopbackTransport:
    def test_content_length_keepalive(self) -> None:
        """Two requests reuse one connection; bodies and headers arrive intact."""
        connections = []

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections.append(writer)
            for _ in range(2):
                request = await read_request(reader)
                body = request.split(b"\r\n\r\n", 1)[1]
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Test: yes\r\n\r\n%s" % (len(body), body))

        responses = asyncio.run(exchange(handler, requests=2))
        assert [r.json() for r in responses] == [{"i": 0}, {"i": 1}]
        assert responses[0].headers["x-test"] == "yes" and len(connections) == 1

    def test_chunked(self) -> None:
        """A chunked body is reassembled."""

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            writer.write(head + b'4\r\n{"a"\r\n3;ext=1\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n')

        (response,) = asyncio.run(exchange(handler))
        assert response.json() == {"a": 1}

    def test_no_content(self) -> None:
        """A 204 has no body even without Content-Length; the connection stays usable."""

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for _ in range(2):
                await read_request(reader)
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")

        responses = asyncio.run(exchange(handler, requests=2, timeout=2.0))
        assert [(r.status_code, r.content) for r in responses] == [(204, b""), (204, b"")]

    def test_connection_close_and_stale(self) -> None:
        """A server that closes after each answer: the next request opens a fresh connection."""
        connections = []

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections.append(writer)
            await read_request(reader)
            writer.write(b"HTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\nno")
            await writer.drain()
            writer.close()  # without Connection: close, so the client first tries to reuse it

        responses = asyncio.run(exchange(handler, requests=3))
        assert [r.status_code for r in responses] == [503, 503, 503] and len(connections) == 3

    def test_read_timeout(self) -> None:
        """A silent server raises httpx2.ReadTimeout (the SDK's APITimeoutError)."""

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(2)

        with pytest.raises(httpx2.ReadTimeout):
            asyncio.run(exchange(handler, timeout=0.1))

    def test_refused(self) -> None:
        """Nothing listening raises httpx2.ConnectError."""

        async def go() -> None:
            async with httpx2.AsyncClient(transport=LoopbackTransport()) as client:
                await client.post("http://127.0.0.1:1/v1/x", json={})

        with pytest.raises(httpx2.ConnectError):
            asyncio.run(go())


class TestIsLoopbackHttp:
    @pytest.mark.parametrize(
        ("url", "expected"),
        [
            ("http://127.0.0.1:8000/v1", True),
            ("http://localhost:8000/v1", True),
            ("http://[::1]:8000/v1", True),
            ("https://127.0.0.1:8000/v1", False),
            ("http://gpu-node:8000/v1", False),
            ("https://openrouter.ai/api/v1", False),
        ],
    )
    def test_cases(self, url: str, expected: bool) -> None:
        """Only plain-http URLs on this machine use the lean transport."""
        assert is_loopback_http(url) is expected
