"""Tests for declinecraft.analysis.annotation: the annotation sample's page and the annotations read back."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import annotation
from tests.support import judged_tables, synthetic


class TestSampleHtml:
    def test_hides_judge(self) -> None:
        """The annotators' page shows texts but neither model nor judge label."""
        sample = pl.DataFrame(
            {
                "item_id": ["P1-001"],
                "part": [1],
                "question": ["Q?"],
                "response": ["R <b>"],
                "reference": [None],
                "model": ["secret-model"],
                "judge_label": ["DENY"],
            }
        )
        page = annotation.sample_html(sample, "default")
        assert "R &lt;b&gt;" in page and "secret-model" not in page and "Download CSV" in page


class TestWriteSample:
    def test_files(self, tmp_path: Path) -> None:
        """CSV and HTML are written into the analysis folder."""
        cfg = judged_tables.project(tmp_path, None)
        sample = annotation.write_sample(cfg, synthetic.synthetic_judged(3, 80), tmp_path)
        assert sample.height == 100 and (tmp_path / "annotation_sample.html").is_file()


class TestAnnotationDir:
    def test_per_run(self, tmp_path: Path) -> None:
        """Annotator files live in data/annotations/<run>/."""
        assert annotation.annotation_dir(judged_tables.project(tmp_path, None)).parts[-2:] == (
            "annotations",
            "default",
        )


class TestReadAnnotations:
    def test_reads_and_checks(self, tmp_path: Path) -> None:
        """Files are read by annotator name; a file without item_id is an error naming it."""
        cfg = judged_tables.project(tmp_path, None)
        folder = annotation.annotation_dir(cfg)
        folder.mkdir(parents=True)
        (folder / "ann1.csv").write_text("item_id,label,score\nP1-001,DENY,\nP2-001,,0.5\n")
        assert annotation.read_annotations(cfg)["ann1"]["score"].to_list() == [None, 0.5]
        (folder / "bad.csv").write_text("id,label\nx,DENY\n")
        with pytest.raises(ValueError, match="bad.csv"):
            annotation.read_annotations(cfg)
