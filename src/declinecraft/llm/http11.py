"""A lean HTTP/1.1 keep-alive transport for the project's own loopback servers (llama.cpp, vLLM).

``openai.AsyncOpenAI`` sits on httpx2, whose general-purpose stack (httpcore2, h11, anyio) costs
~0.6 ms of CPU per request; at 64 requests in flight against a fast local server that alone caps
one event loop below 1,000 requests/s. This transport plugs in under httpx2 (so the SDK's auth,
error mapping and timeouts are unchanged) and speaks plain HTTP/1.1 over asyncio streams: one
write per request, ``Content-Length`` or chunked bodies, idle connections reused.

It is used only for ``http://`` URLs on the loopback interface; hosted APIs (HTTPS, proxies) keep
httpx2's own transport. Failures are raised as httpx2 exceptions, which the SDK maps to
``APIConnectionError`` / ``APITimeoutError`` as usual.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx2

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def is_loopback_http(url: str) -> bool:
    """True for ``http://`` URLs on this machine (where :class:`LoopbackTransport` applies)."""
    parts = urlsplit(url)
    return parts.scheme == "http" and (parts.hostname or "") in LOOPBACK


class LoopbackTransport(httpx2.AsyncBaseTransport):
    """httpx2 transport for plain-HTTP loopback servers; keeps up to ``max_idle`` connections."""

    def __init__(self, *, max_idle: int = 256) -> None:
        self.max_idle = max_idle
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx2.UnsupportedProtocol(f"LoopbackTransport speaks plain http only, not {url.scheme}")
        timeouts = request.extensions.get("timeout", {})
        address = (url.host, url.port or 80)
        payload = _encode(request, await request.aread())
        for reused in (True, False):
            connection = self._take(address) if reused else None
            if reused and connection is None:
                continue
            if connection is None:
                connection = await self._connect(address, timeouts.get("connect"), request)
            try:
                async with asyncio.timeout(timeouts.get("read")):
                    connection[1].write(payload)
                    status, headers, content, keep = await _read_response(connection[0])
            except TimeoutError:
                _close(connection)
                raise httpx2.ReadTimeout("timed out waiting for the response", request=request) from None
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
                _close(connection)
                if reused and not getattr(exc, "partial", b""):
                    continue  # the server closed an idle connection: try once on a fresh one
                raise httpx2.ReadError(f"{type(exc).__name__}: {exc}", request=request) from exc
            if keep:
                self._give(address, connection)
            else:
                _close(connection)
            return httpx2.Response(status, headers=headers, content=content, request=request)
        raise httpx2.ReadError("no connection could be used", request=request)  # unreachable

    def _take(self, address: tuple[str, int]) -> _Connection | None:
        pool = self._idle.get(address)
        while pool:
            connection = pool.pop()
            if not connection[0].at_eof() and not connection[1].is_closing():
                return connection
            _close(connection)
        return None

    def _give(self, address: tuple[str, int], connection: _Connection) -> None:
        pool = self._idle.setdefault(address, [])
        if len(pool) < self.max_idle:
            pool.append(connection)
        else:
            _close(connection)

    async def _connect(self, address: tuple[str, int], timeout: float | None, request: httpx2.Request) -> _Connection:
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.open_connection(*address, limit=1 << 20)
        except TimeoutError:
            raise httpx2.ConnectTimeout(f"connecting to {address[0]}:{address[1]} timed out", request=request) from None
        except OSError as exc:
            raise httpx2.ConnectError(f"{address[0]}:{address[1]}: {exc}", request=request) from exc

    async def aclose(self) -> None:
        for pool in self._idle.values():
            for connection in pool:
                _close(connection)
        self._idle.clear()


def _encode(request: httpx2.Request, body: bytes) -> bytes:
    target = request.url.raw_path
    lines = [request.method.encode("ascii") + b" " + target + b" HTTP/1.1"]
    # No Accept-Encoding: bodies come back as sent (identity), so nothing needs decoding here.
    lines += [name + b": " + value for name, value in request.headers.raw if name.lower() != b"accept-encoding"]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    """Read one response; return (status, headers, body, connection reusable)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head[:-4].split(b"\r\n")
    version, status = status_line.split(b" ", 2)[:2]
    headers = []
    length, chunked, close = None, False, version != b"HTTP/1.1"
    for line in lines:
        name, _, value = line.partition(b":")
        name, value = name.strip(), value.strip()
        headers.append((name, value))
        lower = name.lower()
        if lower == b"content-length":
            length = int(value)
        elif lower == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif lower == b"connection":
            close = close or value.lower() == b"close"
    if int(status) in (204, 304) or int(status) < 200:
        body = b""
    elif chunked:
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append(await reader.readexactly(size + 2))
            parts[-1] = parts[-1][:-2]
        while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
            pass
        body = b"".join(parts)
        headers = [(n, v) for n, v in headers if n.lower() != b"transfer-encoding"]
    elif length is not None:
        body = await reader.readexactly(length)
    else:
        body, close = await reader.read(), True
    return int(status), headers, body, not close


def _close(connection: _Connection) -> None:
    try:
        connection[1].close()
    except (OSError, RuntimeError):
        pass
