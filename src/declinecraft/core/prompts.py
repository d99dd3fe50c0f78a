"""Prompt templates: ``params/prompts/<name>.txt`` loaded by name, versioned, rendered strictly.

A file is metadata lines (``# section: ...``, ``# placeholders: {a}, {b}``, ``# note: ...``), a line
that is exactly ``---``, then the template in ``str.format`` syntax (literal braces doubled). The
split is on the FIRST ``---`` line, since templates may contain ``---`` lines of their own.

The version is a short sha256 of the template text alone, so editing a ``# note:`` line keeps the
cache valid while editing a word of the prompt invalidates exactly the calls that used it.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from declinecraft.core import paths

SEPARATOR = "---"
_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class PromptError(ValueError):
    """A template file is malformed, or a render lacks or adds fields; the message names the file."""


@dataclass(frozen=True)
class Prompt:
    """One template file."""

    name: str
    path: Path
    text: str
    """The template after the ``---`` line, without the file's final newline."""
    placeholders: tuple[str, ...]
    """Field names in order of first use (equal to the header's ``placeholders`` line)."""
    meta: dict[str, str] = field(default_factory=dict)
    """Header ``# key: value`` lines (``section``, ``placeholders``, ``note``...)."""

    @property
    def version(self) -> str:
        """Short sha256 (16 hex digits) of the template text; part of every LLM cache key."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    @property
    def section(self) -> str:
        """The paper section the template comes from (header ``section``), or ''."""
        return self.meta.get("section", "")

    def render(self, **fields: Any) -> str:
        """Fill every placeholder.

        Raises:
            PromptError: a placeholder is missing or an unknown field is given (both named).
        """
        missing = [p for p in self.placeholders if p not in fields]
        extra = sorted(set(fields) - set(self.placeholders))
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing placeholder(s) {', '.join(missing)}")
            if extra:
                parts.append(f"unknown field(s) {', '.join(extra)}")
            raise PromptError(f"{self.path}: {'; '.join(parts)} (template needs: {', '.join(self.placeholders)})")
        return self.text.format(**fields)


def prompts_dir(root: Path | None = None) -> Path:
    """Return ``params/prompts/`` of the project at ``root`` (default: found from the working folder)."""
    return (root or paths.find_root()) / "params" / "prompts"


def available(root: Path | None = None) -> list[str]:
    """Return the names of every template file, sorted."""
    return sorted(p.stem for p in prompts_dir(root).glob("*.txt"))


def load(name: str, root: Path | None = None, *, folder: Path | None = None) -> Prompt:
    """Read ``<folder>/<name>.txt`` (folder default: ``params/prompts`` of ``root``) and check it.

    Raises:
        PromptError: unknown name, no ``---`` line, a bad placeholder, or a header whose
            ``placeholders`` line disagrees with the template.
    """
    if not _NAME.match(name):
        raise PromptError(f"prompt name {name!r} must be a file stem (letters, digits, _ and -)")
    folder = folder or prompts_dir(root)
    path = folder / f"{name}.txt"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.txt"))) or "none"
        raise PromptError(f"{path}: no such prompt template (known: {known})")
    return parse(path.read_text(encoding="utf-8"), path=path, name=name)


def parse(content: str, *, path: Path, name: str | None = None) -> Prompt:
    """Parse the text of a template file (see the module docstring for the format)."""
    lines = content.split("\n")
    try:
        cut = lines.index(SEPARATOR)
    except ValueError:
        raise PromptError(f"{path}: no line '---' separating the header from the template") from None
    meta: dict[str, str] = {}
    for number, line in enumerate(lines[:cut], start=1):
        if not line.strip():
            continue
        key, colon, value = line.lstrip("#").partition(":")
        if not line.startswith("#") or not colon:
            raise PromptError(f"{path}:{number}: header lines must look like '# key: value', got {line!r}")
        key = key.strip()
        meta[key] = f"{meta[key]}\n{value.strip()}" if key in meta else value.strip()
    text = "\n".join(lines[cut + 1 :])
    if text.endswith("\n"):
        text = text[:-1]
    used = _fields(text, path)
    declared = _PLACEHOLDER.findall(meta.get("placeholders", ""))
    if "placeholders" in meta and sorted(set(declared)) != sorted(used):
        raise PromptError(
            f"{path}: header declares placeholders {sorted(set(declared))} but the template uses {sorted(used)}"
        )
    return Prompt(name=name or path.stem, path=path, text=text, placeholders=tuple(used), meta=meta)


def _fields(text: str, path: Path) -> list[str]:
    """Return the template's field names in order of first use; reject positional/attribute fields."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise PromptError(f"{path}: not a valid str.format template ({exc}); double literal braces") from exc
    names: dict[str, None] = {}
    for _, field_name, _, _ in parsed:
        if field_name is None:
            continue
        if not field_name.isidentifier():
            raise PromptError(f"{path}: placeholder {{{field_name}}} is not a plain name")
        names[field_name] = None
    return list(names)
