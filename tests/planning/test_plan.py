"""Tests for declinecraft.planning.plan: ``make plan`` counts, writes and sends nothing."""

from __future__ import annotations

import csv
import json
import socket
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.construction import generate_stage
from declinecraft.core import config
from declinecraft.evaluation import answer_stage
from declinecraft.planning import plan, report
from declinecraft.runtime import replay
from tests.support import answering, fake_openai, faults, projects


@pytest.fixture()
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket connection is refused (a plan must send nothing)."""

    def refuse(self: socket.socket, *args: object) -> None:
        raise OSError("a plan must not connect")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


@pytest.fixture(scope="module")
def paper_plan() -> plan.Plan:
    """The plan of params/paper.yaml, with the paper's reported numbers beside it."""
    cfg = config.load(projects.REPO / "params" / "paper.yaml")
    return plan.build(cfg, environ={}, reported=projects.REPO / "params" / "paper_reported.yaml")


class TestBuild:
    def test_sends_nothing(self, no_sockets: None, tmp_path: Path) -> None:
        """paper.yaml is planned with every socket refused, and its endpoints and wiki are 'not checked'."""
        cfg = config.load(projects.REPO / "params" / "paper.yaml")
        built = plan.build(cfg, environ={})
        unchecked = {n["what"] for n in built.needs if n["status"] == "not checked"}
        assert {"endpoint", "wiki"} <= unchecked
        assert {"api key", "gpu"} <= {n["what"] for n in built.needs if n["status"] == "missing"}
        assert plan.write(built, tmp_path) and "nothing was sent" in report.render(built)

    def test_paper_responses(self, paper_plan: plan.Plan) -> None:
        """paper.yaml answers 37 configurations x 3 conditions x 1,000 questions on the main grid and
        the ablations on their own subsets: 11 + 3 x 8 + 5 x 12 + 10 models x 1,000."""
        t = paper_plan.totals
        assert (t["responses_main"], t["responses_ablations"]) == (111_000, 105_000)

    def test_paper_differences_named(self, paper_plan: plan.Plan) -> None:
        """Each part of the response totals is within 5 % of the paper's or says why not."""
        parts = {r["part"]: r for r in paper_plan.paper}
        assert all(r["within_5pct"] or r["why"] for r in paper_plan.paper)
        assert parts["k=10 (App. A.2)"]["within_5pct"] and parts["no scenario (App. A.4)"]["within_5pct"]
        assert "second run" in parts["pipelines (App. A.3)"]["why"]

    def test_rows(self, paper_plan: plan.Plan) -> None:
        """Rows carry the issue's columns; the oracle's one call per question is exact; hosted rows
        are priced, with batch at half the plain price."""
        assert set(plan.COLUMNS[:9]) <= set(paper_plan.rows[0])
        oracle = next(r for r in paper_plan.rows if r["model"] == "deepseek-v4.1-flash")
        assert (oracle["calls_min"], oracle["exact"]) == (1000, True)
        gpt = next(r for r in paper_plan.rows if r["model"] == "gpt-4.1" and r["stage"] == "05_answer")
        assert gpt["usd_batch"] == pytest.approx(gpt["usd_no_batch"] / 2, abs=0.02) and gpt["usd"] > 0

    def test_layout(self, paper_plan: plan.Plan) -> None:
        """Every self-hosted model fits the declared 8 x 80 GB machine, the 235B on 4 GPUs a replica."""
        layout = {r["model"]: r for r in paper_plan.gpu_layout}
        assert all(r["fits"] for r in layout.values())
        assert (layout["qwen3-235b-a22b"]["tensor_parallel_size"], layout["qwen3-235b-a22b"]["replicas"]) == (4, 2)
        assert not [n for n in paper_plan.needs if n["what"] == "context"]

    def test_writes(self, paper_plan: plan.Plan, tmp_path: Path) -> None:
        """plan.csv has one row per stage and model; plan.json the totals with responses."""
        plan.write(paper_plan, tmp_path)
        with open(tmp_path / "plan.csv", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        assert len(rows) == len(paper_plan.rows) and rows[0]["cached"] == "unknown"
        assert json.loads((tmp_path / "plan.json").read_text())["totals"]["responses"] == 216_000

    def test_bad_machine(self) -> None:
        """A machine not written <n>x<name>-<memory>GB is refused, naming it."""
        cfg = config.load(projects.REPO / "params" / "default.yaml")
        with pytest.raises(ValueError, match="--gpus '8 H100'"):
            plan.build(cfg, machine="8 H100")


@pytest.fixture(scope="module")
def scripted() -> Iterator[fake_openai.FakeServer]:
    """The fake hosted API answering as every role (tests/support/fake_model.py)."""
    handle = fake_openai.start(latency=0.0, respond="tests.support.fake_model:reply")
    yield handle
    handle.stop()


RUN = """\
base: default
models_file: params/models_scripted.yaml
generate: {generator: scripted-judge}
verify: {verifier: scripted-judge}
answer: {models: [scripted-under-test], rewriter: scripted-judge, k: 2, max_rounds: 2, k_sweep: [1, 2],
  pipelines: [hybrid, bm25], no_scenario: true, ablation_models: {bm25: []}}
judge: {response_judge: scripted-judge, oracle: scripted-judge, accuracy_judges: [scripted-judge]}
know2guess: {enabled: false}
evidence: {enabled: false}
"""


class TestLedger:
    def test_answer_stage_bracketed(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: fake_openai.FakeServer
    ) -> None:
        """A built answer stage's ledger (its distinct lookups per model) lies within the plan's
        bounds, and equals them where the plan says exact; a second plan finds its no-RAG calls cached."""
        root = projects.copy_project(tmp_path / "p")
        (root / "params" / "models_scripted.yaml").write_text(faults.scripted_models(scripted.base_url))
        (root / "params" / "t.yaml").write_text(RUN)
        ledger = tmp_path / "calls" / "05_answer.tsv"
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("OPENROUTER_API_KEY", "test-key")
        cfg = config.load(root / "params" / "t.yaml")
        projects.write_benchmark(cfg, answering.benchmark(2, 1))
        before = plan.build(cfg, environ={})
        monkeypatch.setenv(replay.LEDGER_ENV, str(ledger))
        answer_stage.run(cfg, search=answering.FakeSearch(), lookup=answering.lookup)
        monkeypatch.delenv(replay.LEDGER_ENV)
        seen: dict[str, set[str]] = defaultdict(set)
        for kind, keys in replay.ledger_read(ledger).items():
            for endpoint, key in keys:
                seen[endpoint].add(key) if kind == "llm" else None
        rows = {r["backend"]: r for r in before.rows if r["stage"] == "05_answer"}
        assert set(rows) == set(seen)
        for endpoint, row in rows.items():
            assert row["calls_min"] <= len(seen[endpoint]) <= row["calls_max"], (endpoint, row)
            assert not row["exact"] or len(seen[endpoint]) == row["calls_min"]
        after = next(r for r in plan.build(cfg, environ={}).rows if r["model"] == "scripted-under-test")
        assert after["cached"] == after["cached_of"] == 3 and before.rows[0]["cached"] in (0, None)

    def test_generator_scenarios_replayed(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: fake_openai.FakeServer
    ) -> None:
        """With the corpus on disk the plan replays the generator's scenario draws: the count is
        exact (14 candidates over 6 chunks draw some sets twice) and matches the stage's ledger,
        and after the stage the plan finds every scenario call cached."""
        root = projects.copy_project(tmp_path / "p")
        (root / "params" / "models_scripted.yaml").write_text(faults.scripted_models(scripted.base_url))
        (root / "params" / "t.yaml").write_text(RUN)
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("OPENROUTER_API_KEY", "test-key")
        cfg = config.load(root / "params" / "t.yaml")
        projects.write_corpus(cfg, {f"c{i}": f"[Page: Page {i}]\nChunk {i} says something." for i in range(1, 7)})
        row = next(r for r in plan.build(cfg, environ={}).rows if r["stage"] == "03_generate")
        ledger = tmp_path / "calls" / "03_generate.tsv"
        monkeypatch.setenv(replay.LEDGER_ENV, str(ledger))
        pre = ["c1", "c2", "c3", "c4"]
        generate_stage.run(
            cfg, search=lambda queries, where, k: [(pre if where == "pre" else ["post1"])[:k]] * len(queries)
        )
        monkeypatch.delenv(replay.LEDGER_ENV)
        looked_up = {key for _, key in replay.ledger_read(ledger)["llm"]}
        scenarios = next(r for r in plan.build(cfg, environ={}).rows if r["stage"] == "03_generate")
        assert row["calls_min"] <= len(looked_up) <= row["calls_max"]
        assert scenarios["cached"] == scenarios["cached_of"] == row["calls_min"] < 14


@pytest.mark.slow
class TestScriptedRun:
    def test_every_stage_bracketed(self, scripted_run: faults.ScriptedRun, monkeypatch: pytest.MonkeyPatch) -> None:
        """On the session's whole scripted run (tests/conftest.py), every stage ledger's distinct
        lookups per model lie within the plan's bounds, exactly where the plan says exact."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(scripted_run.cache))
        cfg = config.load(scripted_run.root / faults.SCRIPTED_PARAMS_FILE)
        built = plan.build(cfg, environ={})
        seen: dict[tuple[str, str], set[str]] = defaultdict(set)
        for ledger in sorted((cfg.run_dir() / "calls").glob("*.tsv")):
            for endpoint, key in replay.ledger_read(ledger)["llm"]:
                seen[(ledger.stem, endpoint)].add(key)
        rows = {(r["stage"], r["backend"]): r for r in built.rows}
        assert set(seen) <= set(rows), sorted(set(seen) - set(rows))
        for where, row in rows.items():
            n = len(seen.get(where, ()))
            assert row["calls_min"] <= n <= row["calls_max"], (where, n, row)
            assert not row["exact"] or n == row["calls_min"], (where, n, row)
