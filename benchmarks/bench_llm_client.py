"""LLM client throughput and cache-lookup speed against the fake OpenAI-compatible server.

    .venv/bin/python benchmarks/bench_llm_client.py [--requests 5000] [--concurrency 64] [--latency 0.05]

* Server: ``tests/fake_openai.py`` in its own process (stdlib asyncio streams), answering each
  request after a fixed latency, so the theoretical rate is ``concurrency / latency``
  (64 / 0.05 s = 1,280 req/s). Its request count proves every call was sent exactly once.
* Client: the project's own path, ``llm.client_for`` + ``llm.run_batch`` with the tqdm progress bar
  on and every answer committed to a fresh SQLite cache, as a stage runs it. A warm-up batch
  (``--warmup``, distinct calls) opens the connections first; the timed batch is ``--requests``
  new calls.
* Cached lookups: the same batch again, answered wholly from the cache (keys, fetch, results).
* CPU: the client's process time per call, and the server's, from ``/proc``.

Targets (issue #5): efficiency ≥ 0.90 and 5,000 cached lookups ≤ 2 s, recorded as
``meets_targets`` (with the load average, since other processes on the cores lower the rate).
Writes ``outputs/bench/llm_client.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import fake_openai  # noqa: E402

from declinecraft.llm import cache  # noqa: E402
from declinecraft.llm import client as llm
from declinecraft.core import paths
from declinecraft.core import registry


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--warmup", type=int, default=256)
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "llm_client.json")
    args = parser.parse_args()

    spec = registry.ModelSpec(id="bench", backend="vllm", served_name="fake-bench", max_concurrency=args.concurrency)
    server = fake_openai.start(latency=args.latency)
    load = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory() as folder, cache.open_cache(folder) as store:
            client = llm.client_for(spec, store, server.base_url)
            llm.run_batch(client, [llm.Request.from_text(f"warm {i}", max_tokens=16) for i in range(args.warmup)])
            requests = [llm.Request.from_text(f"bench {i}", max_tokens=16) for i in range(args.requests)]
            server.reset()
            server_cpu, client_cpu = cpu_seconds(server.process.pid), time.process_time()
            start = time.perf_counter()
            results = llm.run_batch(client, requests, desc="bench (sent)")
            elapsed = time.perf_counter() - start
            client_cpu, server_cpu = time.process_time() - client_cpu, cpu_seconds(server.process.pid) - server_cpu
            sent = server.stats()["requests"]
            start = time.perf_counter()
            again = llm.run_batch(client, requests, desc="bench (cached)")
            cached_s = time.perf_counter() - start
            client.close()
            rows = store.count()
    finally:
        server.stop()

    theoretical = args.concurrency / args.latency
    achieved = args.requests / elapsed
    report = {
        "achieved_rps": round(achieved, 1),
        "theoretical_rps": round(theoretical, 1),
        "efficiency": round(achieved / theoretical, 4),
        "cached_lookups_per_s": round(args.requests / cached_s, 1),
        "cached_lookups_s": round(cached_s, 3),
        "requests": args.requests,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "warmup_requests": args.warmup,
        "elapsed_s": round(elapsed, 3),
        "client_cpu_ms_per_call": round(1000 * client_cpu / args.requests, 3),
        "server_cpu_ms_per_call": round(1000 * server_cpu / args.requests, 3),
        "server_requests": sent,
        "failed": sum(not r.ok for r in results),
        "all_cached_on_rerun": all(r.cached for r in again),
        "cache_rows": rows,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_at_start": [round(x, 2) for x in load],
        "targets": {"efficiency": 0.90, "cached_lookups_s": 2.0},
        "command": "python benchmarks/bench_llm_client.py " + " ".join(sys.argv[1:]),
    }
    report["meets_targets"] = bool(
        report["efficiency"] >= 0.90 and cached_s <= 2.0 and sent == args.requests and report["failed"] == 0
    )
    paths.write_text_atomic(args.out, json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not report["meets_targets"]:
        print("bench_llm_client: a target was missed (see meets_targets)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
