"""The simulated cluster: one OpenAI-compatible chat endpoint per model, all in one process.

Each :class:`Endpoint` listens on its own port and answers ``POST /v1/chat/completions`` with
:func:`answers.respond` after its declared latency plus the reply's tokens at its declared
throughput, at most ``slots`` requests at a time (more wait their turn, as on a busy server).
About ``error_rate`` of requests (seeded per request text and attempt) get a 429 with
``Retry-After: 0`` or a 500, 502 or 503, which the client retries. Each answered request adds a
line to the spec's ``log`` before its reply goes out. ``GET /stats`` (any port)
returns every endpoint's counts (requests, answered, errors, the most in flight at once) and the
most endpoints that had a request in flight at the same moment, which is how a run proves that
every endpoint was busy at once.

Run it as ``python -m declinecraft.simulation.cluster SPEC.json``: the spec lists the endpoints
(model, port, latency_s, tokens_per_s, slots) and the seed, error rate and reported rates file;
the process prints ``READY`` once every port listens, and stops on SIGTERM, SIGINT or SIGHUP.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from declinecraft.simulation import answers

REASONS = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}
REASONS |= {502: "Bad Gateway", 503: "Service Unavailable"}


@dataclass
class Endpoint:
    """One model's simulated server: where it listens and how fast it answers."""

    model: str
    port: int
    latency_s: float = 0.02
    tokens_per_s: float = 2000.0
    slots: int = 64
    requests: int = 0
    answered: int = 0
    errors: int = 0
    inflight: int = 0
    max_inflight: int = 0
    seen: dict[str, int] = field(default_factory=dict, repr=False)


@dataclass
class Cluster:
    """Every endpoint, the shared settings and the busy-at-once record."""

    endpoints: list[Endpoint]
    seed: int = 0
    error_rate: float = 0.01
    reported: str = "params/paper_reported.yaml"
    log: str = ""
    """A file that gets one line (the model) per answered request, appended before the reply is
    sent: the calls a run sent, counted across interrupted and resumed invocations."""
    busy_max: int = 0
    busy_max_at: float = 0.0

    def busy(self) -> None:
        now = sum(1 for e in self.endpoints if e.inflight)
        if now > self.busy_max:
            self.busy_max, self.busy_max_at = now, time.time()

    def stats(self) -> dict[str, Any]:
        """Counts per endpoint and the most endpoints in flight at once."""
        rows = [{k: v for k, v in asdict(e).items() if k != "seen"} for e in self.endpoints]
        return {"endpoints": rows, "busy_max": self.busy_max, "busy_max_at": self.busy_max_at}


def _http(status: int, body: bytes, extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Length: {len(body)}\r\n"
    return (head + f"Content-Type: application/json\r\nConnection: keep-alive\r\n{extra}\r\n").encode() + body


def _completion(request: dict[str, Any], reply: str, prompt: str) -> bytes:
    usage = {"prompt_tokens": len(prompt) // 4 + 1, "completion_tokens": len(reply) // 4 + 1}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    body = {
        "id": "chatcmpl-simulated",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": usage,
    }
    return json.dumps(body).encode()


async def _chat(cluster: Cluster, endpoint: Endpoint, slots: asyncio.Semaphore, raw: bytes) -> bytes:
    request = json.loads(raw)
    prompt = json.dumps(request.get("messages"), sort_keys=True)
    endpoint.requests += 1
    attempt = endpoint.seen[prompt] = endpoint.seen.get(prompt, 0) + 1
    async with slots:
        endpoint.inflight += 1
        endpoint.max_inflight = max(endpoint.max_inflight, endpoint.inflight)
        cluster.busy()
        try:
            reply = answers.respond(request, cluster.reported)
            wait = endpoint.latency_s * (0.5 + answers.draw("latency", cluster.seed, prompt))
            await asyncio.sleep(wait + (len(reply) / 4) / endpoint.tokens_per_s)
        finally:
            endpoint.inflight -= 1
    u = answers.draw("error", cluster.seed, endpoint.model, prompt, attempt)
    if u < cluster.error_rate:
        endpoint.errors += 1
        status = (429, 500, 502, 503)[int(u / cluster.error_rate * 4)]
        error = json.dumps({"error": {"message": "simulated failure", "code": status}}).encode()
        return _http(status, error, "Retry-After: 0\r\n" if status == 429 else "")
    endpoint.answered += 1
    del endpoint.seen[prompt]
    if cluster.log:
        with open(cluster.log, "a", encoding="utf-8") as log:
            log.write(endpoint.model + "\n")
    return _http(200, _completion(request, reply, prompt))


async def _serve(
    cluster: Cluster,
    endpoint: Endpoint,
    slots: asyncio.Semaphore,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    try:
        while line := await reader.readline():
            method, path, _ = line.decode("latin-1").split(" ", 2)
            length = 0
            while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = header.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            raw = await reader.readexactly(length) if length else b""
            if method == "POST" and path.endswith("/chat/completions"):
                out = await _chat(cluster, endpoint, slots, raw)
            elif path.endswith("/stats"):
                out = _http(200, json.dumps(cluster.stats()).encode())
            elif path.endswith("/models"):
                out = _http(200, json.dumps({"data": [{"id": endpoint.model, "object": "model"}]}).encode())
            else:
                out = _http(404, b'{"error": {"message": "not found"}}')
            writer.write(out)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


def load(spec: Path) -> Cluster:
    """Read a cluster spec (JSON, as :func:`declinecraft.simulation.command` writes it)."""
    raw = json.loads(spec.read_text(encoding="utf-8"))
    endpoints = [Endpoint(**e) for e in raw.pop("endpoints")]
    return Cluster(endpoints=endpoints, **raw)


async def serve(cluster: Cluster, stop: asyncio.Event) -> None:
    """Listen on every endpoint's port until ``stop`` is set."""
    servers = []
    for endpoint in cluster.endpoints:
        slots = asyncio.Semaphore(endpoint.slots)

        async def handle(
            reader: asyncio.StreamReader,
            writer: asyncio.StreamWriter,
            endpoint: Endpoint = endpoint,
            slots: asyncio.Semaphore = slots,
        ) -> None:
            await _serve(cluster, endpoint, slots, reader, writer)

        servers.append(await asyncio.start_server(handle, "127.0.0.1", endpoint.port, backlog=1024))
    print("READY", flush=True)
    await stop.wait()
    for server in servers:
        server.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m declinecraft.simulation.cluster SPEC.json``: serve until a stop signal."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m declinecraft.simulation.cluster SPEC.json", file=sys.stderr)
        return 2
    cluster = load(Path(args[0]))

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        await serve(cluster, stop)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
