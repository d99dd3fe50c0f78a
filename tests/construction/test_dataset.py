"""Tests for declinecraft.construction.dataset: Parquet configs, a dataset card with its YAML header,
a Croissant file; ``datasets`` and ``mlcroissant`` load what it writes."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest
import yaml

from declinecraft.construction import croissant, dataset
from declinecraft.core import config
from tests.support import projects

TEXTS = {
    "c1": "[Page: Page 1]\nTorches give light.",
    "c2": "[Page: Page 2]\nSand falls.",
    "c3": "[Page: Page 3]\nIce melts.",
}


def build(root: Path) -> config.RunConfig:
    """A tiny run: three C_pre chunks, one C_post chunk, two answerable and one unanswerable question."""
    cfg = config.load(projects.copy_project(root) / "params" / "default.yaml")
    projects.write_corpus(cfg, TEXTS)
    bench = pl.DataFrame(
        {
            "id": ["a0000", "a0001", "u0000"],
            "answerable": [True, True, False],
            "scenario": ["You are in a cave.", "You are on a beach.", "You meet a new mob."],
            "asked_question": ["What gives light?", "What falls?", "Does it glow?"],
            "question": [
                "You are in a cave. What gives light?",
                "You are on a beach. What falls?",
                "You meet a new mob. Does it glow?",
            ],
            "fact": ["Torches give light.", "Sand falls.", "The new mob glows."],
            "target_chunk_id": ["c1", "c2", "post1"],
            "target_title": ["Page 1", "Page 2", "New Mob"],
            "scenario_chunk_ids": [["c2"], ["c3"], ["c3"]],
        }
    )
    cfg.stage_dir("verify").mkdir(parents=True)
    bench.write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
    pl.DataFrame({"id": ["a0000"], "facts": [["Torches give light.", "Torches burn."]]}).write_parquet(
        cfg.stage_dir("verify") / "candidates.parquet"
    )
    cfg.stage_dir("judge").mkdir(parents=True)
    pl.DataFrame(
        {
            "question_id": ["a0000", "a0001", "u0000"],
            "reference": ["Torches.", None, "Yes, it glows."],
            "error": [None, None, "timeout"],
        }
    ).write_parquet(cfg.stage_dir("judge") / "references.parquet")
    return cfg


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dataset.Release:
    cfg = build(tmp_path_factory.mktemp("release") / "project")
    return dataset.write(cfg, published=date(2026, 1, 1))


class TestQuestionsFrame:
    def test_columns_and_values(self, tmp_path: Path) -> None:
        """Every released column; facts from the drafts (else the one fact); references only where answered."""
        frame = dataset.questions_frame(build(tmp_path))
        assert frame.columns == list(dataset.QUESTION_FIELDS)
        assert frame["facts"].to_list() == [
            ["Torches give light.", "Torches burn."],
            ["Sand falls."],
            ["The new mob glows."],
        ]
        assert frame["reference"].to_list() == ["Torches.", None, None]
        assert frame["target_chunk"][2].startswith("[Page: New Mob]")

    def test_missing_target_chunk_names_question(self, tmp_path: Path) -> None:
        """A target chunk in neither corpus is an error naming the question and the chunk."""
        cfg = build(tmp_path)
        path = cfg.stage_dir("verify") / "benchmark.parquet"
        pl.read_parquet(path).with_columns(pl.lit("gone").alias("target_chunk_id")).write_parquet(path)
        with pytest.raises(ValueError, match="question 'a0000': target chunk 'gone'"):
            dataset.questions_frame(cfg)


class TestWrite:
    def test_card_header(self, release: dataset.Release) -> None:
        """The card opens with YAML naming both configs and their files, and no loading script exists."""
        text = (release.folder / "README.md").read_text()
        header = yaml.safe_load(text.split("---\n")[1])
        assert [c["config_name"] for c in header["configs"]] == ["questions", "c_pre"]
        assert header["configs"][0]["data_files"] == [{"split": "test", "path": "questions/test-*.parquet"}]
        assert header["license"] == "apache-2.0"
        assert "2025-03-31" in text and "3 (2 answerable, 1 unanswerable)" in text and "Known limits" in text
        assert not list(release.folder.rglob("*.py"))

    def test_datasets_loads(self, release: dataset.Release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Hugging Face ``datasets`` loads both configs from the folder (offline)."""
        monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        import datasets

        questions = datasets.load_dataset(str(release.folder), "questions", split="test", cache_dir=str(tmp_path))
        corpus = datasets.load_dataset(str(release.folder), "c_pre", split="corpus", cache_dir=str(tmp_path))
        assert questions.num_rows == 3 and corpus.num_rows == 3
        assert questions[0]["facts"] == ["Torches give light.", "Torches burn."] and questions[2]["answerable"] is False

    def test_croissant_validates_and_loads(self, release: dataset.Release) -> None:
        """``mlcroissant`` validates the JSON-LD without warnings and yields every record of both sets."""
        import mlcroissant

        found = mlcroissant.Dataset(str(release.folder / croissant.FILE_NAME))
        issues = found.metadata.ctx.issues
        assert not issues.errors and not issues.warnings, issues.report()
        questions = list(found.records("questions"))
        assert [r["questions/id"] for r in questions] == [b"a0000", b"a0001", b"u0000"]
        assert len(list(found.records("c_pre"))) == 3

    def test_croissant_rai_fields(self, release: dataset.Release) -> None:
        """The document conforms to Croissant 1.0 and its RAI vocabulary and fills the RAI fields."""
        document = json.loads((release.folder / croissant.FILE_NAME).read_text())
        assert document["conformsTo"] == croissant.CONFORMS_TO
        rai = {k for k, v in document.items() if k.startswith("rai:") and v}
        assert {
            "rai:dataCollection",
            "rai:dataLimitations",
            "rai:dataBiases",
            "rai:personalSensitiveInformation",
        } <= rai
