"""The plan as text (what ``make plan`` prints)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from declinecraft.planning.plan import COLUMNS, Plan


def _fmt(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += [
        "  ".join(v.rjust(w) if i > 1 else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True)))
        for row in cells
    ]
    return "\n".join(lines)


#: The summed columns of the totals per stage and per model (the stage table leaves out the plain
#: price beside the batch one).
_SUMS = ("calls_min", "calls_max", "prompt_tokens", "output_tokens", "hours", "usd", "usd_no_batch")


def render(plan: Plan) -> str:
    """The plan as text: rows, totals per stage and model, the run's totals, layout, needs."""
    cols = (*COLUMNS[: COLUMNS.index("exact") + 1], "tokens_from", "hours_from")
    out = [f"plan of {plan.params_file} (run {plan.run}); nothing was sent", "", _table(plan.rows, cols)]
    out += [
        "",
        "per stage:",
        _table(plan.per_stage, ("stage", *_SUMS[:6], "usd_batch", "gpu_hours")),
    ]
    out += ["", "per model:", _table(plan.per_model, ("model", *_SUMS, "usd_batch", "gpu_hours"))]
    t = plan.totals
    out += [
        "",
        f"run: {_fmt(t['calls_min'])}-{_fmt(t['calls_max'])} calls, {_fmt(t['prompt_tokens'])} prompt and "
        f"{_fmt(t['output_tokens'])} output tokens, {_fmt(t['responses'])} responses "
        f"({_fmt(t['responses_main'])} main grid, {_fmt(t['responses_ablations'])} ablations); "
        f"{_fmt(t['hours'])} hours one model after another, {_fmt(t['gpu_hours'])} GPU-hours on {plan.machine}; "
        f"hosted ${_fmt(t['usd_no_batch'])} without batch, ${_fmt(t['usd_batch'])} with batch",
    ]
    if plan.gpu_layout:
        out += ["", f"GPU layout on {plan.machine} (one model at a time, replicas of tensor_parallel_size GPUs):"]
        out += [
            _table(
                plan.gpu_layout,
                (
                    "model",
                    "weights_gb",
                    "tensor_parallel_size",
                    "replicas",
                    "fits",
                    "hours",
                    "gpu_hours",
                    "max_model_len",
                ),
            )
        ]
    if plan.paper:
        out += [
            "",
            "responses against params/paper_reported.yaml:",
            _table(plan.paper, ("part", "plan", "paper", "difference", "within_5pct", "why")),
        ]
    lacking = [n for n in plan.needs if n["status"] != "present"]
    out += ["", f"needs ({len(lacking)} of {len(plan.needs)} not present here):"]
    out += [f"  {n['status']:<12} {n['what']:<9} {n['item']}  {n['detail']}" for n in lacking] or [
        "  everything is present"
    ]
    out += ["", "assumptions:"] + [f"  - {a}" for a in plan.assumptions]
    return "\n".join(out)
