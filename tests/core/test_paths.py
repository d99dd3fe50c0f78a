"""Tests for declinecraft.core.paths: the checkout a package runs from."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from declinecraft.core import config, paths


class TestStaleInstall:
    def test_moved_checkout(self, tmp_path: Path) -> None:
        """The checkout's own .venv importing the package from the old place: named, with the fix."""
        root, old = tmp_path / "moved", tmp_path / "old" / "src" / "declinecraft"
        message = paths.stale_install(root, prefix=root / ".venv", package=old)
        assert message is not None
        assert (
            f"imports declinecraft from {old.resolve()}, not from {(root / 'src' / 'declinecraft').resolve()}"
            in message
        )
        assert "pip install --no-deps -e" in message

    def test_in_place(self, tmp_path: Path) -> None:
        """The package imported from the checkout itself: nothing to say."""
        assert (
            paths.stale_install(tmp_path, prefix=tmp_path / ".venv", package=tmp_path / "src" / "declinecraft") is None
        )

    def test_other_environment(self, tmp_path: Path) -> None:
        """Another environment than the checkout's own (CI's, a PYTHONPATH) is not judged."""
        assert paths.stale_install(tmp_path, prefix=tmp_path / "elsewhere", package=Path("/x/src/declinecraft")) is None

    def test_linked_environment(self, tmp_path: Path) -> None:
        """A .venv that is a link to another checkout's environment is shared on purpose: not judged."""
        (tmp_path / "shared-venv").mkdir()
        (tmp_path / ".venv").symlink_to(tmp_path / "shared-venv")
        assert paths.stale_install(tmp_path, prefix=tmp_path / ".venv", package=Path("/x/src/declinecraft")) is None

    def test_every_command_refuses(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Loading a params file (make check-params, every stage) in a moved checkout says so."""
        monkeypatch.setattr(sys, "prefix", str(project / ".venv"))
        with pytest.raises(config.ConfigError, match=rf"{project}: its \.venv imports declinecraft from "):
            config.load(project / "params" / "default.yaml")


class TestUnder:
    def test_relative_inside_absolute_outside(self, tmp_path: Path) -> None:
        """A project file is named from the root; a file elsewhere keeps its whole path."""
        assert paths.under(tmp_path / "paper" / "main.pdf", tmp_path) == Path("paper/main.pdf")
        assert paths.under(Path("/elsewhere/x.pdf"), tmp_path) == Path("/elsewhere/x.pdf")
