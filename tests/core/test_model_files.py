"""Tests for declinecraft.core.model_files: where an installed model wheel keeps its files."""

from __future__ import annotations

import pytest

from declinecraft.core import model_files


class TestPackageDir:
    def test_missing_package(self) -> None:
        """A model package that is not installed says what to install."""
        with pytest.raises(FileNotFoundError, match="pip install"):
            model_files.package_dir("no-such-model-wheel", "no_such_model_wheel_xyz/model")
