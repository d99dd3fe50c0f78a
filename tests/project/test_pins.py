"""The conda environment and pyproject pin the same versions."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml


class TestPins:
    def test_environment_matches_pyproject(self, root: Path) -> None:
        """Every pinned dependency of pyproject (and of the extras setup installs) appears with the same
        pin in environment.yml."""
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
        extras = project["optional-dependencies"]
        wanted = set(project["dependencies"]).union(
            *(extras[e] for e in ("bench", "release", "harness", "every-eval", "lint"))
        )
        env = yaml.safe_load((root / "environment.yml").read_text())
        pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
        assert set(pip) == wanted

    def test_every_pin_is_exact(self, root: Path) -> None:
        """Every runtime dependency is pinned with == (reproducible installs)."""
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
        loose = [d for d in project["dependencies"] if "==" not in d]
        assert loose == []
