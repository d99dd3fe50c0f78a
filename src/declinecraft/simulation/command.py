"""``make simulate [SCALE=20]``: the paper's whole design run by the real pipeline on the simulated cluster.

It writes, under ``outputs/<run>/simulation/`` (``<run>`` is ``simulate``, or ``simulate-s<N>``
at 1/N of the paper's size): the generated wiki export (:mod:`.corpus`), a models file that points
every model of ``params/paper.yaml`` at its own local endpoint (``base_url``; the entries are
otherwise those of ``params/models.yaml``), the run's params file (``base: paper``,
``simulated: true``, the generated wiki as ``corpus.source: dump``, a model-free embedder and
reranker (feature hashing), and the paper's sizes divided by N) and the cluster's spec. It plans the run
(:mod:`declinecraft.planning`, what ``make plan`` prints), starts the cluster (:mod:`.cluster`),
runs ``make all`` on that params file with the LLM cache in the same folder (so no key of a
simulated run can meet a real run's), then compares the calls each endpoint answered with the
plan and writes ``report.json``: wall time, calls per model against the plan's bounds, the
injected errors, the most endpoints busy at once, and disk use. It exits non-zero when the run
failed, a model's calls fall outside the plan, or, on a run that sent every call this time (a cold
one), fewer endpoints were ever busy at once than there are models under test (the answer stage
runs them all together); a rerun that finds its calls cached sends few or none, so it is not held
to that.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import yaml

from declinecraft.core import config, paths
from declinecraft.runtime import parent_death
from declinecraft.simulation import corpus

KEY = "simulated-key"


def run_name(scale: int) -> str:
    """``simulate`` at the paper's size, ``simulate-s<N>`` at 1/N of it."""
    return "simulate" if scale == 1 else f"simulate-s{scale}"


def _div(n: int, scale: int) -> int:
    return max(1, math.ceil(n / scale))


def params_text(run: str, scale: int, folder: str, root: Path) -> str:
    """The run's params file: the paper's design (``root``'s ``params/paper.yaml``) at 1/``scale``
    of its size, on the simulated cluster."""
    paper = config.load(root / "params" / "paper.yaml")
    raw: dict[str, Any] = {
        "description": f"SIMULATED: the paper's design at 1/{scale} of its size on a simulated cluster (not results).",
        "base": "paper",
        "simulated": True,
        "models_file": f"{folder}/models.yaml",
        "corpus": {"source": "dump", "dump": f"{folder}/wiki.xml", "url_template": "https://simulated.invalid/{title}"},
        # Model-free retrieval (feature hashing): the paper's embedder and reranker ran on GPUs, and
        # on a few CPU cores a cross-encoder alone would take hours (measured: 3 pairs/s).
        # 1,024 buckets for the dense retriever: at 384, a page name sharing a bucket with a word of
        # the scenarios was near every scenario, and the generator's targets piled onto its chunks.
        "index": {"embedder": "hash-1024", "embedder_path": "", "reranker": "hash-384", "reranker_path": ""},
    }
    if scale > 1:
        g, v, j = paper.generate, paper.verify, paper.judge
        raw["generate"] = {"n_answerable": _div(g.n_answerable, scale), "n_unanswerable": _div(g.n_unanswerable, scale)}
        raw["verify"] = {
            "target_answerable": _div(v.target_answerable, scale),
            "target_unanswerable": _div(v.target_unanswerable, scale),
            "comparison_answerable": _div(v.comparison_answerable, scale),
            "comparison_unanswerable": _div(v.comparison_unanswerable, scale),
        }
        raw["judge"] = {"second_judge_sample": 9 * _div(j.second_judge_sample // 9, scale)}
        raw["evidence"] = {"limit_questions": _div(paper.evidence.limit_questions, scale)}
    return f"# Written by `make simulate` (declinecraft.simulation.command); {run}'s numbers are not results.\n" + (
        yaml.safe_dump(raw, sort_keys=False)
    )


def models_text(cfg_models: list[str], root: Path, ports: dict[str, int]) -> str:
    """``params/models.yaml``'s entries of ``cfg_models``, each pointed at its local endpoint."""
    raw = yaml.safe_load((root / "params" / "models.yaml").read_text(encoding="utf-8"))["models"]
    entries = {}
    for model in cfg_models:
        entry = dict(raw[model])
        entry.pop("base_urls", None)
        entry["base_url"] = f"http://127.0.0.1:{ports[model]}/v1"
        entries[model] = entry
    return yaml.safe_dump({"models": entries}, sort_keys=True)


def _ports(run: str, n: int, root: Path | None = None) -> list[int]:
    """``n`` consecutive ports fixed by the run's name and checkout (a rerun keeps its models file
    unchanged; two checkouts simulating at once do not meet). They lie below 32,768, where Linux's
    ephemeral ports begin, so no outgoing connection of another process can hold one."""
    start = 20_000 + (zlib.crc32(f"{root}:{run}".encode()) % 300) * 40
    return list(range(start, start + n))


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def prepare(root: Path, scale: int, seed: int = 0) -> tuple[Path, Path, list[str]]:
    """Write the wiki, models file, params file and cluster spec; returns (params file, folder, models)."""
    run = run_name(scale)
    folder = root / "outputs" / run / "simulation"
    rel = folder.relative_to(root).as_posix()
    if not (folder / "wiki.xml").is_file():
        corpus.write_dump(folder / "wiki.xml", scale=scale, seed=seed)
    params_file = folder / f"{run}.yaml"
    paths.write_text_if_changed(params_file, params_text(run, scale, rel, root))
    placeholder: dict[str, dict[str, Any]] = {"models": {}}
    if not (folder / "models.yaml").is_file():  # referenced_models needs a models file to load the params
        (folder / "models.yaml").write_text(yaml.safe_dump(placeholder), encoding="utf-8")
    models = sorted(config.referenced_models(config.load(params_file)))
    ports = dict(zip(models, _ports(run, len(models), root), strict=True))
    paths.write_text_if_changed(folder / "models.yaml", models_text(models, root, ports))
    specs = yaml.safe_load((folder / "models.yaml").read_text(encoding="utf-8"))["models"]
    endpoints = [
        {
            "model": m,
            "port": ports[m],
            "latency_s": 0.02,
            "tokens_per_s": 4000.0,
            "slots": specs[m].get("max_concurrency") or 16,
        }
        for m in models
    ]
    spec = {
        "endpoints": endpoints,
        "seed": seed,
        "error_rate": 0.01,
        "reported": str(root / "params" / "paper_reported.yaml"),
        "log": str(folder / "answered.log"),
    }
    (folder / "cluster.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return params_file, folder, models


def planned(params_file: Path, env: dict[str, str]) -> dict[str, tuple[int, int, bool]]:
    """Per model: the plan's (fewest, most calls, exact) over every stage."""
    from declinecraft.planning import plan

    built = plan.build(config.load(params_file), environ=env)
    out: dict[str, list[Any]] = defaultdict(lambda: [0, 0, True])
    for row in built.rows:
        entry = out[row["model"]]
        entry[0] += row["calls_min"]
        entry[1] += row["calls_max"]
        entry[2] = entry[2] and bool(row["exact"])
    return {m: (int(a), int(b), bool(e)) for m, (a, b, e) in out.items()}


def environment(folder: Path, root: Path) -> dict[str, str]:
    """The run's environment: its own LLM cache, a key for every hosted entry, this checkout's code."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    specs = yaml.safe_load((folder / "models.yaml").read_text(encoding="utf-8"))["models"]
    env.update({s["api_key_env"]: KEY for s in specs.values() if s.get("api_key_env")})
    env[paths.CACHE_ENV] = str(folder / "cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "src"), env.get("PYTHONPATH", "")]))
    return env


def answered(folder: Path) -> dict[str, int]:
    """Calls answered per model so far, over every invocation since the run's cache was made."""
    log = folder / "answered.log"
    sent: dict[str, int] = defaultdict(int)
    for line in log.read_text(encoding="utf-8").splitlines() if log.is_file() else []:
        sent[line] += 1
    return dict(sent)


def compare(plan_calls: dict[str, tuple[int, int, bool]], sent: dict[str, int]) -> list[dict[str, Any]]:
    """One row per model: calls answered against the plan's bounds (``ok`` when within, equal where exact)."""
    rows = []
    for model in sorted(set(plan_calls) | set(sent)):
        low, high, exact = plan_calls.get(model, (0, 0, True))
        n = sent.get(model, 0)
        ok = (n == low) if exact else (low <= n <= high)
        rows.append({"model": model, "sent": n, "plan_min": low, "plan_max": high, "exact": exact, "ok": ok})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Prepare, plan, serve, run ``make all`` and report; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.simulation", description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=1, help="run 1/SCALE of the paper's questions and corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--make", default="make", help="the make command (split as a shell would)")
    parser.add_argument("--prepare-only", action="store_true", help="write the inputs and the plan, run nothing")
    args = parser.parse_args(argv)
    root = paths.find_root(Path.cwd())
    params_file, folder, models = prepare(root, args.scale, args.seed)
    if not (folder / "cache").exists():  # a cold run: no call was sent before this one
        (folder / "answered.log").unlink(missing_ok=True)
    env = environment(folder, root)
    plan_calls = planned(params_file, env)
    low, high = sum(v[0] for v in plan_calls.values()), sum(v[1] for v in plan_calls.values())
    rel = params_file.relative_to(root).as_posix()
    print(f">> SIMULATED run {rel}: {len(models)} endpoints; the plan: {low:,}-{high:,} calls", flush=True)
    if args.prepare_only:
        return 0
    cluster = parent_death.popen(
        [sys.executable, "-m", "declinecraft.simulation.cluster", str(folder / "cluster.json")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert cluster.stdout is not None
        if cluster.stdout.readline().strip() != "READY":
            raise SystemExit("the simulated cluster did not start (a port in use?)")
        start = time.monotonic()
        made = subprocess.run(
            [*shlex.split(args.make), "--no-print-directory", "all", f"PARAMS={rel}"], cwd=root, env=env
        )
        wall = time.monotonic() - start
        port = json.loads((folder / "cluster.json").read_text())["endpoints"][0]["port"]
        with urlopen(f"http://127.0.0.1:{port}/stats", timeout=30) as response:
            stats = json.loads(response.read())
    finally:
        cluster.terminate()
        cluster.wait(timeout=30)
    rows = compare(plan_calls, answered(folder))
    busy = stats["busy_max"]
    report = {
        "run": params_file.stem,
        "make_exit": made.returncode,
        "wall_s": round(wall, 1),
        "sent": sum(r["sent"] for r in rows),
        "sent_this_invocation": sum(e["answered"] for e in stats["endpoints"]),
        "plan_min": low,
        "plan_max": high,
        "calls_within_plan": all(r["ok"] for r in rows),
        "errors_injected": sum(e["errors"] for e in stats["endpoints"]),
        "endpoints": len(stats["endpoints"]),
        "endpoints_busy_at_once": busy,
        "models_under_test": len(config.load(params_file).answer.models),
        "disk_cache_bytes": _du(folder / "cache"),
        "disk_outputs_bytes": _du(root / "outputs" / params_file.stem) - _du(folder / "cache"),
        "models": rows,
        "cluster": stats,
    }
    (folder / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    for r in rows:
        flag = "" if r["ok"] else "   <- outside the plan"
        print(f"   {r['model']:<30} sent {r['sent']:>9,}  plan {r['plan_min']:,}-{r['plan_max']:,}{flag}")
    print(
        f">> SIMULATED: make exit {made.returncode}, {wall:.0f} s, {report['sent']:,} calls sent "
        f"(plan {low:,}-{high:,}), {report['errors_injected']} injected errors retried, "
        f"{busy} of {len(rows)} endpoints busy at once ({report['models_under_test']} models under test); "
        f"{folder / 'report.json'}"
    )
    cold = report["sent_this_invocation"] == report["sent"]
    busy_enough = busy >= report["models_under_test"] or not cold
    good = made.returncode == 0 and report["calls_within_plan"] and busy_enough
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
