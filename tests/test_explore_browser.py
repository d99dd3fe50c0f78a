"""The static HTML explorer in headless Chromium: the URL hash sets search and filters, the page shows
the questions the Python filters find (with their responses) and hides the others, opens in under
2 s, and renders a screenshot. Needs Debian's /usr/bin/chromium (.ci/run installs it)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest

from declinecraft import explore
from declinecraft.core import config
from test_explore import write_project

ROOT = Path(__file__).resolve().parents[1]
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

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"),
]


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


def sections(html: str) -> dict[str, str]:
    """Rendered question sections by id (the embedded JSON escapes '<', so it never matches)."""
    parts = re.split(r'(?=<section class="dc-q" id="q-)', html)
    out = {}
    for part in parts[1:]:
        qid = re.match(r'<section class="dc-q" id="q-([^"]+)"', part).group(1)  # type: ignore[union-attr]
        out[qid] = part.split("</section>", 1)[0]
    return out


def ready_ms(html: str) -> float:
    """Milliseconds from navigation start to the first render, as the page recorded it."""
    return float(re.search(r'data-ready-ms="([0-9.]+)"', html).group(1))  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame]:
    """The hand-built run's report page and its frame."""
    cfg = write_project(tmp_path_factory.mktemp("browser"))
    return explore.write_report(cfg), explore.load(cfg)


class TestWriteReport:
    def test_search(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """#q=copper shows q-copper with its responses and hides every other question."""
        page, _ = built
        shown = sections(dom(page, tmp_path, "q=copper"))
        assert set(shown) == {"q-copper"}
        assert "does not contain the answer" in shown["q-copper"] and "copper horse armor" in shown["q-copper"]

    @pytest.mark.parametrize(
        ("fragment", "expected"),
        [
            ("transition=A-X", lambda f: explore.transitions(f, "single", "iterative", from_label="A", to_label="X")),
            (
                "from=no_rag&to=single&transition=X-A",
                lambda f: explore.transitions(f, "no_rag", "single", from_label="X", to_label="A"),
            ),
            (
                "cmp=thinking&in=no_rag&transition=A-D",
                lambda f: explore.thinking_changes(f, "no_rag", from_label="A", to_label="D"),
            ),
            ("flag=all_failed", explore.all_failed),
            ("flag=judge_rule", explore.judge_rule_disagreements),
            ("flag=judges", explore.judge_disagreements),
            ("flag=exhausted", explore.budget_exhausted),
        ],
    )
    def test_filters_match_python(
        self, built: tuple[Path, pl.DataFrame], tmp_path: Path, fragment: str, expected: object
    ) -> None:
        """Each filter set in the hash shows exactly the questions the Python filter finds."""
        page, frame = built
        want = set(expected(frame)["question_id"])  # type: ignore[operator]
        assert want and set(sections(dom(page, tmp_path, fragment))) == want

    def test_sulfur_cube_responses(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """The transition view shows the iterative answer, the rounds, and marks the matching rows."""
        page, _ = built
        html = dom(page, tmp_path, "transition=A-X")
        sulfur = sections(html)["q-sulfur"]
        assert "The Magma Cube (sometimes called a 'Sulfur Cube')" in sulfur and "Magma Cube sizes" in sulfur
        assert len(re.findall(r'class="dc-row dc-\w+ dc-hit"', sulfur)) == 2
        assert "1 of 4 questions" in html

    def test_combined_and_empty(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Filters combine: m1 never exhausted its budget, so nothing matches."""
        page, _ = built
        html = dom(page, tmp_path, "flag=exhausted&model=m1")
        assert sections(html) == {} and "No question matches" in html

    def test_model_hides_rows(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Picking a model hides the other models' responses."""
        page, _ = built
        panda = sections(dom(page, tmp_path, "model=m2&q=panda"))["q-panda"]
        rows = re.findall(r'<tr class="dc-row ([^"]*)" data-config="([^"]+)"', panda)
        assert rows and all(("dc-hidden" in cls) == (cfg != "m2|off") for cls, cfg in rows)

    def test_chunk_text_on_open(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Opening a chunk's <details> fills its text from the page's chunk table."""
        page, _ = built
        opener = '<script>document.querySelectorAll("details[data-chunk]").forEach(d=>{d.open=true;});</script>'
        copy = tmp_path / "open.html"
        copy.write_text(page.read_text().replace("</body>", opener + "</body>"))
        html = chromium(copy, tmp_path, "q=panda", "--dump-dom", "--virtual-time-budget=2000")[0]
        panda = sections(html)["q-panda"]
        assert "[Page: Panda] text of Panda#0</pre>" in panda and "<pre></pre>" not in panda

    def test_opens_fast_and_screenshot(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """The page renders within 2 s of navigation, and a screenshot is drawn."""
        page, _ = built
        assert ready_ms(dom(page, tmp_path)) <= 2000
        shot = tmp_path / "explorer.png"
        chromium(
            page, tmp_path, "transition=A-X", f"--screenshot={shot}", "--window-size=1280,900", "--hide-scrollbars"
        )
        assert shot.stat().st_size > 20_000

    def test_default_run(self, tmp_path: Path) -> None:
        """The default run's report opens within 2 s and shows its first question with every response."""
        cfg = config.load(ROOT / "params" / "default.yaml")
        needed = [cfg.stage_dir("verify") / "benchmark.parquet", cfg.stage_dir("judge") / "judged.parquet"]
        if missing := [p for p in needed if not p.is_file()]:
            pytest.skip(f"default run not built: {missing[0].relative_to(ROOT)} is missing (run `make all`)")
        page = explore.write_report(cfg, out=tmp_path / "index.html")
        frame = explore.load(cfg)
        html = dom(page, tmp_path)
        assert ready_ms(html) <= 2000
        first = frame["question_id"][0]
        rows = frame.filter(pl.col("question_id") == first)
        assert sections(html)[first].count('<tr class="dc-row ') == rows.height
        hidden = sections(dom(page, tmp_path, f"q={first}"))
        assert first in hidden and len(hidden) == explore.search(frame, first).height
