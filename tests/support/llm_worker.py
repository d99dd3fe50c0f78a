"""One LLM batch in its own process, for the kill -9 and concurrent-writer tests.

``python -m tests.support.llm_worker BASE_URL DB START STOP [--concurrency N]``, run at the
repository root, answers calls ``START..STOP-1`` into the cache file ``DB`` and prints the batch
summary as JSON. The tests build the same
requests with :func:`batch_requests` and :func:`worker_spec` to know every call's key.
"""

from __future__ import annotations

import argparse
import json

from declinecraft.core import registry
from declinecraft.llm import cache
from declinecraft.llm.client import Request, client_for, run_batch, summary


def worker_spec(concurrency: int = 16) -> registry.ModelSpec:
    """The registry entry the worker calls (a 'vLLM' model served by the fake server)."""
    return registry.ModelSpec(id="worker", backend="vllm", served_name="fake-worker", max_concurrency=concurrency)


def batch_requests(start: int, stop: int) -> list[Request]:
    """Calls ``start..stop-1``; each has its own text, so the fake server counts it apart."""
    return [Request.from_text(f"call {i}", max_tokens=8) for i in range(start, stop)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("db")
    parser.add_argument("start", type=int)
    parser.add_argument("stop", type=int)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with cache.Cache(args.db) as store:
        client = client_for(worker_spec(args.concurrency), store, args.base_url)
        results = run_batch(client, batch_requests(args.start, args.stop), progress=False)
        client.close()
    print(json.dumps(summary(results)), flush=True)


if __name__ == "__main__":
    main()
