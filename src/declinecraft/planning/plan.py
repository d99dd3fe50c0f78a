"""``make plan``: what a params file will send, before anything is sent.

One row per stage and model: ``stage, model, calls_min, calls_max, prompt_tokens, output_tokens,
cached, hours, usd`` (and ``exact``, ``tokens_from``, ``hours_from``, ``output_tokens_max``, ``usd_batch``,
``usd_no_batch``, ``backend``), totals per stage, per model and for the run (with ``responses``,
the answer stage's response rows), a GPU layout on a declared machine, what this machine lacks,
and for the paper's run the response totals beside ``params/paper_reported.yaml``.
Written to ``outputs/<run>/plan.csv`` and ``plan.json``; the plan sends nothing.

Token, hour and dollar columns are at ``calls_expected``: the upper count, but each judge item
asked once (its bound allows a re-ask of every item); ``cached`` counts the planned
calls whose answer the cache already holds among the ``cached_of`` calls whose request can be built
without running an upstream stage (today: the generator's scenario calls once the corpus exists,
the answer stage's no-RAG calls once the benchmark exists); ``unknown`` where there are none.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from declinecraft.core import paths, prompts
from declinecraft.core.config import RunConfig
from declinecraft.core.registry import ModelSpec, load_models
from declinecraft.planning import costs, needs, paper
from declinecraft.planning.counts import parts
from declinecraft.planning.part import THINK_TOKENS, Part

#: The machine a GPU layout is drawn for when ``--gpus`` names none.
DEFAULT_MACHINE = "8xH100-80GB"
#: Columns of ``plan.csv`` (the first nine are the issue's; the rest say how they were counted).
COLUMNS = (
    "stage",
    "model",
    "calls_min",
    "calls_max",
    "prompt_tokens",
    "output_tokens",
    "cached",
    "hours",
    "usd",
    "exact",
    "calls_expected",
    "cached_of",
    "backend",
    "tokens_from",
    "hours_from",
    "output_tokens_max",
    "longest_prompt_tokens",
    "largest_budget",
    "usd_no_batch",
    "usd_batch",
    "gpu_hours",
    "responses",
)


@dataclass
class Plan:
    """A run's plan (see the module docstring); :func:`build` makes it."""

    run: str
    params_file: str
    machine: str
    rows: list[dict[str, Any]]
    totals: dict[str, Any]
    per_stage: list[dict[str, Any]]
    per_model: list[dict[str, Any]]
    gpu_layout: list[dict[str, Any]]
    needs: list[dict[str, str]]
    assumptions: list[str]
    paper: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The whole plan as plain data (``plan.json``)."""
        return asdict(self)


def _template_chars(root: Path) -> Any:
    cache: dict[str, int] = {}

    def chars(name: str) -> int:
        if name not in cache:
            path = root / "params" / "prompts" / f"{name}.txt"
            cache[name] = len(path.read_text(encoding="utf-8")) if path.is_file() else 0
        return cache[name]

    return chars


def _usage(cfg: RunConfig, specs: Sequence[ModelSpec]) -> dict[str, list[tuple[int, int, float]]]:
    """Token counts and latencies of each endpoint's answered calls in the cache (none without one)."""
    from declinecraft.llm.cache import Cache, cache_path

    store = cache_path(cfg.cache_dir)
    if not store.is_file():
        return {}
    with Cache(store) as cache:
        return {e: cache.usage(e) for e in dict.fromkeys(f"{s.backend}:{s.served_name}" for s in specs)}


def _cached(cfg: RunConfig, spec: ModelSpec, part: Part) -> int | None:
    """How many of a part's calls the cache already answers (None: the keys cannot be built here)."""
    if part.requests is None or not part.template:
        return None
    from declinecraft.llm.cache import Cache, cache_path, call_key  # the LLM layer reads no network here
    from declinecraft.llm.client import Request, endpoint_identity, request_body

    store = cache_path(cfg.cache_dir)
    if not store.is_file():
        return 0
    try:
        identity = endpoint_identity(spec, (), cfg.cache_dir if spec.is_local else None)
    except Exception:  # noqa: BLE001  (a vLLM engine not built here: its keys cannot be named)
        return None
    prompt = prompts.load(part.template, cfg.root)
    keys = []
    for fields in part.requests():
        request = Request.from_prompt(
            prompt, fields, max_tokens=part.budget, thinking=part.mode, temperature=part.temperature
        )
        _, body = request_body(spec, request)
        keys.append(call_key(identity, body, prompt.version))
    with Cache(store) as cache:
        found = cache.fetch(set(keys))
    return sum(1 for k in dict.fromkeys(keys) if k in found and found[k].status == "ok")


def build(
    cfg: RunConfig,
    *,
    machine: str = DEFAULT_MACHINE,
    probe: bool = False,
    gpu_usd_per_hour: float = 0.0,
    environ: Mapping[str, str] | None = None,
    reported: Path | None = None,
) -> Plan:
    """Plan a run: counts, tokens, cache hits, hours, dollars, GPU layout, what is missing.

    Args:
        machine: the GPU machine self-hosted models are laid out on (``8xH100-80GB``).
        probe: ask hosted endpoints and the wiki once whether they answer (else nothing is sent).
        gpu_usd_per_hour: price of one GPU-hour for self-hosted models (0 = not counted).
        reported: the paper's reported numbers; when given, the response totals are compared.

    Raises:
        ValueError: a malformed ``machine``; a model the run names that the registry lacks.
    """
    gpus = costs.Machine.parse(machine)
    environ = dict(os.environ if environ is None else environ)
    specs = load_models(cfg.resolve(cfg.models_file))
    planned, size, skipped = parts(cfg, _template_chars(cfg.root), lambda m: specs[m].thinking)
    sample = (cfg.root / "params" / "prompts" / "answer_with_context.txt").read_text(encoding="utf-8")
    ratios = {
        m: costs.chars_per_token(specs[m], needs.weights_dir(specs[m]), sample) for m in {p.model for p in planned}
    }
    usage = _usage(cfg, [specs[m] for m in dict.fromkeys(p.model for p in planned)])
    groups: dict[tuple[str, str], list[Part]] = defaultdict(list)
    for p in planned:
        groups[(p.stage, p.model)].append(p)
    rows: list[dict[str, Any]] = []
    for (stage, model), group in groups.items():
        spec = specs[model]
        ratio, source = ratios[model]
        prompt_tokens = sum(p.expected * costs.ceil_tokens(p.prompt_chars, ratio) for p in group)
        output_tokens = sum(p.expected * p.output_tokens for p in group)
        rate = costs.throughput(spec, gpus, usage.get(f"{spec.backend}:{spec.served_name}", ()))
        wall = costs.hours(prompt_tokens, output_tokens, rate)
        price = costs.dollars(spec, prompt_tokens, output_tokens)
        gpu_hours = wall * gpus.gpus if wall is not None and costs.on_gpu(spec) else None
        usd = price.at(spec) if not spec.is_local else (gpu_hours or 0.0) * gpu_usd_per_hour
        hits = [_cached(cfg, spec, p) for p in group]
        rows.append(
            {
                "stage": stage,
                "model": model,
                "calls_min": sum(p.calls_min for p in group),
                "calls_max": sum(p.calls_max for p in group),
                "calls_expected": sum(p.expected for p in group),
                "prompt_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "cached": None if all(h is None for h in hits) else sum(h or 0 for h in hits),
                "cached_of": sum(p.calls_max for p, h in zip(group, hits, strict=True) if h is not None),
                "hours": None if wall is None else round(wall, 3),
                "usd": None if usd is None else round(usd, 2),
                "exact": all(p.exact for p in group),
                "backend": f"{spec.backend}:{spec.served_name}",
                "tokens_from": source,
                "hours_from": rate.source,
                "output_tokens_max": sum(p.calls_max * p.budget for p in group),
                "longest_prompt_tokens": max(costs.ceil_tokens(p.prompt_chars, ratio) for p in group),
                "largest_budget": max(p.budget for p in group),
                "usd_no_batch": None if price.plain is None else round(price.plain, 2),
                "usd_batch": None if price.batch is None else round(price.batch, 2),
                "gpu_hours": None if gpu_hours is None else round(gpu_hours, 2),
                "responses": sum(p.responses for p in group),
            }
        )
    responses = _responses(planned)
    per_stage = _sums(rows, "stage")
    per_model = _sums(rows, "model")
    totals = _sums(rows, None)[0] | {
        "responses": responses["total"],
        "responses_main": responses["main"],
        "responses_ablations": responses["total"] - responses["main"],
    }
    used = [specs[m] for m in dict.fromkeys(r["model"] for r in rows)]
    layout = _layout(rows, used, gpus)
    found = [n for s in used for n in needs.model_needs(s, environ)]
    found += needs.machine_needs(cfg, used, cfg.cache_dir)
    if probe:
        found = [n for n in found if n.what != "wiki"] + needs.probe(cfg, used)
    else:
        found += needs.not_probed(cfg, used)
    found += [
        needs.Need("price", s.id, "missing", "no price_in/price_out: its dollars are not counted")
        for s in used
        if not s.is_local and s.extra.get("price_in") is None
    ]
    found += _context_needs(rows, used)
    assumptions = _assumptions(cfg, size, skipped, gpus)
    plan = Plan(
        run=cfg.run,
        params_file=paths.under(cfg.params_file, cfg.root).as_posix(),
        machine=str(gpus),
        rows=rows,
        totals=totals,
        per_stage=per_stage,
        per_model=per_model,
        gpu_layout=layout,
        needs=[asdict(n) for n in found],
        assumptions=assumptions,
    )
    if reported is not None and reported.is_file():
        plan.paper = paper.comparison(cfg, specs, responses, reported)
    return plan


def _responses(planned: Sequence[Part]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for p in planned:
        if p.responses:
            out[p.setting] += p.responses
            out["total"] += p.responses
    out.setdefault("main", 0)
    out.setdefault("total", 0)
    return dict(out)


NUMERIC = (
    "calls_min",
    "calls_max",
    "calls_expected",
    "prompt_tokens",
    "output_tokens",
    "cached",
    "hours",
    "usd",
    "usd_no_batch",
    "usd_batch",
    "gpu_hours",
    "responses",
)


def _sums(rows: Sequence[dict[str, Any]], by: str | None) -> list[dict[str, Any]]:
    """Totals of the numeric columns per ``by`` (None: one row for the run). A column some row
    leaves unknown (None) totals to None where every row is unknown, else to the known sum and
    says so in ``<column>_partial``."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[by] if by else "run"].append(r)
    out = []
    for key, group in groups.items():
        total: dict[str, Any] = {by: key} if by else {}
        for column in NUMERIC:
            values = [r[column] for r in group]
            known = [v for v in values if v is not None]
            total[column] = round(sum(known), 3) if known else None
            if known and len(known) < len(values):
                total[f"{column}_partial"] = True
        total["exact"] = all(r["exact"] for r in group)
        out.append(total)
    return out


def _layout(rows: Sequence[dict[str, Any]], specs: Sequence[ModelSpec], machine: costs.Machine) -> list[dict[str, Any]]:
    """The self-hosted GPU models one after another on ``machine``: GPUs per replica, replicas, hours."""
    wall: dict[str, float] = defaultdict(float)
    for r in rows:
        if r["hours"] is not None:
            wall[r["model"]] += r["hours"]
    return [costs.layout_row(s, machine, wall.get(s.id)) for s in specs if costs.on_gpu(s)]


def _context_needs(rows: Sequence[dict[str, Any]], specs: Sequence[ModelSpec]) -> list[needs.Need]:
    """A vLLM entry whose ``max_model_len`` cannot hold its longest planned prompt plus its budget."""
    longest: dict[str, int] = defaultdict(int)
    for r in rows:
        longest[r["model"]] = max(longest[r["model"]], r["longest_prompt_tokens"])
    out = []
    for s in specs:
        limit = s.extra.get("max_model_len")
        if s.backend != "vllm" or not limit:
            continue
        budget = max((r["largest_budget"] for r in rows if r["model"] == s.id), default=0)
        if longest[s.id] + budget > int(limit):
            out.append(
                needs.Need(
                    "context",
                    s.id,
                    "missing",
                    f"max_model_len {limit} < longest prompt ~{longest[s.id]} + budget {budget} tokens",
                )
            )
    return out


def _assumptions(cfg: RunConfig, size: Any, skipped: Sequence[str], machine: costs.Machine) -> list[str]:
    source = "the run's benchmark" if size.from_benchmark else "the verify targets (the benchmark is not built yet)"
    notes = [
        f"questions: {size.answerable} answerable, {size.unanswerable} unanswerable, from {source}",
        "tokens, hours and dollars at calls_expected (calls_max, judge items asked once); typical output "
        f"tokens per call are declared in planning.part.OUTPUT_TOKENS (+{THINK_TOKENS} with thinking on)",
        f"hours at each entry's declared throughput, else measured from its calls in the cache, else the rules "
        f"of planning.costs on {machine} (vLLM), "
        "the entry's concurrency (hosted) or this CPU (llama.cpp)",
        "cached: looked up for the generator's scenario calls once the corpus exists and the answer stage's "
        "no-RAG calls once the benchmark exists; unknown elsewhere",
    ]
    return notes + list(skipped)


# --- writing and printing -------------------------------------------------------------------------


def write(plan: Plan, folder: Path) -> list[Path]:
    """Write ``plan.csv`` (one row per stage and model) and ``plan.json`` (everything) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in plan.rows:
        writer.writerow({c: ("unknown" if c == "cached" and r[c] is None else r[c]) for c in COLUMNS})
    targets = [folder / "plan.csv", folder / "plan.json"]
    paths.write_text_atomic(targets[0], buffer.getvalue())
    paths.write_text_atomic(targets[1], json.dumps(plan.to_json(), indent=1, sort_keys=False) + "\n")
    return targets
