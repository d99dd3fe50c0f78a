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
from tests.support import browser, default_run, explorer_run


def label(data: dict, question: dict, config: str, setting: str) -> str:
    """A question's label code in one (configuration, setting), read as the page reads it."""
    n = len(data["settings"])
    return question["labels"][data["configs"].index(config) * n + data["settings"].index(setting)]


class TestReportData:
    def test_labels_and_flags(self, frame: pl.DataFrame) -> None:
        """Per question: one label code per configuration and setting, and where each flag holds."""
        data = explore.report_data(frame, run="default")
        by_id = {q["id"]: q for q in data["questions"]}
        assert [label(data, by_id["q-sulfur"], "m1|off", s) for s in ("no_rag", "single", "iterative")] == [
            "X",
            "A",
            "X",
        ]
        assert label(data, by_id["q-copper"], "m2|off", "iterative") == "-"
        assert len(by_id["q-copper"]["labels"]) == len(data["configs"]) * len(data["settings"])
        no_rag = data["settings"].index("no_rag")
        assert by_id["q-spider"]["flags"]["all_failed"][0] == [no_rag, -1]
        assert by_id["q-copper"]["flags"] == {
            "exhausted": [[data["settings"].index("iterative"), data["configs"].index("m2|off")]]
        }
        assert "copper horse armor" in by_id["q-copper"]["text"] and data["settings"][:3] == [
            "no_rag",
            "single",
            "iterative",
        ]

    def test_no_responses_on_the_first_page(self, frame: pl.DataFrame) -> None:
        """The first page's data holds no response text; each question names its own file."""
        data = explore.report_data(frame, run="default")
        text = json.dumps(data)
        assert all(r not in text for r in frame["response"].drop_nulls().unique().to_list() if len(r) > 20)
        assert len({q["file"] for q in data["questions"]}) == len(data["questions"]) == 4


class TestQuestionShards:
    def test_section_and_its_chunks(self, frame: pl.DataFrame) -> None:
        """A question's file holds its section (every response) and the texts of the chunks it lists only."""
        chunks = explore.load_chunks(explore.resolve(frame["params_file"][0]))
        shards = dict(explore.question_shards(frame, chunks))
        assert set(shards) == {"q-sulfur", "q-copper", "q-panda", "q-spider"}
        panda = shards["q-panda"]
        assert panda["html"].count('<tr class="dc-row ') == frame.filter(pl.col("question_id") == "q-panda").height
        assert panda["chunks"]["Panda#0"] == "[Page: Panda] text of Panda#0" and "Horse#0" not in panda["chunks"]
        assert "text of" not in panda["html"] and 'data-chunk="Panda#0"' in panda["html"]

    def test_script_cannot_break_out(self, frame: pl.DataFrame) -> None:
        """A question file is one dcShard call whose JSON is ASCII and parses back unchanged."""
        evil = "</script><!-- & 'x'   é"
        script = explore.report.shard_script("q-é", {"html": evil, "chunks": {}})
        assert script.isascii() and script.startswith('dcShard("q-\\u00e9",')
        assert json.loads(script[script.index(",") + 1 : -3]) == {"html": evil, "chunks": {}}


class TestReportJson:
    def test_cannot_close_script(self, frame: pl.DataFrame) -> None:
        """Text that would end the data's <script> element is escaped there, yet parses back unchanged."""
        evil = "</script><!-- & 'x' -->"
        page = explore.report_html(frame.with_columns(asked_question=pl.lit(evil)), run="<r&d>")
        raw = page.split('id="dc-data">', 1)[1].split("</script>", 1)[0]
        assert "<" not in raw and ">" not in raw and "&" not in raw and "'" not in raw
        data = json.loads(raw)
        assert data["run"] == "<r&d>" and all(evil == q["question"] for q in data["questions"])
        assert "<title>DeclineCraft explorer · &lt;r&amp;d&gt;</title>" in page


class TestReportHtml:
    def test_self_contained(self, frame: pl.DataFrame) -> None:
        """The first page: inline CSS/JS, data in a JSON script tag, nothing loaded but its own
        question files."""
        page = explore.report_html(frame, run="default")
        assert page.count('<script type="application/json" id="dc-data">') == 1
        assert "<link" not in page and 'src="' not in page and "@import" not in page and "//cdn" not in page
        assert "fetch(" not in page and "XMLHttpRequest" not in page
        data = json.loads(page.split('id="dc-data">', 1)[1].split("</script>", 1)[0])
        assert len(data["questions"]) == 4 and data["shards"] == "questions"


class TestWriteReport:
    def test_writes_index_and_shards(self, run: config.RunConfig) -> None:
        """The report goes to outputs/<run>/explorer/index.html, one file per question beside it;
        a stale question file is removed."""
        folder = run.run_dir() / "explorer" / "questions"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "0000000000000000.js").write_text("stale")
        path = explore.write_report(run)
        assert path == run.run_dir() / "explorer" / "index.html" and "q-spider" in path.read_text()
        names = {explore.report.shard_name(q) for q in ("q-sulfur", "q-copper", "q-panda", "q-spider")}
        assert {p.name for p in folder.iterdir()} == names
        assert "Sulfur Cube" in (folder / explore.report.shard_name("q-sulfur")).read_text()


class TestAtPaperSize:
    def test_index_stays_small(self, tmp_path: Path) -> None:
        """1,000 questions x 40 configurations (120,000 responses, 69 MB of response and thinking
        text): the first page stays under 1 MB, holds no response, and every question gets its file.
        The files are written from one configuration's responses here (rendering all 120,000 takes
        about a minute on two cores; benchmarks/bench_explore.py times it)."""
        cfg = explorer_run.paper_sized_project(tmp_path / "paper", n_configs=40, n_questions=1000)
        frame = explore.load(cfg)
        assert frame.height == 120_000 and frame["question_id"].n_unique() == 1000
        html = explore.report_html(frame, run=cfg.run)
        data = json.loads(html.split('id="dc-data">', 1)[1].split("</script>", 1)[0])
        assert len(data["questions"]) == 1000 and len(data["configs"]) == 40
        assert len(html.encode()) < 1_000_000 and "Response " not in html
        one = frame.filter(pl.col("model") == frame["model"].min(), pl.col("thinking") == "off")
        page = explore.write_explorer(one, None, tmp_path / "explorer" / "index.html", run=cfg.run)
        shards = {p.name: p for p in (page.parent / "questions").glob("*.js")}
        assert len(shards) == 1000
        first = shards[explore.report.shard_name(frame["question_id"][0])].read_text()
        assert first.startswith("dcShard(") and "Response " in first


def sections(html: str) -> dict[str, str]:
    """Rendered question sections by id, the page's scripts left out (its JavaScript writes them)."""
    parts = re.split(r'(?=<section class="dc-q" id="q-)', re.sub(r"<script\b.*?</script>", "", html, flags=re.S))
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
        """#q=copper shows q-copper, with its responses once opened, and hides every other question."""
        page, _ = built
        shown = sections(browser.dom(page, tmp_path, "q=copper&open=q-copper"))
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
        html = browser.dom(page, tmp_path, "transition=A-X&open=q-sulfur")
        sulfur = sections(html)["q-sulfur"]
        assert "The Magma Cube (sometimes called a 'Sulfur Cube')" in sulfur and "Magma Cube sizes" in sulfur
        assert len(re.findall(r'class="dc-row dc-\w+ dc-hit"', sulfur)) == 2
        assert "1 of 4 questions" in html

    def test_markdown_rendered(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """An opened question shows its responses rendered from markdown, their HTML escaped."""
        page, _ = built
        copper = sections(browser.dom(page, tmp_path, "q=copper&open=q-copper"))["q-copper"]
        assert "There is <strong>no such thing</strong>: &lt;b&gt;none&lt;/b&gt;." in copper and "**" not in copper

    def test_combined_and_empty(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Filters combine: m1 never exhausted its budget, so nothing matches."""
        page, _ = built
        html = browser.dom(page, tmp_path, "flag=exhausted&model=m1")
        assert sections(html) == {} and "No question matches" in html

    def test_model_hides_rows(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Picking a model hides the other models' responses."""
        page, _ = built
        panda = sections(browser.dom(page, tmp_path, "model=m2&q=panda&open=q-panda"))["q-panda"]
        rows = re.findall(r'<tr class="dc-row ([^"]*)" data-config="([^"]+)"', panda)
        assert rows and all(("dc-hidden" in cls) == (cfg != "m2|off") for cls, cfg in rows)

    def test_chunk_text_on_open(self, built: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """Opening a chunk's <details> fills its text from the question's file."""
        page, _ = built
        opener = (
            '<script>document.addEventListener("dc-opened",()=>'
            'document.querySelectorAll("details[data-chunk]").forEach(d=>{d.open=true;}));</script>'
        )
        copy = page.with_name("open.html")
        copy.write_text(page.read_text().replace("<script>", opener + "<script>", 1))  # before the page's script
        html = browser.chromium(copy, tmp_path, "q=panda&open=q-panda", "--dump-dom", "--virtual-time-budget=2000")[0]
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
        cfg = default_run.config_or_skip("verify", "judge")
        page = explore.write_report(cfg, out=tmp_path / "index.html")
        frame = explore.load(cfg)
        first = frame["question_id"][0]
        html = browser.dom(page, tmp_path, f"open={first}")
        assert ready_ms(html) <= 2000
        rows = frame.filter(pl.col("question_id") == first)
        assert sections(html)[first].count('<tr class="dc-row ') == rows.height
        hidden = sections(browser.dom(page, tmp_path, f"q={first}"))
        assert first in hidden and len(hidden) == explore.search(frame, first).height


@pytest.fixture(scope="module")
def paper_sized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame]:
    """The first page of 1,000 questions x 40 configurations, with question files from one
    configuration's responses (all 120,000 take about a minute to render; bench_explore.py times them)."""
    base = tmp_path_factory.mktemp("paper")
    cfg = explorer_run.paper_sized_project(base / "project", n_configs=40, n_questions=1000)
    frame = explore.load(cfg)
    one = frame.filter(pl.col("model") == frame["model"].min(), pl.col("thinking") == "off")
    page = explore.write_explorer(one, None, base / "explorer" / "index.html", run=cfg.run)
    page.write_text(explore.report_html(frame, run=cfg.run))
    return page, frame


@pytest.mark.slow
@pytest.mark.skipif(not browser.CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)")
class TestPaperSizeInBrowser:
    def test_filter_and_open(self, paper_sized: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """At 1,000 questions x 40 configurations a filter over all of them shows what the Python
        filter finds, and an opened question's responses load from its file."""
        page, frame = paper_sized
        first = frame["question_id"].sort()[0]
        want = explore.judge_disagreements(frame)["question_id"].n_unique()
        html = browser.dom(page, tmp_path, f"flag=judges&open={first}")
        assert f'data-matches="{want}"' in html and 0 < want
        opened = sections(browser.dom(page, tmp_path, f"q={first.lower()}&open={first}"))
        assert list(opened) == [first] and "Response " in opened[first] and "data-open-ms" in opened[first]

    def test_open_past_the_first_page(self, paper_sized: tuple[Path, pl.DataFrame], tmp_path: Path) -> None:
        """A question opened by a link shows with its responses even past the first 50 listed."""
        page, frame = paper_sized
        last = frame["question_id"].sort()[-1]
        shown = sections(browser.dom(page, tmp_path, f"open={last}"))
        assert len(shown) == 51 and "Response " in shown[last]
