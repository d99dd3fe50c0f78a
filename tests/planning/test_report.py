"""Tests for declinecraft.planning.report: the plan as ``make plan`` prints it."""

from __future__ import annotations

from declinecraft.planning import report
from declinecraft.planning.plan import Plan

TOTALS = {
    "calls_min": 10,
    "calls_max": 1234,
    "prompt_tokens": 5_000_000,
    "output_tokens": 20_000,
    "responses": 42,
    "responses_main": 40,
    "responses_ablations": 2,
    "hours": 1.5,
    "gpu_hours": 0.0,
    "usd_no_batch": 3.0,
    "usd_batch": 1.5,
}


def a_plan(needs: list[dict[str, str]]) -> Plan:
    row = {"stage": "05_answer", "model": "m", "calls_min": 10, "calls_max": 1234, "cached": None, "exact": False}
    return Plan(
        run="default",
        params_file="params/default.yaml",
        machine="8xH100-80GB",
        rows=[row],
        totals=TOTALS,
        per_stage=[{"stage": "05_answer", "calls_min": 10}],
        per_model=[{"model": "m", "calls_min": 10}],
        gpu_layout=[],
        needs=needs,
        assumptions=["questions: the verify targets"],
    )


class TestRender:
    def test_sections_and_numbers(self) -> None:
        """The header says nothing was sent; numbers get thousands separators, None reads "unknown"
        and booleans yes/no; the run's totals and the assumptions follow; no GPU layout without one."""
        text = report.render(a_plan([]))
        lines = text.splitlines()
        assert lines[0] == "plan of params/default.yaml (run default); nothing was sent"
        row = next(line for line in lines if line.startswith("05_answer  m"))
        assert "1,234" in row and "unknown" in row and " no" in row
        assert "run: 10-1,234 calls, 5,000,000 prompt and 20,000 output tokens, 42 responses" in text
        assert "hosted $3.00 without batch, $1.50 with batch" in text and "GPU layout" not in text
        assert text.endswith("assumptions:\n  - questions: the verify targets")

    def test_needs(self) -> None:
        """Needs not present are listed with their status; when all are present it says so."""
        present = {"what": "data", "item": "wiki.xml", "status": "present", "detail": ""}
        missing = {"what": "api key", "item": "X_KEY", "status": "missing", "detail": "for m"}
        assert "everything is present" in report.render(a_plan([present]))
        text = report.render(a_plan([present, missing]))
        assert "needs (1 of 2 not present here):" in text and "missing      api key   X_KEY  for m" in text
