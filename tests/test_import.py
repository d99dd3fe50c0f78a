"""Tests for declinecraft.construction.release and .imported: reading, checking, exporting and
importing a released benchmark, and evaluating an imported run from the LLM cache alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from tests.support.projects import copy_project, make_project, write_corpus

from declinecraft.construction import imported, release
from declinecraft.construction.verify import BENCHMARK_COLUMNS
from declinecraft.core import config
from declinecraft.evaluation import answer_stage, judge_stage
from test_answer import FakeSearch

TEXTS = {
    "c1": "[Page: Page 1]\nPage 1 says the blaze drops blaze rods and glows.",
    "c2": "[Page: Page 2]\nPage 2 says the creeper explodes near players.",
}


def minimal_rows() -> list[dict[str, Any]]:
    """Three minimal-schema questions: two answerable (C_pre pages), one unanswerable (C_post)."""
    return [
        {
            "id": "q1",
            "answerable": True,
            "scenario": "I am in the Nether.",
            "question": "What does the blaze drop?",
            "fact": "The blaze drops blaze rods.",
            "target_page": "Page 1",
        },
        {
            "id": "q2",
            "answerable": True,
            "scenario": "I hear a hiss.",
            "question": "What does the creeper do?",
            "fact": "The creeper explodes.",
            "target_page": "Page 2",
        },
        {
            "id": "q3",
            "answerable": False,
            "scenario": "I see a glow.",
            "question": "Does the new mob glow?",
            "fact": "The new mob glows.",
            "target_page": "New Mob",
        },
    ]


def write_lines(path: Path, records: list[Any]) -> Path:
    """A JSONL file of ``records`` (strings are written as they are)."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def tiny_project(tmp: Path, models: dict[str, Any] | None = None) -> Path:
    """A project with run ``default``'s corpus (pages Page 1, Page 2; C_post New Mob) and an index
    marker; with ``models``, a run ``orig`` that evaluates them (views off, small budgets)."""
    root = copy_project(tmp / "project")
    cfg = config.load(root / "params" / "default.yaml")
    write_corpus(cfg, TEXTS)
    cfg.stage_dir("index").mkdir(parents=True)
    (cfg.stage_dir("index") / "manifest.json").write_text("{}")
    if models is not None:
        (root / "params" / "fake_models.yaml").write_text(yaml.safe_dump({"models": models}))
        (root / "params" / "orig.yaml").write_text(
            yaml.safe_dump(
                {
                    "base": "default",
                    "models_file": "params/fake_models.yaml",
                    "answer": {
                        "models": [m for m in models if m != "judge"],
                        "conditions": ["no_rag", "single"],
                        "k": 2,
                        "max_tokens": 32,
                        "limit_questions": 0,
                        "context_chars": 200,
                    },
                    "judge": {
                        "response_judge": "judge",
                        "oracle": "judge",
                        "accuracy_judges": ["judge"],
                        "max_tokens": 8,
                        "oracle_max_tokens": 16,
                        "oracle_page_chars": 200,
                        "oracle_chunk_chars": 100,
                    },
                    "know2guess": {"enabled": False},
                    "evidence": {"enabled": False},
                }
            )
        )
    return root


def fake_model(base_url: str, served: str) -> dict[str, Any]:
    """A registry entry for a model of the fake OpenAI-compatible server."""
    return {"backend": "openai", "served_name": served, "base_url": base_url, "roles": ["under_test"]}


def evaluate(cfg: config.RunConfig) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Stages 05 and 06 of ``cfg`` through the real model pool and LLM cache (retrieval faked)."""
    lookup = judge_stage.chunk_lookup(cfg)
    answered = answer_stage.run(cfg, search=FakeSearch(default=("c1", "c2")), lookup=lookup)
    judged = judge_stage.run(cfg, lookup=lookup)
    return answered.responses, judged.judged


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A tiny project with run default's corpus built."""
    return tiny_project(tmp_path)


class TestReadRelease:
    def test_minimal(self, tmp_path: Path) -> None:
        """A minimal file is read as such, with its line numbers and without metadata."""
        got = release.read_release(write_lines(tmp_path / "b.jsonl", ["", *minimal_rows()]))
        assert got.schema == "minimal" and got.meta == {} and [n for n, _ in got.rows] == [2, 3, 4]

    def test_meta(self, tmp_path: Path) -> None:
        """A first ``_meta`` line is the metadata, not a question."""
        got = release.read_release(
            write_lines(tmp_path / "b.jsonl", [{"_meta": {"corpus": "default"}}, *minimal_rows()])
        )
        assert got.meta == {"corpus": "default"} and len(got.rows) == 3

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("{not json", r"b\.jsonl:2: not valid JSON"),
            ({"_meta": {}}, r"b\.jsonl:2: a \{\"_meta\""),
            ("[1, 2]", r"b\.jsonl:2: expected a JSON object, got list"),
        ],
    )
    def test_bad_line(self, tmp_path: Path, line: Any, message: str) -> None:
        """Invalid JSON, a late _meta line and a non-object are errors naming the line."""
        rows = minimal_rows()
        with pytest.raises(release.ReleaseError, match=message):
            release.read_release(write_lines(tmp_path / "b.jsonl", [rows[0], line, rows[1]]))

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"answerable": "yes"}, r":2: answerable: 'yes' is not of type 'boolean'"),
            ({"fact": None}, r":2: fact: None is not of type 'string'"),
            ({"colour": "red"}, r":2: Additional properties are not allowed \('colour' was unexpected\)"),
            ({"scenario_chunk_ids": "c1"}, r":2: scenario_chunk_ids: 'c1' is not of type 'array'"),
        ],
    )
    def test_field_types(self, tmp_path: Path, change: dict[str, Any], message: str) -> None:
        """A wrong type or an unknown field is an error naming the line and the field."""
        rows = minimal_rows()
        rows[1].update(change)
        with pytest.raises(release.ReleaseError, match=message):
            release.read_release(write_lines(tmp_path / "b.jsonl", rows))

    def test_missing_field(self, tmp_path: Path) -> None:
        """A missing field names the line; every failing line is listed, not only the first."""
        rows = minimal_rows()
        del rows[0]["fact"], rows[2]["target_page"]
        with pytest.raises(
            release.ReleaseError, match=r"(?s):1: 'fact' is a required.*:3: 'target_page' is a required"
        ):
            release.read_release(write_lines(tmp_path / "b.jsonl", rows))

    def test_empty_file(self, tmp_path: Path) -> None:
        """A file without a question is an error."""
        with pytest.raises(release.ReleaseError, match="no question in the file"):
            release.read_release(write_lines(tmp_path / "b.jsonl", [{"_meta": {}}]))


class TestCheckRows:
    def check(self, root: Path, rows: list[dict[str, Any]]) -> None:
        cfg = config.load(root / "params" / "default.yaml")
        release.check_rows(release.read_release(write_lines(root / "b.jsonl", rows)), release.corpus_of(cfg))

    def test_valid(self, root: Path) -> None:
        """The three minimal questions pass."""
        self.check(root, minimal_rows())

    @pytest.mark.parametrize(
        ("index", "change", "message"),
        [
            (2, {"id": "q1"}, r"b\.jsonl:3: id 'q1' repeats line 1"),
            (0, {"question": "   "}, r"b\.jsonl:1: question: empty"),
            (
                0,
                {"target_page": "page 1"},
                r":1: target page 'page 1' is not a C_pre page of the corpus \(did you mean 'Page 1'\?\)",
            ),
            (
                1,
                {"target_page": "New Mob"},
                r":2: target page 'New Mob' is a C_post page, but the question is answerable",
            ),
            (
                2,
                {"target_page": "Page 2"},
                r":3: target page 'Page 2' is a C_pre page, but the question is unanswerable",
            ),
            (0, {"target_chunk_id": "c2"}, r":1: target_chunk_id 'c2' is not a chunk of C_pre page 'Page 1'"),
            (0, {"scenario_chunk_ids": ["c2", "post1"]}, r":1: scenario_chunk_ids: 'post1' is not a C_pre chunk"),
        ],
    )
    def test_errors(self, root: Path, index: int, change: dict[str, Any], message: str) -> None:
        """Duplicate ids, empty texts, unknown or wrong-half target pages and foreign chunks name the line."""
        rows = minimal_rows()
        rows[index].update(change)
        with pytest.raises(release.ReleaseError, match=message):
            self.check(root, rows)


class TestMatchChunk:
    def test_most_shared_words(self) -> None:
        """The chunk sharing the most words with the fact wins; a tie goes to the first."""
        chunks = pl.DataFrame(
            {
                "chunk_id": ["p#0", "p#1", "p#2"],
                "text": ["The mob spawns at night.", "Blaze rods come from blazes.", "rods blaze"],
            }
        )
        assert release.match_chunk("The blaze drops blaze rods", chunks) == "p#1"
        assert release.match_chunk("nothing in common", chunks) == "p#0"


class TestToBenchmark:
    def test_minimal(self, root: Path) -> None:
        """A minimal release gets every benchmark column, the full question text and matched target chunks."""
        cfg = config.load(root / "params" / "default.yaml")
        found = release.read_release(write_lines(root / "b.jsonl", [minimal_rows()[2], *minimal_rows()[:2]]))
        bench = release.to_benchmark(found, release.corpus_of(cfg))
        assert bench.columns == list(BENCHMARK_COLUMNS)
        assert bench["id"].to_list() == ["q1", "q2", "q3"]  # answerable first
        assert bench["target_chunk_id"].to_list() == ["c1", "c2", "post1"]
        assert bench["question"][0] == "I am in the Nether. What does the blaze drop?"
        assert bench["target_url"][0] == "http://wiki/c1" and bench["scenario_chunk_ids"][0].to_list() == []


class TestImportBenchmark:
    def test_minimal_run(self, root: Path) -> None:
        """Importing writes a run that reads 01-02 from the corpus run and owns 03-04, whose
        executed notebooks record the import, plus the Make rules that never run them."""
        source = write_lines(root / "b.jsonl", minimal_rows())
        done = imported.import_benchmark(source, "mine", root=root, corpus="default")
        cfg = config.load(done.params_file)
        assert [cfg.owner(s) for s in ("corpus", "index", "generate", "verify", "answer")] == [
            "default",
            "default",
            "mine",
            "mine",
            "mine",
        ]
        assert cfg.generate.n_answerable == 0 and (cfg.verify.target_answerable, cfg.verify.target_unanswerable) == (
            2,
            1,
        )
        bench = pl.read_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        assert bench.equals(done.benchmark) and done.matched_targets == 3
        record = json.loads((cfg.stage_dir("verify") / "import.json").read_text())
        assert record["schema"] == "minimal" and record["corpus_run"] == "default"
        for stem in imported.IMPORTED_STAGES:
            assert "imported by `make import`" in (cfg.run_dir() / "executed" / f"{stem}.ipynb").read_text()
        rules = (cfg.run_dir() / "params" / "imported.mk").read_text()
        assert "outputs/mine/executed/03_generate.ipynb outputs/mine/executed/04_verify.ipynb:\n\t@echo" in rules

    def test_corpus_needed(self, root: Path) -> None:
        """Without _meta.corpus and without CORPUS= the import says what to give."""
        with pytest.raises(release.ReleaseError, match="give CORPUS=<run>"):
            imported.import_benchmark(write_lines(root / "b.jsonl", minimal_rows()), "mine", root=root)

    def test_unbuilt_corpus(self, root: Path) -> None:
        """A corpus run whose index is not built is named, with the command that builds it."""
        shutil.rmtree(root / "outputs" / "default" / "02_index")
        with pytest.raises(release.ReleaseError, match="make nb NB=02 PARAMS=params/default.yaml"):
            imported.import_benchmark(
                write_lines(root / "b.jsonl", minimal_rows()), "mine", root=root, corpus="default"
            )

    def test_other_corpus(self, root: Path) -> None:
        """A file whose _meta fingerprint is another corpus's is refused."""
        rows = [{"_meta": {"corpus": "default", "corpus_fingerprint": "0000"}}, *minimal_rows()]
        with pytest.raises(release.ReleaseError, match=r"b\.jsonl:1: _meta.corpus_fingerprint is '0000'"):
            imported.import_benchmark(write_lines(root / "b.jsonl", rows), "mine", root=root)

    def test_keeps_hand_written_params(self, root: Path) -> None:
        """A params file not written by `make import` is never replaced; a generated one is."""
        source = write_lines(root / "b.jsonl", minimal_rows())
        (root / "params" / "hand.yaml").write_text("base: default\n")
        with pytest.raises(release.ReleaseError, match="hand.yaml exists and was not written by `make import`"):
            imported.import_benchmark(source, "hand", root=root, corpus="default")
        imported.import_benchmark(source, "mine", root=root, corpus="default")
        imported.import_benchmark(source, "mine", root=root, corpus="default")  # re-import replaces it


class TestOnePass:
    def test_every_error_at_once(self, root: Path) -> None:
        """Schema errors, a repeated id and targets in the wrong half: all in one error, one pass."""
        rows = minimal_rows()
        rows[0]["answerable"] = "yes"
        rows[1]["colour"] = "red"
        rows[2]["target_page"] = "Page 2"
        rows.append({**minimal_rows()[1], "id": "q1", "target_page": "New Mob"})
        with pytest.raises(release.ReleaseError) as info:
            imported.import_benchmark(write_lines(root / "b.jsonl", rows), "mine", root=root, corpus="default")
        lines = str(info.value).splitlines()[1:]
        assert [line.split(": ", 1)[1] for line in lines] == [
            "answerable: 'yes' is not of type 'boolean' (minimal schema)",
            "Additional properties are not allowed ('colour' was unexpected) (minimal schema)",
            "target page 'Page 2' is a C_pre page, but the question is unanswerable (its page must be in C_post)",
            "id 'q1' repeats line 1",
            "target page 'New Mob' is a C_post page, but the question is answerable (its page must be in C_pre)",
        ]
        assert [line.split(": ", 1)[0].rsplit(":", 1)[1] for line in lines] == ["1", "2", "3", "4", "4"]
        assert not (root / "params" / "mine.yaml").exists()


class TestLimits:
    def test_field_length(self, tmp_path: Path) -> None:
        """A 5 MB scenario is refused with its size, and the message does not echo it."""
        rows = minimal_rows()
        rows[1]["scenario"] = "I dig. " * 750_000
        with pytest.raises(
            release.ReleaseError, match=r":2: scenario: 5,250,000 characters, more than the 2,000 allowed"
        ) as info:
            release.read_release(write_lines(tmp_path / "b.jsonl", rows))
        assert len(str(info.value)) < 500

    def test_prompt_size(self, root: Path) -> None:
        """A question whose scenario and question take more than a quarter of the smallest context
        window of the run's models (4,096 tokens here) is refused, naming the model."""
        rows = minimal_rows()
        rows[0]["scenario"] = "I walk. " * 240
        rows[0]["question"] = "Why? " * 300
        with pytest.raises(
            release.ReleaseError,
            match=r"b\.jsonl:1: scenario and question take about 1,141 tokens, "
            r"more than 25% of the 4,096-token context window of model '[^']+' \(1,024",
        ):
            imported.import_benchmark(write_lines(root / "b.jsonl", rows), "mine", root=root, corpus="default")


class TestRoundTrip:
    def test_export_import_evaluate(self, tmp_path: Path, server, monkeypatch) -> None:  # noqa: ANN001
        """Export, import and evaluate give the original run's benchmark, responses and judgements,
        all from the LLM cache: the imported run sends no call."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
        root = tiny_project(
            tmp_path, {"old": fake_model(server.base_url, "old"), "judge": fake_model(server.base_url, "judge")}
        )
        orig = config.load(root / "params" / "orig.yaml")
        corpus = release.corpus_of(orig)
        bench = release.to_benchmark(release.read_release(write_lines(root / "b.jsonl", minimal_rows())), corpus)
        orig.stage_dir("verify").mkdir(parents=True)
        bench.write_parquet(orig.stage_dir("verify") / "benchmark.parquet")
        want = evaluate(orig)
        assert server.stats()["requests"] > 0 and want[1].height == want[0].height > 0
        release.export_benchmark(orig, root / "release.jsonl")
        meta = release.read_release(root / "release.jsonl").meta
        assert meta["corpus"] == "default" and meta["exported_from"] == "orig" and meta["n_answerable"] == 2
        server.reset()
        done = imported.import_benchmark(root / "release.jsonl", "again", root=root, corpus="orig")
        again = config.load(done.params_file)
        assert again.stage_dir("verify") != orig.stage_dir("verify") and done.benchmark.equals(bench)
        got = evaluate(again)
        assert server.stats()["requests"] == 0
        assert got[0].equals(want[0]) and got[1].equals(want[1])


@pytest.mark.slow
def test_make_never_runs_03_04(tmp_path: Path) -> None:
    """`make all` of an imported run plans stages 05-10 of its own and neither its nor the corpus
    run's 03-04; `make nb NB=04` on it is refused."""
    root = make_project(tmp_path / "make")
    cfg = config.load(root / "params" / "default.yaml")
    write_corpus(cfg, TEXTS)
    cfg.stage_dir("index").mkdir(parents=True)
    (cfg.stage_dir("index") / "manifest.json").write_text("{}")
    imported.import_benchmark(write_lines(root / "b.jsonl", minimal_rows()), "mine", root=root, corpus="default")
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "MAKEFLAGS": ""}
    plan = subprocess.run(
        ["make", "-n", "pipeline", "RUN=mine", f"PY={sys.executable}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert plan.returncode == 0, plan.stderr[-2000:]
    stages = [line.split("] ")[1].strip('"') for line in plan.stdout.splitlines() if line.startswith('echo ">> [')]
    assert [s for s in stages if s[:2] in {"03", "04"}] == []
    assert {"05_answer", "06_judge", "07_analysis", "08_paper"} <= set(stages)
    refused = subprocess.run(
        ["make", "nb", "NB=04", "RUN=mine", f"PY={sys.executable}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert refused.returncode != 0 and "imports its benchmark" in refused.stderr
