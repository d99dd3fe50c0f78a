"""Tests for declinecraft.views.evidence.validation: the validation sample, its form for annotators,
the labels read back and ESB's Table 6 from them."""

from __future__ import annotations

import html
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from declinecraft.views.evidence import validation
from tests.support import browser


class TestValidationSample:
    def test_stratified(self) -> None:
        """Per level at most per_level classified responses, levels in order, contexts joined, the
        annotator's columns empty; an unclassified response is never drawn."""
        rows = [
            ("r1", "L1", "ANSWER"),
            ("r2", "L1", "ANSWER"),
            ("r3", "L1", "ABSTAIN"),
            ("r4", "L3", "ANSWER"),
            ("r5", "L3", None),
        ]
        judged = pl.DataFrame(
            [
                {
                    "response_id": r,
                    "instance_id": f"i{lv}",
                    "level": lv,
                    "order": "",
                    "model": "m",
                    "prompt": "P1",
                    "question_id": "q",
                    "query": "Q?",
                    "response": "x",
                    "esb_judge": c,
                    "l5_type": None,
                }
                for r, lv, c in rows
            ],
            schema_overrides={"esb_judge": pl.String, "l5_type": pl.String},
        )
        instances = pl.DataFrame({"instance_id": ["iL1", "iL3"], "context": ["ctx1", "ctx3"]})
        sheet = validation.validation_sample(judged, instances, per_level=2, seed=0)
        assert sheet["level"].to_list() == ["L1", "L1", "L3"] and sheet["item_id"][2] == "r4"
        assert set(sheet["context"]) == {"ctx1", "ctx3"} and set(sheet["human_class"]) == {""}
        assert sheet.columns == [
            "item_id",
            "level",
            "order",
            "model",
            "prompt",
            "question_id",
            "query",
            "context",
            "response",
            "esb_judge",
            "l5_type",
            "level_valid",
            "human_class",
        ]  # what the model read and said, our class, and ESB 7.7's two checks for the annotator


class Form(HTMLParser):
    """What the validation form shows: each card's item and level, and its radio buttons."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.items: list[tuple[str, str]] = []
        self.radios: dict[str, list[tuple[str, str]]] = {}
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("class") == "item":
            self.items.append((str(a["data-item"]), str(a["data-level"])))
        if tag == "input" and a.get("type") == "radio":
            self.radios.setdefault(self.items[-1][0], []).append((str(a["data-column"]), str(a["value"])))


def sheet_of(rows: list[tuple[str, str, str]]) -> pl.DataFrame:
    """A validation sheet of (item, level, our class) rows."""
    return pl.DataFrame(
        [
            {
                **dict.fromkeys(validation.COLUMNS, ""),
                "item_id": item,
                "level": level,
                "order": "conflict_first" if level == "L5" else "",
                "model": "secret-model",
                "prompt": "P1",
                "query": f"What about {item}?",
                "context": "[1] Page <b>bold</b>",
                "response": "It is 20 & more.",
                "esb_judge": cls,
                "l5_type": "pick_gold" if level == "L5" else "",
            }
            for item, level, cls in rows
        ]
    )


class TestSampleHtml:
    def test_every_item_with_its_level(self) -> None:
        """One card per sampled response, in the sheet's order, with its level; each offers level
        valid yes / no and ESB's three classes."""
        sheet = sheet_of([("r1", "L1", "ANSWER"), ("r2", "L5", "ABSTAIN"), ("r3", "T", "INVALID")])
        form = Form(validation.sample_html(sheet, "default"))
        assert form.items == [("r1", "L1"), ("r2", "L5"), ("r3", "T")]
        offered = [
            ("level_valid", "yes"),
            ("level_valid", "no"),
            ("human_class", "ANSWER"),
            ("human_class", "ABSTAIN"),
            ("human_class", "INVALID"),
        ]
        assert form.radios == {item: offered for item, _ in form.items}

    def test_blind_and_escaped(self) -> None:
        """The page shows the level's meaning, the question, evidence and response (escaped), but
        neither the model, the prompt, our class nor the L5 type (changing them changes nothing);
        it says where the labels go."""
        page = validation.sample_html(sheet_of([("r2", "L5", "ABSTAIN")]), "default")
        assert "L5 (conflict first): conflicting evidence" in page and "What about r2?" in page
        assert "[1] Page &lt;b&gt;bold&lt;/b&gt;" in page and "It is 20 &amp; more." in page
        other = sheet_of([("r2", "L5", "ABSTAIN")]).with_columns(
            model=pl.lit("another-model"), prompt=pl.lit("P3"), esb_judge=pl.lit("ANSWER"), l5_type=pl.lit("other")
        )
        assert "secret-model" not in page and validation.sample_html(other, "default") == page
        assert "data/evidence_annotations/default/" in page and "Download CSV" in page

    def test_downloads_what_read_labels_reads(self) -> None:
        """The script's CSV header is the columns read_labels needs, in that order."""
        page = validation.sample_html(sheet_of([("r1", "L1", "ANSWER")]), "default")
        assert 'const COLUMNS = ["item_id", "level_valid", "human_class"];' in page


class TestReadLabels:
    def test_reads_and_checks(self, tmp_path: Path) -> None:
        """Files by annotator name, answers stripped, unanswered ''; a missing column, an item
        labelled twice or an answer the form does not offer is an error naming the file (and the item)."""
        (tmp_path / "ann1.csv").write_text("item_id,level_valid,human_class\nr1,yes ,ANSWER\nr2,,\n")
        got = validation.read_labels(tmp_path)
        assert list(got) == ["ann1"] and got["ann1"].rows() == [("r1", "yes", "ANSWER"), ("r2", "", "")]
        assert validation.read_labels(tmp_path / "none") == {}
        (tmp_path / "bad.csv").write_text("item_id,human_class\nr1,ANSWER\n")
        with pytest.raises(ValueError, match=r"bad.csv: .* lacks \['level_valid'\]"):
            validation.read_labels(tmp_path)
        (tmp_path / "bad.csv").write_text("item_id,level_valid,human_class\nr1,yes,DENY\n")
        with pytest.raises(ValueError, match=r"bad.csv: item r1 has human_class 'DENY'"):
            validation.read_labels(tmp_path)
        (tmp_path / "bad.csv").write_text("item_id,level_valid,human_class\nr1,yes,\nr1,no,\n")
        with pytest.raises(ValueError, match=r"bad.csv: item r1 is labelled twice"):
            validation.read_labels(tmp_path)


class TestAnnotatorAgreement:
    def test_by_hand(self) -> None:
        """ESB Table 6 per level and over all. Our classes r1 ANSWER, r2 ABSTAIN (L1), r3 ABSTAIN,
        r4 ABSTAIN (L5), r5 ANSWER (L3); the annotator: r1 yes ANSWER, r2 yes ABSTAIN, r3 no ANSWER,
        r4 yes ABSTAIN, r5 unanswered, zz (not on the sheet) ignored.
        all: valid 3 of 4; agreement 3 of 4; kappa: p_o 3/4, p_e = 1/2 x 1/4 + 1/2 x 3/4 = 1/2 -> 1/2.
        L1: valid 2 of 2, agreement 2 of 2, kappa (1 - 1/2) / (1 - 1/2) = 1.
        L5: valid 1 of 2, agreement 1 of 2, kappa: p_o 1/2, p_e = 1/2 x 1 = 1/2 -> 0.
        L3: nothing answered: n 0, rates NaN."""
        sheet = sheet_of(
            [("r1", "L1", "ANSWER"), ("r2", "L1", "ABSTAIN"), ("r3", "L5", "ABSTAIN"), ("r4", "L5", "ABSTAIN")]
            + [("r5", "L3", "ANSWER")]
        )
        labels = pl.DataFrame(
            {
                "item_id": ["r1", "r2", "r3", "r4", "r5", "zz"],
                "level_valid": ["yes", "yes", "no", "yes", "", "yes"],
                "human_class": ["ANSWER", "ABSTAIN", "ANSWER", "ABSTAIN", "", "ANSWER"],
            }
        )
        table = validation.annotator_agreement(sheet, {"ann": labels})
        got = {r["level"]: r for r in table.iter_rows(named=True)}
        assert table["level"].to_list() == ["all", "L1", "L3", "L5"] and set(table["annotator"]) == {"ann"}
        want = {"all": (4, 0.75, 4, 0.75, 0.5), "L1": (2, 1.0, 2, 1.0, 1.0), "L5": (2, 0.5, 2, 0.5, 0.0)}
        for level, (n_checked, valid, n_classified, agreement, kappa) in want.items():
            r = got[level]
            assert (r["n_checked"], r["n_classified"]) == (n_checked, n_classified), level
            assert (r["valid"], r["agreement"], r["kappa"]) == pytest.approx((valid, agreement, kappa)), level
        assert (got["L3"]["n_checked"], got["L3"]["n_classified"]) == (0, 0) and math.isnan(got["L3"]["agreement"])


@pytest.mark.slow
@pytest.mark.skipif(not browser.CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)")
def test_form_in_browser(tmp_path: Path) -> None:
    """In headless Chromium, clicking answers on the form and taking its CSV (what the download
    button saves) gives a file read_labels reads back as clicked, unanswered cards empty."""
    sheet = sheet_of([("r1", "L1", "ANSWER"), ("r2", "L5", "ABSTAIN"), ("r3", "T", "INVALID")])
    clicks = """<script>
const card = id => document.querySelector('section[data-item="' + id + '"]');
card("r1").querySelector('input[value="yes"]').click();
card("r1").querySelector('input[value="ANSWER"]').click();
card("r2").querySelector('input[value="no"]').click();
const out = document.createElement("pre"); out.id = "csv"; out.textContent = labels();
document.body.appendChild(out);
</script></body></html>
"""
    page = tmp_path / "form.html"
    page.write_text(validation.sample_html(sheet, "default").replace("</body></html>\n", clicks), encoding="utf-8")
    shown = browser.dom(page, tmp_path)
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "ann.csv").write_text(html.unescape(re.search(r'<pre id="csv">(.*?)</pre>', shown, re.S).group(1)))  # type: ignore[union-attr]
    assert validation.read_labels(folder)["ann"].rows() == [("r1", "yes", "ANSWER"), ("r2", "no", ""), ("r3", "", "")]
    assert re.search(r'<span id="done">1 of 3 labelled</span>', shown)
