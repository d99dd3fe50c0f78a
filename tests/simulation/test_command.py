"""``make simulate`` at a small scale, end to end: the paper's whole design on the simulated cluster.

One cold run of ``python -m declinecraft.simulation --scale 20`` (50 questions, every model,
condition, ablation, judge and view of params/paper.yaml) in a copy of the project, with the
checks: the calls each endpoint answered lie within the plan's bounds, every model under test
was in flight at once, no process the run started grew past its share of the 4 GB bound, the
explorer's question files are written, and every page, figure and explorer page says SIMULATED.
"""

from __future__ import annotations

import csv
import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import faults

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]
SCALE = 20
RUN = f"simulate-s{SCALE}"
#: Peak resident memory of any one process of the run (the embedder-free run stays far below).
MEMORY_BOUND_MB = 4096


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str], int]:
    """The project copy, the command's result and the peak resident memory (MB) of its processes."""
    root = faults.copy_tree(tmp_path_factory.mktemp("simulate"))
    env = faults.make_env(root / "unused-cache")
    env["PYTHONPATH"] = str(root / "src")
    done = subprocess.run(
        ["nice", sys.executable, "-m", "declinecraft.simulation", "--scale", str(SCALE)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=3500,
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    return root, done, peak


def test_calls_equal_the_plan(simulated: tuple[Path, subprocess.CompletedProcess[str], int]) -> None:
    """The run succeeds; each model's answered calls lie within the plan's bounds (equal where exact)."""
    root, done, _ = simulated
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    report = json.loads((root / "outputs" / RUN / "simulation" / "report.json").read_text())
    assert report["calls_within_plan"], [r for r in report["models"] if not r["ok"]]
    assert report["plan_min"] <= report["sent"] <= report["plan_max"] and report["errors_injected"] > 0


def test_every_endpoint_busy_at_once(simulated: tuple[Path, subprocess.CompletedProcess[str], int]) -> None:
    """The endpoints recorded one moment with a request in flight on every model under test."""
    report = json.loads((simulated[0] / "outputs" / RUN / "simulation" / "report.json").read_text())
    assert report["endpoints_busy_at_once"] >= report["models_under_test"] == 24


def test_memory_within_bound(simulated: tuple[Path, subprocess.CompletedProcess[str], int]) -> None:
    """No process of the run grew past the 4 GB bound."""
    assert simulated[2] < MEMORY_BOUND_MB, simulated[2]


def test_explorer_and_stamp(simulated: tuple[Path, subprocess.CompletedProcess[str], int]) -> None:
    """The explorer's question files are written and its page says SIMULATED; so does every PDF page."""
    root = simulated[0] / "outputs" / RUN
    benchmark = (root / "04_verify" / "benchmark.jsonl").read_text().splitlines()
    assert len(list((root / "explorer" / "questions").glob("*.js"))) == len(benchmark) == 50
    assert "SIMULATED" in (root / "explorer" / "index.html").read_text()
    pdf = root / "paper" / "main.pdf"
    if shutil.which("pdftotext") and pdf.is_file():
        pages = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout.split("\f")
        assert all("SIMULATED" in page for page in pages if page.strip())
    figures = sorted((root / "figures").glob("*.pdf"))
    assert figures and all(b"SIMULATED" in f.read_bytes() or _pdf_says(f) for f in figures)


def _pdf_says(pdf: Path) -> bool:
    if not shutil.which("pdftotext"):
        return True
    return "SIMULATED" in subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout


def test_pdf_checks_pass(simulated: tuple[Path, subprocess.CompletedProcess[str], int]) -> None:
    """The PDF of 24 models passes the figure and page checks: no figure problem, no page problem
    (the run health's hundreds of rows summed in the body and whole in the appendix)."""
    stage = simulated[0] / "outputs" / RUN / "10_paper"
    with (stage / "figure_checks.csv").open(newline="") as checks:
        assert [(r["name"], r["problems"]) for r in csv.DictReader(checks) if r["problems"]] == []
    with (stage / "page_checks.csv").open(newline="") as checks:
        assert [r["problem"] for r in csv.DictReader(checks)] == []
    assert (simulated[0] / "outputs" / RUN / "paper" / "tables" / "run_health_models.tex").is_file()
