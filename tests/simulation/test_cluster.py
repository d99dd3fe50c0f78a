"""Tests for declinecraft.simulation.cluster: the simulated endpoints."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.request import Request, urlopen

from declinecraft.simulation import cluster, command
from tests.support import projects

REPORTED = projects.REPO / "params" / "paper_reported.yaml"


def test_endpoint_errors_and_overlap(tmp_path: Path) -> None:
    """Two endpoints answer at once; about 1 % of requests fail with 429 or 5xx, then answer when retried."""
    ports = command._ports("parts-test", 2)
    spec = cluster.Cluster(
        [cluster.Endpoint("a", ports[0], latency_s=0.05), cluster.Endpoint("b", ports[1], latency_s=0.05)],
        error_rate=0.2,
        reported=str(REPORTED),
    )

    def post(port: int, text: str) -> int:
        body = json.dumps({"model": "a", "messages": [{"role": "user", "content": text}]}).encode()
        try:
            with urlopen(Request(f"http://127.0.0.1:{port}/v1/chat/completions", body), timeout=10) as r:
                return int(r.status)
        except Exception as exc:  # an HTTPError carries the status
            return int(getattr(exc, "code", 0))

    async def scenario() -> list[int]:
        stop = asyncio.Event()
        server = asyncio.create_task(cluster.serve(spec, stop))
        await asyncio.sleep(0.2)
        texts = [f"question {i}" for i in range(40)]
        statuses = await asyncio.gather(*(asyncio.to_thread(post, ports[i % 2], t) for i, t in enumerate(texts)))
        stop.set()
        await server
        return list(statuses)

    statuses = asyncio.run(scenario())
    assert set(statuses) <= {200, 429, 500, 502, 503} and 0 < statuses.count(200) < 40
    assert spec.busy_max == 2 and sum(e.errors for e in spec.endpoints) == 40 - statuses.count(200)
