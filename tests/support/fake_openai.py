"""A fake OpenAI-compatible chat server for tests and benchmarks (stdlib asyncio streams only).

It answers ``POST /v1/chat/completions`` after a latency (fixed, or drawn per message text from a
seeded uniform range, see :func:`request_latency`) and counts every request, per
message text too, so a test can prove that a cached call was never re-sent. A JSON directive in
the last user message scripts misbehaviour::

    [[fake {"status": 429, "times": 1}]]      429 on the first request with this text, then 200
    [[fake {"status": 429, "retry_after": 1.5, "times": 1}]]   ... with a ``Retry-After: 1.5`` header
    [[fake {"status": 500}]]                  500 forever
    [[fake {"statuses": [500, 502, 503]}]]    a burst: 500, 502, 503 on the first three requests, then 200
    [[fake {"malformed": true}]]              200 with a body that is not JSON
    [[fake {"reset": true, "times": 2}]]      headers and half the body, then the connection is cut
    [[fake {"sleep": 5}]]                     answer only after 5 more seconds (timeouts)
    [[fake {"reply": "<think>a</think>b", "finish": "length", "reasoning": "r",
            "reasoning_key": "reasoning"}]]   exact content, finish reason and reasoning field

``times`` limits any misbehaviour (status, malformed, reset, close) to the first requests with this
text. Without a directive the reply is ``echo: <text>``; a server started with ``--respond
MODULE:FUNCTION`` answers ``FUNCTION(request_body) -> content`` instead (a scripted model).
``GET /stats`` returns the counters (requests, per message text, the most in flight at once, the
last request bodies and Authorization headers, and the wall-clock span of each of the last requests);
``POST /reset`` zeroes them.

Run it as a process at the repository root (``python -m tests.support.fake_openai --latency 0.5
--latency-max 2 --seed 0``: it prints ``PORT <n>``) or use :func:`start` / :class:`FakeServer`
from Python, which does exactly that.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

#: The repository root: the server runs there, so ``tests.support`` modules import.
REPO = Path(__file__).resolve().parents[2]
DIRECTIVE = re.compile(r"\[\[fake (\{.*?\})\]\]", re.S)
REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}
#: A scripted model (``--respond``): request body -> message content.
RESPOND: Any = None
#: When set, a request whose max_tokens exceeds it is refused with vLLM's HTTP 400 and message.
MAX_MODEL_LEN: int | None = None


def request_latency(text: str, low: float, high: float | None = None, seed: int = 0) -> float:
    """Seconds the server waits before answering a message ``text``: ``low``, or drawn from
    ``[low, high]`` by a generator seeded with ``seed`` and the text, so that a benchmark can
    compute the ideal schedule of the very latencies the server will use, in any arrival order."""
    if high is None or high <= low:
        return low
    return random.Random(f"{seed}:{text}").uniform(low, high)


@dataclass
class _State:
    latency: float
    latency_max: float | None = None
    seed: int = 0
    requests: int = 0
    inflight: int = 0
    max_inflight: int = 0
    by_text: Counter[str] = field(default_factory=Counter)
    bodies: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    auth: set[str] = field(default_factory=set)
    spans: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=1000))
    """Wall-clock (start, end) of the last requests: other servers' spans overlapping these prove
    that two endpoints had requests in flight at the same time."""


def _response(status: int, body: bytes, content_type: bytes = b"application/json", extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n{extra}"
    ).encode()
    return head + b"Content-Type: " + content_type + b"\r\n\r\n" + body


def _completion(request: dict[str, Any], text: str, script: dict[str, Any]) -> bytes:
    default = RESPOND(request) if RESPOND is not None else f"echo: {DIRECTIVE.sub('', text).strip()}"
    reply = script.get("reply", default)
    message: dict[str, Any] = {"role": "assistant", "content": reply}
    if "reasoning" in script:
        message[script.get("reasoning_key", "reasoning_content")] = script["reasoning"]
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": script.get("finish", "stop")}],
        "usage": {
            "prompt_tokens": len(text) // 4 + 1,
            "completion_tokens": len(reply) // 4 + 1,
            "total_tokens": len(text) // 4 + len(reply) // 4 + 2,
        },
    }
    return json.dumps(body).encode()


async def _chat(state: _State, raw: bytes) -> bytes | None:
    request = json.loads(raw)
    messages = request.get("messages") or [{}]
    text = str(messages[-1].get("content", ""))
    state.requests += 1
    state.by_text[text] += 1
    state.bodies.append(request)
    match = DIRECTIVE.search(text)
    script: dict[str, Any] = json.loads(match.group(1)) if match else {}
    state.inflight += 1
    state.max_inflight = max(state.max_inflight, state.inflight)
    began = time.time()
    try:
        wait = request_latency(text, state.latency, state.latency_max, state.seed)
        await asyncio.sleep(wait + float(script.get("sleep", 0)))
    finally:
        state.inflight -= 1
        state.spans.append((began, time.time()))
    seen = state.by_text[text]
    limit, asked = MAX_MODEL_LEN, request.get("max_tokens") or 0
    if limit and asked > limit:
        message = (
            f"max_tokens={asked} cannot be greater than max_model_len={limit}. Please request fewer "
            f"output tokens. (parameter=max_tokens, value={asked})"
        )  # vLLM 0.32's words
        error = {"message": message, "type": "BadRequestError", "param": "max_tokens", "code": 400}
        return _response(400, json.dumps({"error": error}).encode())
    statuses = script.get("statuses") or ([script["status"]] if "status" in script else [])
    if len(statuses) > 1:  # a burst: one status per request, then normal answers
        status = int(statuses[seen - 1]) if seen <= len(statuses) else 200
    else:
        status = int(statuses[0]) if statuses else 200
        if "times" in script and seen > int(script["times"]):
            return _response(200, _completion(request, text, script))
    if status != 200:
        error = json.dumps({"error": {"message": f"fake {status}", "code": status}}).encode()
        wait = f"Retry-After: {script['retry_after']}\r\n" if "retry_after" in script else ""
        return _response(status, error, extra=wait)
    if script.get("close"):
        return None
    if script.get("reset"):
        whole = _response(200, _completion(request, text, script))
        return b"RESET" + whole[: len(whole) - len(whole) // 3]
    if script.get("malformed"):
        return _response(200, b'{"choices": [{"message": ')
    return _response(200, _completion(request, text, script))


async def _handle(state: _State, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            method, target = lines[0].split(b" ")[:2]
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
            if b"authorization" in headers:
                state.auth.add(headers[b"authorization"].decode())
            path = target.split(b"?")[0]
            if method == b"POST" and path.endswith(b"/chat/completions"):
                out = await _chat(state, body)
                if out is None:
                    break
                if out.startswith(b"RESET"):  # part of the body, then a cut connection
                    writer.write(out[5:])
                    await writer.drain()
                    writer.transport.abort()
                    break
            elif path.endswith(b"/stats"):
                stats = {
                    "requests": state.requests,
                    "max_inflight": state.max_inflight,
                    "by_text": dict(state.by_text),
                    "bodies": list(state.bodies),
                    "auth": sorted(state.auth),
                    "spans": list(state.spans),
                }
                out = _response(200, json.dumps(stats).encode())
            elif path.endswith(b"/reset"):
                state.requests, state.max_inflight, state.by_text, state.auth = 0, 0, Counter(), set()
                state.bodies.clear()
                state.spans.clear()
                out = _response(200, b"{}")
            elif path.endswith(b"/models"):
                out = _response(200, b'{"object": "list", "data": [{"id": "fake", "object": "model"}]}')
            else:
                out = _response(404, b'{"error": {"message": "not found"}}')
            writer.write(out)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def serve(port: int, latency: float, latency_max: float | None = None, seed: int = 0) -> None:
    """Serve on 127.0.0.1:``port`` (0 = any free port) forever, printing ``PORT <n>`` once bound."""
    state = _State(latency=latency, latency_max=latency_max, seed=seed)
    server = await asyncio.start_server(lambda r, w: _handle(state, r, w), "127.0.0.1", port, backlog=1024)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


class FakeServer:
    """A fake server in a child process (so it never competes with the client for the GIL)."""

    def __init__(
        self,
        latency: float = 0.0,
        latency_max: float | None = None,
        seed: int = 0,
        respond: str | None = None,
        port: int = 0,
    ) -> None:
        command = [
            sys.executable,
            "-m",
            "tests.support.fake_openai",
            "--latency",
            str(latency),
            "--seed",
            str(seed),
            "--port",
            str(port),
        ]
        if latency_max is not None:
            command += ["--latency-max", str(latency_max)]
        if respond is not None:
            command += ["--respond", respond]
        # stdin stays an open pipe: when this process dies, the server sees EOF and exits too.
        self.process = subprocess.Popen(
            [*command, "--exit-with-parent"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stdin=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"fake server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _call(self, path: str, method: str = "GET") -> dict[str, Any]:
        with urlopen(Request(f"{self.base_url}/{path}", method=method, data=b"" if method == "POST" else None)) as r:
            return json.loads(r.read())

    def stats(self) -> dict[str, Any]:
        """Return the counters: requests, by_text, bodies (last 50), auth (headers seen)."""
        return self._call("stats")

    def reset(self) -> None:
        """Zero the counters."""
        self._call("reset", "POST")

    def stop(self) -> None:
        """Stop the server process."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


def start(
    latency: float = 0.0, latency_max: float | None = None, seed: int = 0, respond: str | None = None, port: int = 0
) -> FakeServer:
    """Start a fake server process and return its handle (call ``.stop()`` when done).

    ``latency_max`` makes each message's latency a seeded draw from ``[latency, latency_max]``;
    ``respond`` (``MODULE:FUNCTION``, importable from the repository root) scripts the replies."""
    return FakeServer(latency, latency_max, seed, respond, port)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer (the least)")
    parser.add_argument("--latency-max", type=float, default=None, help="draw latencies up to this many seconds")
    parser.add_argument("--seed", type=int, default=0, help="seed of the latency draws")
    parser.add_argument("--exit-with-parent", action="store_true", help="exit when stdin reaches EOF")
    parser.add_argument("--respond", default=None, help="MODULE:FUNCTION answering each request body")
    args = parser.parse_args()
    if args.respond:
        module, _, function = args.respond.partition(":")
        RESPOND = getattr(importlib.import_module(module), function)
    if args.exit_with_parent:
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    try:
        asyncio.run(serve(args.port, args.latency, args.latency_max, args.seed))
    except KeyboardInterrupt:
        pass
