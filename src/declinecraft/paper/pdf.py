"""Build the paper's PDF with latexmk, in a temporary folder so ``paper/`` gets no build files.

Without latexmk the build is skipped (the stage says so) rather than failed: the figures, tables
and macros are the reproducible outputs, the PDF a convenience where TeX is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from declinecraft.core import catalogue, paths


class PaperBuildError(RuntimeError):
    """latexmk failed; the message holds the first error lines of the LaTeX log."""


def _first_errors(log: str, limit: int = 12) -> str:
    """The log from its first error line on (``!`` or ``file:line:``), else its last lines."""
    lines = log.splitlines()
    hits = [i for i, line in enumerate(lines) if line.startswith("!") or re.search(r":\d+: ", line)]
    if not hits:
        return "\n".join(lines[-limit:])
    start = hits[0]
    return "\n".join(lines[start : start + limit])


#: LaTeX's warning for a \\ref or \\pageref whose label no part of the document defines.
_UNDEFINED = re.compile(r"LaTeX Warning: Reference `([^']+)' on page \d+ undefined")


def undefined_references(log: str) -> list[str]:
    """The labels a LaTeX log reports as referenced and never defined, once each, in order."""
    return list(dict.fromkeys(_UNDEFINED.findall(log)))


#: TeX run before the source: no trailer ``/ID`` (pdfTeX hashes it from the output's path, which
#: holds the build folder's random name).
PRETEX = r"\pdftrailerid{}"


def tex_environment(epoch: int) -> dict[str, str]:
    """The environment of a build dated ``epoch`` (seconds since 1970, UTC): pdfTeX writes it as the
    PDF's ``CreationDate``/``ModDate`` and ``\\today`` (``FORCE_SOURCE_DATE=1``), not the clock."""
    return {**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "FORCE_SOURCE_DATE": "1"}


def build_pdf(
    paper_dir: Path, *, tex: str = catalogue.PAPER_MAIN_TEX.name, timeout: int = 600, epoch: int = 0
) -> Path | None:
    """Build ``paper_dir/main.pdf`` with latexmk in a temporary folder; None when TeX is absent.

    The PDF is dated ``epoch`` (the run's date, :mod:`~declinecraft.paper.build_date`) and has no
    trailer ID, so two builds of the same sources are the same bytes.

    Raises:
        PaperBuildError: LaTeX failed (the message holds the log's first error lines), or a
            ``\\ref`` resolves to no label (the message names them).
    """
    latexmk = shutil.which("latexmk")
    if latexmk is None:
        print("paper: latexmk not found, skipped the PDF (install latexmk and TeX Live to build it)")
        return None
    with tempfile.TemporaryDirectory(prefix="declinecraft-tex-") as tmp:
        cmd = [
            latexmk,
            "-pdf",
            "-interaction=nonstopmode",
            "-halt-on-error",
            "-file-line-error",
            f"-usepretex={PRETEX}",
            f"-outdir={tmp}",
            tex,
        ]
        proc = subprocess.run(
            cmd, cwd=paper_dir, capture_output=True, text=True, timeout=timeout, check=False, env=tex_environment(epoch)
        )
        pdf = Path(tmp) / (Path(tex).stem + ".pdf")
        if proc.returncode != 0 or not pdf.is_file():
            log_path = Path(tmp) / (Path(tex).stem + ".log")
            log = (
                log_path.read_text(encoding="utf-8", errors="replace")
                if log_path.is_file()
                else proc.stdout + proc.stderr
            )
            raise PaperBuildError(f"latexmk failed on {paper_dir / tex}:\n{_first_errors(log)}")
        # A reference that resolves to nothing prints "??" in the PDF: a failed build, not a pass.
        log_path = Path(tmp) / (Path(tex).stem + ".log")
        missing = undefined_references(log_path.read_text(encoding="utf-8", errors="replace"))
        if missing:
            raise PaperBuildError(f"{paper_dir / tex} refers to labels it never defines: {', '.join(missing)}")
        target = paper_dir / pdf.name
        with paths.atomic_path(target) as out:
            shutil.copyfile(pdf, out)
    return target
