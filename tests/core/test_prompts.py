"""Tests for declinecraft.core.prompts: loading by name, header checks, versions, strict rendering."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from declinecraft.core import prompts

TEMPLATE = """# section: Appendix J.9, "Test"
# placeholders: {question}, {context}
# note: a note line
---
Context:
{context}

Return {{"answer": "..."}} for: {question}
---
a template line that is only dashes, above
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.txt"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    write(tmp_path, "sample", TEMPLATE)
    return tmp_path


class TestLoad:
    def test_fields(self, folder: Path) -> None:
        """Header, template text (split on the first --- only) and placeholders are read."""
        prompt = prompts.load("sample", folder=folder)
        assert prompt.placeholders == ("context", "question")
        assert prompt.section == 'Appendix J.9, "Test"'
        assert prompt.meta["note"] == "a note line"
        assert prompt.text.startswith("Context:\n{context}")
        assert prompt.text.endswith("---\na template line that is only dashes, above")

    def test_unknown_name(self, folder: Path) -> None:
        """An unknown name is an error naming the file and the known templates."""
        with pytest.raises(prompts.PromptError, match=r"nope\.txt: no such prompt template \(known: sample\)"):
            prompts.load("nope", folder=folder)

    def test_bad_name(self, folder: Path) -> None:
        """A path is not a template name."""
        with pytest.raises(prompts.PromptError, match="must be a file stem"):
            prompts.load("../secrets", folder=folder)

    def test_project_templates(self, root: Path) -> None:
        """Every template of params/prompts/ loads, and its header matches its fields."""
        names = prompts.available(root)
        assert "judge_response" in names
        for name in names:
            prompt = prompts.load(name, root)
            assert prompt.placeholders, name


class TestParse:
    def test_no_separator(self, tmp_path: Path) -> None:
        """A file without a --- line names the file."""
        with pytest.raises(prompts.PromptError, match=r"x\.txt: no line '---'"):
            prompts.parse("# section: s\nhello {a}\n", path=tmp_path / "x.txt")

    def test_header_mismatch(self, tmp_path: Path) -> None:
        """Declared placeholders must equal the template's fields."""
        text = "# placeholders: {a}\n---\n{a} {b}\n"
        message = r"declares placeholders \['a'\] but the template uses \['a', 'b'\]"
        with pytest.raises(prompts.PromptError, match=message):
            prompts.parse(text, path=tmp_path / "x.txt")

    def test_single_brace(self, tmp_path: Path) -> None:
        """An undoubled literal brace is reported as a format error."""
        with pytest.raises(prompts.PromptError, match="double literal braces"):
            prompts.parse('---\n{"a": 1\n', path=tmp_path / "x.txt")

    def test_positional_field(self, tmp_path: Path) -> None:
        """Only named placeholders are allowed."""
        with pytest.raises(prompts.PromptError, match=r"placeholder \{0\} is not a plain name"):
            prompts.parse("---\n{0}\n", path=tmp_path / "x.txt")

    def test_bad_header_line(self, tmp_path: Path) -> None:
        """Header lines must be '# key: value'; the line number is given."""
        with pytest.raises(prompts.PromptError, match=r"x\.txt:2: header lines"):
            prompts.parse("# section: s\nsection s\n---\nhi\n", path=tmp_path / "x.txt")


class TestRender:
    def test_fills(self, folder: Path) -> None:
        """Placeholders are filled and doubled braces become single."""
        out = prompts.load("sample", folder=folder).render(question="Q?", context="C.")
        assert out.startswith('Context:\nC.\n\nReturn {"answer": "..."} for: Q?')

    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"question": "q"}, r"missing placeholder\(s\) context"),
            ({"question": "q", "context": "c", "extra": 1}, r"unknown field\(s\) extra"),
            ({"extra": 1}, r"missing placeholder\(s\) context, question; unknown field\(s\) extra"),
        ],
    )
    def test_strict(self, folder: Path, fields: dict[str, object], message: str) -> None:
        """Missing and extra fields are errors naming the file and the fields."""
        with pytest.raises(prompts.PromptError, match=rf"sample\.txt: {message}"):
            prompts.load("sample", folder=folder).render(**fields)


class TestVersion:
    def test_template_only(self, tmp_path: Path) -> None:
        """Editing a note keeps the version; editing the template changes it."""
        a = prompts.parse("# note: one\n---\nhello {x}\n", path=tmp_path / "a.txt")
        b = prompts.parse("# note: two\n---\nhello {x}\n", path=tmp_path / "a.txt")
        c = prompts.parse("# note: one\n---\nhello, {x}\n", path=tmp_path / "a.txt")
        assert a.version == b.version != c.version
        assert len(a.version) == 16


class TestAvailable:
    def test_sorted(self, tmp_path: Path) -> None:
        """Template names are the sorted file stems."""
        folder = tmp_path / "params" / "prompts"
        write(folder, "b", "---\nx\n")
        write(folder, "a", "---\ny\n")
        assert prompts.available(tmp_path) == ["a", "b"]


def read_sums(path: Path) -> dict[str, str]:
    """The ``sha256sum`` lines of a checksum list as {file name: hex digest}."""
    sums = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{path}:{number}: not a sha256sum line: {line!r}")
        sums[name.lstrip("*")] = digest
    return sums


class TestVerbatim:
    def test_checksums(self, root: Path) -> None:
        """Every params/prompts/*.txt matches params/prompts/SHA256SUMS, and the list names every
        template and nothing else: a prompt changes only together with its checksum."""
        folder = root / "params" / "prompts"
        sums = read_sums(folder / "SHA256SUMS")
        files = sorted(p.name for p in folder.glob("*.txt"))
        assert sorted(sums) == files
        changed = [n for n in files if hashlib.sha256((folder / n).read_bytes()).hexdigest() != sums[n]]
        assert changed == []

    def test_detects_edit(self, tmp_path: Path) -> None:
        """One changed byte gives a different digest from the listed one."""
        path = write(tmp_path, "p", "---\nhello {x}\n")
        listed = hashlib.sha256(path.read_bytes()).hexdigest()
        (tmp_path / "SHA256SUMS").write_text(f"{listed}  p.txt\n", encoding="utf-8")
        path.write_text("---\nhello {y}\n", encoding="utf-8")
        assert read_sums(tmp_path / "SHA256SUMS")["p.txt"] != hashlib.sha256(path.read_bytes()).hexdigest()
