"""Tests for declinecraft.runtime.system_packages: what is missing, what it would install and how, and
the one-line summary of what a run did not build. Nothing is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from declinecraft.runtime import system_packages

EVERYTHING = dict(which=lambda c: f"/usr/bin/{c}", exists=lambda p: True, tex=lambda f: True)


def probes(*, commands: set[str] = frozenset(), paths: set[str] = frozenset(), tex: set[str] = frozenset()) -> dict:
    """Probes under which exactly the given commands, paths and TeX files are missing."""
    return dict(
        which=lambda c: None if c in commands else f"/usr/bin/{c}",
        exists=lambda p: p not in paths,
        tex=lambda f: f not in tex,
    )


class TestAbsent:
    def test_present(self) -> None:
        """Everything found: nothing missing."""
        assert system_packages.absent(system_packages.TEX, **EVERYTHING) == ""

    def test_command(self) -> None:
        """A missing command is named first."""
        assert (
            system_packages.absent(system_packages.TEX, **probes(commands={"latexmk"}, tex={"adjustbox.sty"}))
            == "latexmk missing"
        )

    def test_tex_file(self) -> None:
        """A LaTeX package the paper loads that TeX cannot find is named."""
        assert system_packages.absent(system_packages.TEX, **probes(tex={"adjustbox.sty"})) == "adjustbox.sty missing"


class TestPlan:
    def test_missing_parts(self) -> None:
        """Only the parts with something missing add their packages, each once."""
        packages, why = system_packages.plan(**probes(commands={"latexmk"}, paths={"/usr/share/mediawiki"}))
        assert packages == [*system_packages.TEX.packages, "mediawiki", "php-sqlite3"]
        assert why == ["paper PDF: latexmk missing", "crawler test: /usr/share/mediawiki missing"]


class TestInstall:
    def test_all_present(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Nothing missing: no apt-get call, and it says so."""
        calls: list = []
        assert system_packages.install(runner=lambda *a, **k: calls.append(a), get_prefix=lambda: [], **EVERYTHING) == 0
        assert calls == [] and "all present" in capsys.readouterr().out

    def test_cannot(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Not root and no passwordless sudo: nothing runs, the exact command is printed."""
        calls: list = []
        rc = system_packages.install(
            runner=lambda *a, **k: calls.append(a), get_prefix=lambda: None, **probes(paths={"/usr/bin/chromium"})
        )
        out = capsys.readouterr().out
        assert rc == 0 and calls == []
        assert "  sudo apt-get install -y --no-install-recommends chromium\n" in out

    def test_installs(self, capsys: pytest.CaptureFixture[str]) -> None:
        """As root: apt-get update, then apt-get install of exactly the missing packages, printed first."""
        calls: list = []

        class Done:
            returncode = 0

        def runner(cmd: list[str], **kwargs: object) -> Done:
            calls.append((cmd, kwargs["env"]["DEBIAN_FRONTEND"]))
            return Done()

        assert (
            system_packages.install(runner=runner, get_prefix=lambda: ["sudo", "-n"], **probes(commands={"php"})) == 0
        )
        assert calls == [
            (["sudo", "-n", "apt-get", "update", "-qq"], "noninteractive"),
            (
                [
                    "sudo",
                    "-n",
                    "apt-get",
                    "install",
                    "-y",
                    "-qq",
                    "--no-install-recommends",
                    "mediawiki",
                    "php-sqlite3",
                ],
                "noninteractive",
            ),
        ]
        assert "installing mediawiki php-sqlite3" in capsys.readouterr().out

    def test_dry_run(self, capsys: pytest.CaptureFixture[str]) -> None:
        """A dry run prints the command even where it could install."""
        calls: list = []
        system_packages.install(
            dry_run=True, runner=lambda *a, **k: calls.append(a), get_prefix=lambda: [], **probes(commands={"latexmk"})
        )
        assert calls == [] and system_packages.manual_command(system_packages.TEX.packages) in capsys.readouterr().out


class TestPrivilege:
    def test_root(self) -> None:
        """Root needs no prefix."""
        assert system_packages.privilege(uid=0, which=lambda c: f"/usr/bin/{c}") == []

    def test_no_apt(self) -> None:
        """Without apt-get nothing can be installed."""
        assert system_packages.privilege(uid=0, which=lambda c: None) is None

    def test_no_sudo(self) -> None:
        """Not root and no sudo: no way to install."""
        assert system_packages.privilege(uid=1000, which=lambda c: None if c == "sudo" else f"/usr/bin/{c}") is None


class TestSummary:
    def stage(self, root: Path, pdf: str | None, reason: str, skipped: int) -> None:
        folder = root / "outputs" / "r" / "10_paper"
        folder.mkdir(parents=True)
        (folder / "pdf.json").write_text(json.dumps({"pdf": pdf, "reason": reason}))
        (folder / "skipped.csv").write_text("kind,name,reason\n" + "figure,f,why\n" * skipped)

    def test_no_latexmk(self, tmp_path: Path) -> None:
        """Without latexmk the line names it and the exact command."""
        self.stage(tmp_path, None, "latexmk missing", 0)
        line = system_packages.summary("r", tmp_path, **probes(commands={"latexmk"}))
        assert (
            line
            == "not built: paper PDF (latexmk missing: make setup as root, or "
            + system_packages.manual_command(system_packages.TEX.packages)
            + ")"
        )

    def test_switched_off(self, tmp_path: Path) -> None:
        """A PDF switched off says so, and the figures the run cannot fill are counted."""
        self.stage(tmp_path, None, "switched off (paper.build_pdf: false)", 2)
        line = system_packages.summary("r", tmp_path, **EVERYTHING)
        assert line == (
            "not built: paper PDF (switched off (paper.build_pdf: false)); "
            "2 figures/tables this run cannot fill (reasons in outputs/r/10_paper/skipped.csv)"
        )

    def test_everything(self, tmp_path: Path) -> None:
        """A run that built everything says so."""
        self.stage(tmp_path, "paper/main.pdf", "", 0)
        assert (
            system_packages.summary("r", tmp_path, **EVERYTHING) == "built: every figure, table and the PDF of run 'r'"
        )

    def test_not_run(self, tmp_path: Path) -> None:
        """Before the paper stage the line says it has not run."""
        assert system_packages.summary("r", tmp_path).startswith("not built: paper (the paper stage has not run")


class TestMain:
    def test_usage(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown command prints the usage and returns 2."""
        assert system_packages.main(["nope"]) == 2 and "usage" in capsys.readouterr().err


class TestWriteState:
    def test_rewritten_only_when_changed(self, tmp_path: Path) -> None:
        """One file per part: 'present' or what is missing, rewritten only when that changes."""
        folder = tmp_path / "system"
        first = system_packages.write_state(folder, **probes(commands={"latexmk"}))
        assert (folder / "paper-pdf.txt").read_text() == "latexmk missing\n"
        assert (folder / "html-report-test.txt").read_text() == "present\n" and len(first) == len(system_packages.NEEDS)
        assert system_packages.write_state(folder, **probes(commands={"latexmk"})) == []
        assert system_packages.write_state(folder, **EVERYTHING) == [folder / "paper-pdf.txt"]
        assert (folder / "paper-pdf.txt").read_text() == "present\n"

    def test_paper_stage_depends_on_it(self, root: Path) -> None:
        """The Makefile makes the paper stage's notebook depend on the TeX part's state file."""
        makefile = (root / "Makefile").read_text()
        assert f"NEEDS_10_paper := .make/system/{system_packages.slug(system_packages.TEX)}.txt" in makefile
