"""The local llama.cpp server: speed and determinism of each way of running it, on real prompts.

    .venv/bin/python benchmarks/bench_serving.py [--quick] [--model qwen2.5-coder-0.5b] [--calls 16]
        [--servers plain:512,aligned:64,llama-server:64]

* Prompts: the first ``--calls`` requests the cache holds for ``--model`` (the default run's real
  prompts, in the order they were first sent), replayed exactly as stored (temperature 0).
* Each server flavour of :mod:`declinecraft.llm.serve`, at each prompt batch size, gets a fresh
  server per pass. Pass A sends the prompts in their stored order, pass B in reverse, one at a
  time. ``deterministic`` is true when every prompt got byte-identical text in both passes: an
  answer that depends on what the server answered before differs between them.
* ``seconds_a`` is the wall time of pass A; ``ratio_vs_plain`` compares it with the "plain" flavour
  (llama.cpp's ordinary prompt reuse, the fastest and the one whose answers drift).
  ``llama-server`` needs the binary that ``make llama-server`` builds; without it that row is skipped.

* ``--other-build DIR`` measures each flavour a second time with another build of llama-cpp-python
  (a folder made by ``pip install --no-deps --target DIR <wheel>``, e.g. a ``-march=native`` build),
  right after the installed build's row; ``ratio_vs_installed`` compares the two (below 1: the
  other build is faster). ``llama-server`` rows are not repeated.

* ``--threads 2,1``, ``--wait-policies active,passive`` and ``--load N`` measure each row at each
  server thread count, each ``OMP_WAIT_POLICY`` (how llama.cpp's OpenMP threads wait for each
  other between kernels: spinning or sleeping), and once more beside ``--load`` CPU hogs at
  ``nice 19`` (a machine in use; default 1, a light load, 0 turns it off). ``ratio_vs_quiet``
  compares a loaded row with its quiet twin; ``worst_loaded_ratio`` is the largest, against the
  goal ``loaded_ratio_goal`` (1.5).

Writes ``outputs/bench/serving.json``. ``--quick`` (``make bench QUICK=1``, in CI) replays 4 prompts of
SmolLM2-135M with the default flavour and batch only: a check that the bench runs and that the
default server is deterministic, in seconds (the 0.5B took about 70).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from declinecraft.core import paths, registry
from declinecraft.llm import cache, serve

ROOT = Path(__file__).resolve().parents[1]
#: CPU hogs beside the server in the loaded rows of a full run: one, a light load on 2 cores.
LOAD = 1
#: Goal: a loaded row at most this many times slower than its quiet twin.
LOADED_RATIO_GOAL = 1.5


def stored_requests(cache_dir: Path, spec: registry.ModelSpec, n: int) -> list[dict]:
    """Return the first ``n`` stored request bodies answered by ``spec``'s endpoint, oldest first."""
    file = cache.cache_path(cache_dir)
    if not file.is_file():
        return []
    with cache.Cache(file) as store:
        records = store.records("ok", endpoint=f"{spec.backend}:{spec.served_name}")
    return [json.loads(r.request) for r in records[:n]]


def replay(base_url: str, served_name: str, bodies: list[dict], order: list[int]) -> tuple[dict[int, str], float]:
    """Send ``bodies`` one at a time in ``order``; return the text per index and the wall seconds."""
    texts: dict[int, str] = {}
    start = time.perf_counter()
    with httpx.Client(timeout=600.0) as http:
        for i in order:
            reply = http.post(f"{base_url}/chat/completions", json={**bodies[i], "model": served_name})
            reply.raise_for_status()
            texts[i] = reply.json()["choices"][0]["message"]["content"] or ""
    return texts, time.perf_counter() - start


PERF = re.compile(r"\b(prompt eval|eval) time =\s*([\d.]+) ms /\s*(\d+) (?:tokens|runs)")


def engine_speeds(log_dir: Path) -> dict[str, float | None]:
    """Prompt-reading and writing speed (tokens/s) summed over the calls in the server logs of
    ``log_dir`` (llama.cpp's own timing lines, which both server programs print)."""
    totals = {"prompt eval": [0.0, 0], "eval": [0.0, 0]}
    for log in log_dir.glob("*.log"):
        for kind, ms, tokens in PERF.findall(log.read_text(errors="replace")):
            totals[kind][0] += float(ms)
            totals[kind][1] += int(tokens)

    def rate(kind: str) -> float | None:
        ms, tokens = totals[kind]
        return round(tokens / (ms / 1000), 1) if ms else None

    return {
        "prefill_tokens": int(totals["prompt eval"][1]),
        "prefill_tok_s": rate("prompt eval"),
        "decode_tokens": int(totals["eval"][1]),
        "decode_tok_s": rate("eval"),
    }


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    """Set (or, for None, leave) environment variables for the servers started inside the block."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update({name: value for name, value in values.items() if value is not None})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def background_load(processes: int) -> Iterator[None]:
    """Run ``processes`` CPU-bound loops at ``nice 19`` beside the block (a machine in use)."""
    hogs = [subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def measure(
    spec: registry.ModelSpec,
    cache_dir: Path,
    bodies: list[dict],
    flavour: str,
    batch: int,
    build: Path | None = None,
    *,
    threads: int | None = None,
    wait_policy: str | None = None,
    load: int = 0,
) -> dict:
    """Two passes (stored order, then reversed) on fresh servers of one flavour and batch size;
    ``build`` puts another llama-cpp-python first on the server's import path; ``threads`` sets
    the server's threads, ``wait_policy`` its ``OMP_WAIT_POLICY`` (how llama.cpp's OpenMP threads
    wait for each other: spinning, ``active``, or sleeping, ``passive``), ``load`` the number of
    ``nice 19`` CPU hogs running beside it."""
    n = len(bodies)
    passes = []
    path = os.pathsep.join(filter(None, [str(build), os.environ.get("PYTHONPATH")])) if build else None
    for order in (list(range(n)), list(range(n))[::-1]):
        with environment(PYTHONPATH=path, OMP_WAIT_POLICY=wait_policy), tempfile.TemporaryDirectory() as logs:
            with (
                serve.serve(
                    spec,
                    cache_dir,
                    reuse=False,
                    flavour=flavour,
                    prompt_batch=batch,
                    log_dir=Path(logs),
                    n_threads=threads,
                ) as s,
                background_load(load),
            ):
                passes.append(replay(s.base_url, spec.served_name, bodies, order))
            if len(passes) == 1:
                speeds = engine_speeds(Path(logs))
                policy = serve.llamacpp_environment()["OMP_WAIT_POLICY"]
    (a, seconds_a), (b, seconds_b) = passes
    differ = sorted(i for i in range(n) if a[i] != b[i])
    return {
        "flavour": flavour,
        "prompt_batch": batch,
        "calls": n,
        "seconds_a": round(seconds_a, 2),
        "seconds_b": round(seconds_b, 2),
        "deterministic": not differ,
        "differing_calls": len(differ),
        "build": str(build) if build else "installed",
        "threads": threads or serve.default_threads(),
        "omp_wait_policy": policy,
        "background_load": load,
        **speeds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--calls", type=int, default=16)
    parser.add_argument(
        "--servers",
        default=f"plain:512,aligned:512,aligned:{serve.PROMPT_BATCH},"
        f"llama-server:512,llama-server:{serve.PROMPT_BATCH}",
        help="flavour:prompt_batch pairs, comma-separated",
    )
    parser.add_argument(
        "--other-build",
        type=Path,
        default=None,
        help="a folder holding another llama-cpp-python build, measured after each row",
    )
    parser.add_argument("--threads", default="", help="server thread counts, comma-separated (default: the run's)")
    parser.add_argument(
        "--wait-policies",
        default="",
        help="OMP_WAIT_POLICY values to measure, comma-separated: active, passive, default (the server's)",
    )
    parser.add_argument(
        "--load",
        type=int,
        default=None,
        help=f"also measure each row beside this many nice-19 CPU hogs (default {LOAD}; 0 with --quick)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.model, args.calls, args.servers = "smollm2-135m", 4, f"{serve.LLAMACPP_FLAVOUR}:{serve.PROMPT_BATCH}"
    if args.load is None:
        args.load = 0 if args.quick else LOAD
    root = paths.find_root(ROOT)
    cache_dir = paths.cache_dir(root)
    spec = registry.get_model(root / "params" / "models.yaml", args.model)
    bodies = stored_requests(cache_dir, spec, args.calls)
    if not bodies:
        print(
            f"bench_serving: no stored calls of {spec.id} in {cache.cache_path(cache_dir)}: run `make all` first",
            file=sys.stderr,
        )
        return 1
    settings = [
        (threads, policy, load)
        for threads in [int(t) for t in args.threads.split(",") if t] or [None]
        for policy in [None if p == "default" else p for p in args.wait_policies.split(",") if p] or [None]
        for load in sorted({0, args.load})
    ]
    rows = []
    for flavour, batch in (s.split(":") for s in args.servers.split(",")):
        if flavour == "llama-server" and not serve.llama_server_binary().is_file():
            print(f"skip llama-server: {serve.llama_server_binary()} missing (`make llama-server`)")
            continue
        these = []
        for threads, policy, load in settings:
            row = measure(spec, cache_dir, bodies, flavour, int(batch), threads=threads, wait_policy=policy, load=load)
            print(json.dumps(row), flush=True)
            these.append(row)
        if args.other_build and flavour != "llama-server":
            other = measure(spec, cache_dir, bodies, flavour, int(batch), build=args.other_build.resolve())
            other["ratio_vs_installed"] = round(other["seconds_a"] / these[0]["seconds_a"], 3)
            print(json.dumps(other), flush=True)
            these.append(other)
        rows.extend(these)
    plain = [
        r["seconds_a"]
        for r in rows
        if r["flavour"] == "plain" and r["prompt_batch"] == 512 and r["build"] == "installed"
    ]
    for row in rows:
        quiet = [
            r["seconds_a"]
            for r in rows
            if r["background_load"] == 0
            and all(r[k] == row[k] for k in ("flavour", "prompt_batch", "build", "threads", "omp_wait_policy"))
        ]
        row["ratio_vs_quiet"] = round(row["seconds_a"] / quiet[0], 3) if quiet and row["background_load"] else None
        row["ratio_vs_plain"] = round(row["seconds_a"] / plain[0], 3) if plain else None
    out = root / "outputs" / "bench" / "serving.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    loaded = [r["ratio_vs_quiet"] for r in rows if r["ratio_vs_quiet"] is not None]
    result = {
        "model": spec.id,
        "quick": args.quick,
        "load_average": os.getloadavg(),
        "rows": rows,
        "loaded_ratio_goal": LOADED_RATIO_GOAL,
        "worst_loaded_ratio": max(loaded) if loaded else None,
    }
    paths.write_text_atomic(out, json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
