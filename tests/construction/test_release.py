"""Tests for declinecraft.construction.release: reading, checking and exporting a released benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from declinecraft.construction import imported, release
from declinecraft.construction.verify import BENCHMARK_COLUMNS
from declinecraft.core import config
from tests.support import releases


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A tiny project with run default's corpus built."""
    return releases.tiny_project(tmp_path)


class TestReadRelease:
    def test_minimal(self, tmp_path: Path) -> None:
        """A minimal file is read as such, with its line numbers and without metadata."""
        got = release.read_release(releases.write_lines(tmp_path / "b.jsonl", ["", *releases.minimal_rows()]))
        assert got.schema == "minimal" and got.meta == {} and [n for n, _ in got.rows] == [2, 3, 4]

    def test_meta(self, tmp_path: Path) -> None:
        """A first ``_meta`` line is the metadata, not a question."""
        got = release.read_release(
            releases.write_lines(tmp_path / "b.jsonl", [{"_meta": {"corpus": "default"}}, *releases.minimal_rows()])
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
        rows = releases.minimal_rows()
        with pytest.raises(release.ReleaseError, match=message):
            release.read_release(releases.write_lines(tmp_path / "b.jsonl", [rows[0], line, rows[1]]))

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
        rows = releases.minimal_rows()
        rows[1].update(change)
        with pytest.raises(release.ReleaseError, match=message):
            release.read_release(releases.write_lines(tmp_path / "b.jsonl", rows))

    def test_missing_field(self, tmp_path: Path) -> None:
        """A missing field names the line; every failing line is listed, not only the first."""
        rows = releases.minimal_rows()
        del rows[0]["fact"], rows[2]["target_page"]
        with pytest.raises(
            release.ReleaseError, match=r"(?s):1: 'fact' is a required.*:3: 'target_page' is a required"
        ):
            release.read_release(releases.write_lines(tmp_path / "b.jsonl", rows))

    def test_empty_file(self, tmp_path: Path) -> None:
        """A file without a question is an error."""
        with pytest.raises(release.ReleaseError, match="no question in the file"):
            release.read_release(releases.write_lines(tmp_path / "b.jsonl", [{"_meta": {}}]))


class TestCheckRows:
    def check(self, root: Path, rows: list[dict[str, Any]]) -> None:
        cfg = config.load(root / "params" / "default.yaml")
        release.check_rows(release.read_release(releases.write_lines(root / "b.jsonl", rows)), release.corpus_of(cfg))

    def test_valid(self, root: Path) -> None:
        """The three minimal questions pass."""
        self.check(root, releases.minimal_rows())

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
        rows = releases.minimal_rows()
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
        found = release.read_release(
            releases.write_lines(root / "b.jsonl", [releases.minimal_rows()[2], *releases.minimal_rows()[:2]])
        )
        bench = release.to_benchmark(found, release.corpus_of(cfg))
        assert bench.columns == list(BENCHMARK_COLUMNS)
        assert bench["id"].to_list() == ["q1", "q2", "q3"]  # answerable first
        assert bench["target_chunk_id"].to_list() == ["c1", "c2", "post1"]
        assert bench["question"][0] == "I am in the Nether. What does the blaze drop?"
        assert bench["target_url"][0] == "http://wiki/c1" and bench["scenario_chunk_ids"][0].to_list() == []


class TestLimits:
    def test_field_length(self, tmp_path: Path) -> None:
        """A 5 MB scenario is refused with its size, and the message does not echo it."""
        rows = releases.minimal_rows()
        rows[1]["scenario"] = "I dig. " * 750_000
        with pytest.raises(
            release.ReleaseError, match=r":2: scenario: 5,250,000 characters, more than the 2,000 allowed"
        ) as info:
            release.read_release(releases.write_lines(tmp_path / "b.jsonl", rows))
        assert len(str(info.value)) < 500

    def test_prompt_size(self, root: Path) -> None:
        """A question whose scenario and question take more than a quarter of the smallest context
        window of the run's models (4,096 tokens here) is refused, naming the model."""
        rows = releases.minimal_rows()
        rows[0]["scenario"] = "I walk. " * 240
        rows[0]["question"] = "Why? " * 300
        with pytest.raises(
            release.ReleaseError,
            match=r"b\.jsonl:1: scenario and question take about 1,141 tokens, "
            r"more than 25% of the 4,096-token context window of model '[^']+' \(1,024",
        ):
            imported.import_benchmark(releases.write_lines(root / "b.jsonl", rows), "mine", root=root, corpus="default")


class TestRoundTrip:
    def test_export_import_evaluate(self, tmp_path: Path, server, monkeypatch) -> None:  # noqa: ANN001
        """Export, import and evaluate give the original run's benchmark, responses and judgements,
        all from the LLM cache: the imported run sends no call."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
        root = releases.tiny_project(
            tmp_path,
            {
                "old": releases.fake_model(server.base_url, "old"),
                "judge": releases.fake_model(server.base_url, "judge"),
            },
        )
        orig = config.load(root / "params" / "orig.yaml")
        corpus = release.corpus_of(orig)
        bench = release.to_benchmark(
            release.read_release(releases.write_lines(root / "b.jsonl", releases.minimal_rows())), corpus
        )
        orig.stage_dir("verify").mkdir(parents=True)
        bench.write_parquet(orig.stage_dir("verify") / "benchmark.parquet")
        want = releases.evaluate(orig)
        assert server.stats()["requests"] > 0 and want[1].height == want[0].height > 0
        release.export_benchmark(orig, root / "release.jsonl")
        meta = release.read_release(root / "release.jsonl").meta
        assert meta["corpus"] == "default" and meta["exported_from"] == "orig" and meta["n_answerable"] == 2
        server.reset()
        done = imported.import_benchmark(root / "release.jsonl", "again", root=root, corpus="orig")
        again = config.load(done.params_file)
        assert again.stage_dir("verify") != orig.stage_dir("verify") and done.benchmark.equals(bench)
        got = releases.evaluate(again)
        assert server.stats()["requests"] == 0
        assert got[0].equals(want[0]) and got[1].equals(want[1])
