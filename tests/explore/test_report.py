"""Tests for declinecraft.explore.report: the static HTML page's data and markup, and the page in
headless Chromium: the URL hash sets search and filters, the page shows the questions the Python
filters find (with their responses) and hides the others, opens in under 2 s, and renders a
screenshot. The browser tests need Debian's /usr/bin/chromium (`make setup` installs it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft import explore
from declinecraft.core import config
from tests.support import browser, explorer_run, projects


class TestReportData:
    def test_labels_and_flags(self, frame: pl.DataFrame) -> None:
        """Per question: label codes per configuration and setting, and where each flag holds."""
        data = explore.report_data(frame, None, run="default")
        by_id = {q["id"]: q for q in data["questions"]}
        assert by_id["q-sulfur"]["labels"]["m1|off"] == {"no_rag": "X", "single": "A", "iterative": "X"}
        assert by_id["q-copper"]["labels"]["m2|off"]["iterative"] == "-"
        assert by_id["q-spider"]["flags"]["all_failed"][0] == ["no_rag", None]
        assert by_id["q-copper"]["flags"] == {"exhausted": [["iterative", "m2|off"]]}
        assert data["chunks"] == {} and "data-chunk" not in by_id["q-panda"]["html"]
        assert "copper horse armor" in by_id["q-copper"]["text"] and data["settings"][:3] == [
            "no_rag",
            "single",
            "iterative",
        ]


class TestReportJson:
    def test_cannot_close_script(self, frame: pl.DataFrame) -> None:
        """Text that would end the data's <script> element is escaped there, yet parses back unchanged."""
        evil = "</script><!-- & 'x' -->"
        page = explore.report_html(frame.with_columns(response=pl.lit(evil)), None, run="<r&d>")
        raw = page.split('id="dc-data">', 1)[1].split("</script>", 1)[0]
        assert "<" not in raw and ">" not in raw and "&" not in raw and "'" not in raw
        data = json.loads(raw)
        assert data["run"] == "<r&d>" and all(evil in q["text"] for q in data["questions"])
        assert "<title>DeclineCraft explorer · &lt;r&amp;d&gt;</title>" in page


class TestReportHtml:
    def test_self_contained(self, frame: pl.DataFrame) -> None:
        """One page: inline CSS/JS, data in a JSON script tag, no external resources."""
        page = explore.report_html(frame, explore.load_chunks(explore.resolve(frame["params_file"][0])), run="default")
        assert page.count('<script type="application/json" id="dc-data">') == 1
        assert "<link" not in page and "src=" not in page and "@import" not in page and "//cdn" not in page
        data = json.loads(page.split('id="dc-data">', 1)[1].split("</script>", 1)[0])
        assert (
            len(data["questions"]) == 4 and data["chunks"]["Magma_Cube#0"] == "[Page: Magma_Cube] text of Magma_Cube#0"
        )
        assert "Copper_Horse_Armor#0" in data["chunks"] and "text of" not in data["questions"][0]["html"]


class TestWriteReport:
    def test_writes_index(self, run: config.RunConfig) -> None:
        """The report goes to outputs/<run>/explorer/index.html."""
        path = explore.write_report(run)
        assert path == run.run_dir() / "explorer" / "index.html" and "q-spider" in path.read_text()


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
    cfg = explorer_run.write_project(tmp_path_factory.mktemp("browser"))
    return explore.write_report(cfg), explore.load(cfg)


@pytest.mark.slow
@pytest.mark.skipif(not browser.CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)")
class TestReportInBrowser:
    def test_search(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """#q=copper shows q-copper with its responses and hides every other question."""
        page, _ = built
        shown = sections(browser.dom(page, tmp_path, "q=copper"))
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
        assert want and set(sections(browser.dom(page, tmp_path, fragment))) == want

    def test_sulfur_cube_responses(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """The transition view shows the iterative answer, the rounds, and marks the matching rows."""
        page, _ = built
        html = browser.dom(page, tmp_path, "transition=A-X")
        sulfur = sections(html)["q-sulfur"]
        assert "The Magma Cube (sometimes called a 'Sulfur Cube')" in sulfur and "Magma Cube sizes" in sulfur
        assert len(re.findall(r'class="dc-row dc-\w+ dc-hit"', sulfur)) == 2
        assert "1 of 4 questions" in html

    def test_combined_and_empty(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Filters combine: m1 never exhausted its budget, so nothing matches."""
        page, _ = built
        html = browser.dom(page, tmp_path, "flag=exhausted&model=m1")
        assert sections(html) == {} and "No question matches" in html

    def test_model_hides_rows(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Picking a model hides the other models' responses."""
        page, _ = built
        panda = sections(browser.dom(page, tmp_path, "model=m2&q=panda"))["q-panda"]
        rows = re.findall(r'<tr class="dc-row ([^"]*)" data-config="([^"]+)"', panda)
        assert rows and all(("dc-hidden" in cls) == (cfg != "m2|off") for cls, cfg in rows)

    def test_chunk_text_on_open(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Opening a chunk's <details> fills its text from the page's chunk table."""
        page, _ = built
        opener = '<script>document.querySelectorAll("details[data-chunk]").forEach(d=>{d.open=true;});</script>'
        copy = tmp_path / "open.html"
        copy.write_text(page.read_text().replace("</body>", opener + "</body>"))
        html = browser.chromium(copy, tmp_path, "q=panda", "--dump-dom", "--virtual-time-budget=2000")[0]
        panda = sections(html)["q-panda"]
        assert "[Page: Panda] text of Panda#0</pre>" in panda and "<pre></pre>" not in panda

    def test_opens_fast_and_screenshot(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """The page renders within 2 s of navigation, and a screenshot is drawn."""
        page, _ = built
        assert ready_ms(browser.dom(page, tmp_path)) <= 2000
        shot = tmp_path / "explorer.png"
        browser.chromium(
            page, tmp_path, "transition=A-X", f"--screenshot={shot}", "--window-size=1280,900", "--hide-scrollbars"
        )
        assert shot.stat().st_size > 20_000

    def test_default_run(self, tmp_path: Path) -> None:
        """The default run's report opens within 2 s and shows its first question with every response."""
        cfg = config.load(projects.REPO / "params" / "default.yaml")
        needed = [cfg.stage_dir("verify") / "benchmark.parquet", cfg.stage_dir("judge") / "judged.parquet"]
        if missing := [p for p in needed if not p.is_file()]:
            pytest.skip(f"default run not built: {missing[0].relative_to(projects.REPO)} is missing (run `make all`)")
        page = explore.write_report(cfg, out=tmp_path / "index.html")
        frame = explore.load(cfg)
        html = browser.dom(page, tmp_path)
        assert ready_ms(html) <= 2000
        first = frame["question_id"][0]
        rows = frame.filter(pl.col("question_id") == first)
        assert sections(html)[first].count('<tr class="dc-row ') == rows.height
        hidden = sections(browser.dom(page, tmp_path, f"q={first}"))
        assert first in hidden and len(hidden) == explore.search(frame, first).height
