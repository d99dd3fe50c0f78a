"""LLM client throughput against a fake OpenAI-compatible server with realistic latencies.

    .venv/bin/python benchmarks/bench_llm_client.py [--quick] [--requests 768] [--concurrency 64]
        [--latency-min 0.5] [--latency-max 2.0] [--seed 0]

* Server: ``tests/support/fake_openai.py`` in its own process on 127.0.0.1, answering each request after
  a latency drawn uniformly from ``[--latency-min, --latency-max]`` seconds, seeded per message
  text (:func:`fake_openai.request_latency`), so every run sees the same latencies. Its request
  count proves every call was sent exactly once.
* Client: the project's own path, ``client.client_for`` + ``client.run_batch`` with the tqdm progress
  bar on and every answer committed to a fresh SQLite cache, as a stage runs it, ``--concurrency``
  requests in flight. A warm-up batch (``--warmup``, distinct calls) opens the connections first.
* Theoretical rate: the same latencies scheduled, in request order, on ``--concurrency`` slots by
  a client that costs no time at all (so the ramp-down at the end of a finite batch is not counted
  against the client); ``efficiency`` is achieved over theoretical requests/s.
* Cached lookups: the same batch again, answered wholly from the cache (keys, fetch, results).
* CPU: the client's process time per call, and the server's, from ``/proc``.

Targets: efficiency ≥ 0.95 and ≥ 2,500 cached lookups/s (5,000 in 2 s), recorded as
``meets_targets`` with the load average, since other processes on the cores lower the rate.
``--quick`` (``make bench QUICK=1``) runs a smaller batch. Writes ``outputs/bench/llm_client.json``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from declinecraft.core import paths, registry
from declinecraft.llm import cache, client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fake server lives with the tests (tests/support)

from tests.support import fake_openai  # noqa: E402

TARGET_EFFICIENCY = 0.95
TARGET_CACHED_PER_S = 2500.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc (the server runs in its own process)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ideal_makespan(latencies: Sequence[float], slots: int) -> float:
    """Seconds a zero-cost client needs to send ``latencies`` in order, ``slots`` at a time.

    Each request starts the moment a slot frees (list scheduling, as the client's semaphore does),
    so this is the best any client keeping ``slots`` requests in flight can do.
    """
    free = [0.0] * min(slots, len(latencies))
    for latency in latencies:
        heapq.heappush(free, heapq.heappop(free) + latency)
    return max(free, default=0.0)


def main() -> int:
    """Run the benchmark, write its JSON report and print it (exit 0 even when a target is missed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller batch, for CI (192 requests)")
    parser.add_argument("--requests", type=int, default=None, help="timed calls (default 768, quick 192)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-min", type=float, default=0.5)
    parser.add_argument("--latency-max", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=None, help="warm-up calls (default --concurrency)")
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "llm_client.json")
    args = parser.parse_args()
    n = args.requests if args.requests is not None else (192 if args.quick else 768)
    warmup = args.warmup if args.warmup is not None else args.concurrency

    texts = [f"bench {i}" for i in range(n)]
    latencies = [fake_openai.request_latency(t, args.latency_min, args.latency_max, args.seed) for t in texts]
    makespan = ideal_makespan(latencies, args.concurrency)
    spec = registry.ModelSpec(id="bench", backend="vllm", served_name="fake-bench", max_concurrency=args.concurrency)
    server = fake_openai.start(latency=args.latency_min, latency_max=args.latency_max, seed=args.seed)
    load = os.getloadavg()
    try:
        with tempfile.TemporaryDirectory() as folder, cache.open_cache(folder) as store:
            bench_client = client.client_for(spec, store, server.base_url)
            client.run_batch(
                bench_client, [client.Request.from_text(f"warm {i}", max_tokens=16) for i in range(warmup)]
            )
            requests = [client.Request.from_text(t, max_tokens=16) for t in texts]
            server.reset()
            server_cpu, client_cpu = cpu_seconds(server.process.pid), time.process_time()
            start = time.perf_counter()
            results = client.run_batch(bench_client, requests, desc="bench (sent)")
            elapsed = time.perf_counter() - start
            client_cpu, server_cpu = time.process_time() - client_cpu, cpu_seconds(server.process.pid) - server_cpu
            stats = server.stats()
            start = time.perf_counter()
            again = client.run_batch(bench_client, requests, desc="bench (cached)")
            cached_s = time.perf_counter() - start
            bench_client.close()
            rows = store.count()
    finally:
        server.stop()

    theoretical, achieved = n / makespan, n / elapsed
    report = {
        "achieved_rps": round(achieved, 2),
        "theoretical_rps": round(theoretical, 2),
        "efficiency": round(achieved / theoretical, 4),
        "steady_state_rps": round(args.concurrency * n / sum(latencies), 2),
        "elapsed_s": round(elapsed, 3),
        "ideal_elapsed_s": round(makespan, 3),
        "cached_lookups_per_s": round(n / cached_s, 1),
        "cached_lookups_s": round(cached_s, 3),
        "requests": n,
        "quick": args.quick,
        "concurrency": args.concurrency,
        "max_inflight_seen_by_server": stats["max_inflight"],
        "latency_s": {"min": args.latency_min, "max": args.latency_max, "mean": round(sum(latencies) / n, 4)},
        "seed": args.seed,
        "warmup_requests": warmup,
        "client_cpu_ms_per_call": round(1000 * client_cpu / n, 3),
        "server_cpu_ms_per_call": round(1000 * server_cpu / n, 3),
        "server_requests": stats["requests"],
        "failed": sum(not r.ok for r in results),
        "all_cached_on_rerun": all(r.cached for r in again),
        "cache_rows": rows,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_at_start": [round(x, 2) for x in load],
        "targets": {"efficiency": TARGET_EFFICIENCY, "cached_lookups_per_s": TARGET_CACHED_PER_S},
        "command": " ".join(["python benchmarks/bench_llm_client.py", *sys.argv[1:]]),
    }
    report["meets_targets"] = bool(
        report["efficiency"] >= TARGET_EFFICIENCY
        and n / cached_s >= TARGET_CACHED_PER_S
        and stats["requests"] == n
        and report["failed"] == 0
        and report["all_cached_on_rerun"]
    )
    paths.write_text_atomic(args.out, json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    if not report["meets_targets"]:
        print("bench_llm_client: a target was missed (see meets_targets)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
