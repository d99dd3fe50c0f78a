"""The system packages pip cannot install, and what a run could not build without them.

Four parts of the project need Debian packages: the llama.cpp build (cmake and a C++ compiler
for llama-cpp-python and llama-server), the paper's PDF (latexmk and the TeX Live
packages ``paper/main.tex`` uses), the HTML report test (Chromium) and the crawler test
(MediaWiki with SQLite). ``python -m declinecraft.runtime.system_packages install`` (``make setup``)
installs the missing ones with apt-get when it can (as root, or with passwordless sudo), printing
what it installs, and otherwise prints the exact command. ``... summary RUN`` (the last line of
``make all``) says in one line what the run did not build and why. Standard library only: the
install step runs with the system Python, before ``.venv`` exists.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from declinecraft.core import catalogue


@dataclass(frozen=True)
class Need:
    """What one part of the project needs from the system, and how to tell it is there."""

    what: str
    """The part that needs it (e.g. "paper PDF")."""
    packages: tuple[str, ...]
    """Debian packages that provide it."""
    commands: tuple[str, ...] = ()
    """Commands that must be on PATH."""
    paths: tuple[str, ...] = ()
    """Files or folders that must exist."""
    tex_files: tuple[str, ...] = ()
    """LaTeX files ``kpsewhich`` must find (the packages ``paper/main.tex`` loads)."""


TEX = Need(
    "paper PDF",
    (
        "latexmk",
        "texlive-latex-base",
        "texlive-latex-recommended",
        "texlive-latex-extra",
        "texlive-fonts-recommended",
        "poppler-utils",
    ),
    commands=("latexmk", "pdflatex", "kpsewhich", "pdftotext"),
    tex_files=(
        "geometry.sty",
        "mathptmx.sty",
        "microtype.sty",
        "booktabs.sty",
        "adjustbox.sty",
        "hyperref.sty",
        "xcolor.sty",
        "longtable.sty",
        "placeins.sty",
    ),
)
NEEDS: tuple[Need, ...] = (
    Need("llama.cpp build (llama-cpp-python, llama-server)", ("cmake", "g++"), commands=("cmake", "g++")),
    TEX,
    Need("HTML report test", ("chromium",), paths=("/usr/bin/chromium",)),
    Need("crawler test", ("mediawiki", "php-sqlite3"), commands=("php",), paths=("/usr/share/mediawiki",)),
)


def _kpsewhich(name: str) -> bool:
    """Whether TeX finds ``name`` (False without kpsewhich)."""
    exe = shutil.which("kpsewhich")
    if exe is None:
        return False
    return subprocess.run([exe, name], capture_output=True, text=True, check=False).stdout.strip() != ""


def absent(
    need: Need,
    *,
    which: Callable[[str], str | None] = shutil.which,
    exists: Callable[[str], bool] = os.path.exists,
    tex: Callable[[str], bool] = _kpsewhich,
) -> str:
    """The first missing piece of ``need`` ("latexmk missing", "adjustbox.sty missing"), or ""."""
    for command in need.commands:
        if which(command) is None:
            return f"{command} missing"
    for path in need.paths:
        if not exists(path):
            return f"{path} missing"
    for name in need.tex_files:
        if not tex(name):
            return f"{name} missing"
    return ""


def manual_command(packages: Sequence[str]) -> str:
    """The command a person with root rights runs to install ``packages``."""
    return "sudo apt-get install -y --no-install-recommends " + " ".join(packages)


def privilege(*, uid: int | None = None, which: Callable[[str], str | None] = shutil.which) -> list[str] | None:
    """The prefix that runs apt-get as root: [] as root, ["sudo", "-n"] with passwordless sudo,
    None when neither (or when there is no apt-get)."""
    if which("apt-get") is None:
        return None
    if (os.geteuid() if uid is None else uid) == 0:
        return []
    if which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False).returncode == 0:
        return ["sudo", "-n"]
    return None


def install_commands(packages: Sequence[str], prefix: Sequence[str]) -> list[list[str]]:
    """The apt-get calls that install ``packages`` (an index update first)."""
    return [
        [*prefix, "apt-get", "update", "-qq"],
        [*prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ]


def plan(needs: Sequence[Need] = NEEDS, **probes: Callable) -> tuple[list[str], list[str]]:
    """The packages to install and, for the log, one line per missing part ("paper PDF: latexmk missing")."""
    packages, why = [], []
    for need in needs:
        if reason := absent(need, **probes):
            packages += [p for p in need.packages if p not in packages]
            why.append(f"{need.what}: {reason}")
    return packages, why


def install(
    *,
    dry_run: bool = False,
    get_prefix: Callable[[], list[str] | None] = privilege,
    runner: Callable = subprocess.run,
    **probes: Callable,
) -> int:
    """Install the missing system packages when possible (``get_prefix`` says how to become root,
    ``runner`` runs apt-get), else print the command; 0 unless apt-get fails."""
    packages, why = plan(NEEDS, **probes)
    if not packages:
        print("system packages: all present (" + ", ".join(n.what for n in NEEDS) + ")")
        return 0
    print("system packages missing: " + "; ".join(why))
    prefix = None if dry_run else get_prefix()
    if prefix is None:
        reason = "dry run" if dry_run else "not root and no passwordless sudo with apt-get"
        print(f"system packages not installed ({reason}); install them with:\n  {manual_command(packages)}")
        return 0
    print("system packages: installing " + " ".join(packages))
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in install_commands(packages, prefix):
        if runner(cmd, env=env, check=False).returncode != 0:
            print(f"system packages: '{' '.join(cmd)}' failed; install them with:\n  {manual_command(packages)}")
            return 1
    return 0


def summary(run: str, root: Path, **probes: Callable) -> str:
    """One line: what run ``run`` did not build (the PDF, figures and tables it cannot fill) and why."""
    where = f"outputs/{run}/{catalogue.notebook('paper')}"
    stage = root / where
    status_file = stage / catalogue.PAPER_PDF_STATUS.name
    parts = []
    if not stage.is_dir():
        parts.append(f"paper (the paper stage has not run: {where}/ is missing)")
    elif not status_file.is_file():
        number = catalogue.notebook("paper")[:2]
        parts.append(f"paper PDF (no {where}/{status_file.name}: rerun the paper stage, make nb NB={number})")
    else:
        status = json.loads(status_file.read_text(encoding="utf-8"))
        if not status.get("pdf"):
            reason = status.get("reason") or "see the paper stage's log"
            missing = absent(TEX, **probes)
            if missing:
                reason = f"{missing}: make setup as root, or {manual_command(TEX.packages)}"
            parts.append(f"paper PDF ({reason})")
    skipped = stage / catalogue.PAPER_SKIPPED.name
    if skipped.is_file():
        with skipped.open(encoding="utf-8", newline="") as fh:
            n = sum(1 for _ in csv.DictReader(fh))
        if n:
            parts.append(f"{n} figures/tables this run cannot fill (reasons in {where}/{skipped.name})")
    return ("not built: " + "; ".join(parts)) if parts else f"built: every figure, table and the PDF of run '{run}'"


def slug(need: Need) -> str:
    """A file name for ``need`` ("paper PDF" -> "paper-pdf")."""
    return "-".join("".join(c if c.isalnum() else " " for c in need.what.lower()).split())


def write_state(folder: Path, needs: Sequence[Need] = NEEDS, **probes: Callable) -> list[Path]:
    """Write ``<folder>/<slug>.txt`` per need ("present" or what is missing), each only when it changed.

    A stage that a missing part kept from building (the paper stage without TeX) has its need's
    file as a Make prerequisite, so installing the part reruns it: what was not built is part of
    the stage's state. Returns the files rewritten.
    """
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    for need in needs:
        path = folder / f"{slug(need)}.txt"
        text = (absent(need, **probes) or "present") + "\n"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
            changed.append(path)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """``install [--dry-run]``, ``summary RUN`` or ``state FOLDER``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["state"] and len(args) == 2:
        write_state(Path(args[1]))
        return 0
    if args[:1] == ["install"]:
        return install(dry_run="--dry-run" in args)
    if args[:1] == ["summary"] and len(args) == 2:
        print(summary(args[1], Path.cwd()))
        return 0
    usage = "install [--dry-run] | summary RUN | state FOLDER"
    print(f"usage: python -m declinecraft.runtime.system_packages {usage}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
