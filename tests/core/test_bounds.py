"""Tests for declinecraft.core.bounds: the ranges of the params blocks' numbers, as `make check-params` applies them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from declinecraft.core import bounds, config
from declinecraft.core.params import LLMParams


def write(project: Path, name: str, data: dict) -> Path:
    path = project / "params" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class TestBounds:
    @pytest.mark.parametrize("block", [*config.BLOCKS, "llm"])
    def test_every_number_has_a_range(self, block: str) -> None:
        """Every int and float field of every block (tuples of them too) has a range, and no range is stale."""
        cls = config.BLOCKS.get(block, LLMParams)
        assert bounds.numeric_fields(cls) == set(bounds.of(cls))

    def test_defaults_in_range(self) -> None:
        """Every block's defaults are in range."""
        for name, cls in {**config.BLOCKS, "llm": LLMParams}.items():
            assert bounds.check(name, cls(), name) == []

    @pytest.mark.parametrize(
        ("value", "allowed"), [(0.95, True), (1.0, False), (0.0, False), (float("nan"), False), (-0.1, False)]
    )
    def test_level(self, value: float, allowed: bool) -> None:
        """A confidence level lies strictly between 0 and 1, and NaN lies nowhere."""
        assert bounds.LEVEL.allows(value) is allowed


class TestCheck:
    def test_every_problem_named(self, project: Path) -> None:
        """The issue's three values: one error naming the file and each key, all at once."""
        path = write(project, "bad", {"answer": {"k": -3, "max_tokens": -1}, "corpus": {"chunk_size": -100}})
        with pytest.raises(config.ConfigError) as info:
            config.load(path)
        lines = str(info.value).splitlines()
        assert lines == [
            f"{path}: corpus.chunk_size: -100 is out of range (needs >= 1)",
            f"{path}: answer.k: -3 is out of range (needs >= 1)",
            f"{path}: answer.max_tokens: -1 is out of range (needs >= 1 and <= 1e+06)",
        ]

    @pytest.mark.parametrize(
        ("block", "values", "message"),
        [
            ("answer", {"k_sweep": [1, 0]}, r"answer\.k_sweep\[1\]: 0 is out of range"),
            ("analysis", {"confidence": 1.5}, r"analysis\.confidence: 1\.5 is out of range \(needs > 0 and < 1\)"),
            ("corpus", {"chunk_overlap": 1500}, r"corpus\.chunk_overlap: 1500 must be below chunk_size \(1500\)"),
            ("evidence", {"context_chars": -2}, r"evidence\.context_chars: -2 is out of range \(needs >= -1\)"),
            ("llm", {"max_failed_share": 2}, r"llm\.max_failed_share: 2\.0 is out of range \(needs >= 0 and <= 1\)"),
        ],
    )
    def test_named(self, project: Path, block: str, values: dict, message: str) -> None:
        """A value out of its range, in a list, against another key, or below a sentinel: named."""
        with pytest.raises(config.ConfigError, match=rf"bad\.yaml: {message}"):
            config.load(write(project, "bad", {block: values}))

    def test_inherited_overrides_checked(self, project: Path) -> None:
        """A derived run's own value is checked too, naming the derived file."""
        path = write(project, "derived", {"base": "default", "judge": {"truncate_chars": 0}})
        with pytest.raises(config.ConfigError, match=r"derived\.yaml: judge\.truncate_chars: 0 is out of range"):
            config.load(path)

    def test_check_params_command(self, project: Path) -> None:
        """`make check-params` (the config module's check): exit 1, the file and key on stderr."""
        path = write(project, "bad", {"answer": {"max_tokens": -1}})
        done = subprocess.run(
            [sys.executable, "-m", "declinecraft.core.config", "check", str(path)],
            capture_output=True,
            text=True,
            cwd=project,
        )
        assert done.returncode == 1 and f"{path}: answer.max_tokens: -1 is out of range" in done.stderr
