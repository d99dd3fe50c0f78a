"""Headless Chromium for the tests of the project's self-contained pages (the explorer's report,
the evidence view's validation form). Debian's /usr/bin/chromium; `make setup` installs it (as
root; otherwise it prints the `sudo apt-get install` line)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")


FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium(page: Path, tmp: Path, fragment: str = "", *extra: str) -> tuple[str, float]:
    """Open ``page#fragment`` in headless Chromium; return (stdout, wall seconds)."""
    profile = tmp / f"profile-{time.monotonic_ns()}"
    start = time.monotonic()
    done = subprocess.run(
        [
            str(CHROMIUM),
            *FLAGS,
            f"--user-data-dir={profile}",
            *extra,
            f"{page.as_uri()}#{fragment}" if fragment else page.as_uri(),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, time.monotonic() - start


def dom(page: Path, tmp: Path, fragment: str = "") -> str:
    """The page's DOM after its scripts ran."""
    return chromium(page, tmp, fragment, "--dump-dom")[0]
