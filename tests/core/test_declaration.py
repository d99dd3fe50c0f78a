"""Tests for declinecraft.core.declaration: an artifact's names and places, and a stage's model roles."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from declinecraft.core import config, declaration
from declinecraft.core.declaration import Artifact, Stage, writer

_write = writer("toy", "11_toy")
SINGLE = _write("counts.csv", "responses per model")
FAMILY = _write("{}.tex", "one table per name", place="tables")
FOLDER = _write("index-{}/", "one folder per version")


class TestArtifact:
    def test_writer_stamps_stage_and_notebook(self) -> None:
        """A stage module's writer gives each artifact its block and notebook."""
        assert (SINGLE.stage, SINGLE.notebook, SINGLE.place, SINGLE.when) == ("toy", "11_toy", "stage", "")
        assert SINGLE.relative() == "11_toy/counts.csv"

    def test_kinds_and_files(self) -> None:
        """The kind comes from the suffix (a trailing slash: a folder); a family needs a key, a file none."""
        assert (SINGLE.kind, FAMILY.kind, FOLDER.kind) == ("csv", "tex", "folder")
        assert FAMILY.file("table02") == "table02.tex" and FOLDER.file("ab12") == "index-ab12"
        with pytest.raises(ValueError, match=r"toy/\{\}\.tex: a family needs a key"):
            FAMILY.file()
        with pytest.raises(ValueError, match="a single file none"):
            SINGLE.file("x")

    def test_matches(self) -> None:
        """A family matches its members only; a folder matches the files inside it, not itself."""
        assert FAMILY.matches("table02.tex") and not FAMILY.matches("sub/table02.tex")
        assert FOLDER.matches("index-ab12/data.lance") and not FOLDER.matches("index-ab12")
        assert SINGLE.matches("counts.csv") and not SINGLE.matches("counts.csv.tmp")

    def test_decided_and_required(self, project: Path) -> None:
        """Every run writes an unconditional file; a view's files follow its switch; a condition
        the run finds out is undecided (None); a family is never required by name."""
        cfg = config.load(project / "params" / "default.yaml")
        on = Artifact("evidence", "curve.csv", "", declaration.EVIDENCE_ON)
        found = Artifact("paper", "main.pdf", "", declaration.WITH_PDF)
        assert SINGLE.required(cfg) and not FAMILY.required(cfg)
        assert on.decided(cfg) is True and found.decided(cfg) is None
        off = cfg.with_blocks(evidence=dataclasses.replace(cfg.evidence, enabled=False))
        assert on.decided(off) is False

    def test_guard(self, project: Path) -> None:
        """An installed guard sees every path asked for, until removed."""
        cfg = config.load(project / "params" / "default.yaml")
        seen: list[Artifact] = []
        declaration.set_guard(seen.append)
        try:
            SINGLE.path(cfg, run="default")
        finally:
            declaration.set_guard(None)
        assert SINGLE.path(cfg, run="default") == project / "outputs" / "default" / "11_toy" / "counts.csv"
        assert seen == [SINGLE]


class TestStage:
    def test_role_models(self, project: Path) -> None:
        """A role reads its params key; ``a|b`` falls back to ``b`` only when ``a`` is empty; "none" names no model."""
        cfg = config.load(project / "params" / "default.yaml")
        stage = Stage("toy", "11_toy", object, "x:run")
        assert stage.role_models(cfg, "answer.models") == cfg.answer.models
        assert stage.role_models(cfg, "verify.comparison_verifier|verify.verifier") == (cfg.verify.verifier,)
        named = cfg.with_blocks(verify=dataclasses.replace(cfg.verify, comparison_verifier="smollm2-135m"))
        assert stage.role_models(named, "verify.comparison_verifier|verify.verifier") == ("smollm2-135m",)
        nothing = cfg.with_blocks(verify=dataclasses.replace(cfg.verify, verifier="none"))
        assert stage.role_models(nothing, "verify.verifier") == ()
