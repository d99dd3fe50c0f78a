"""Tests for declinecraft.core.annotation_form: the annotators' self-contained HTML page."""

from __future__ import annotations

import json

from declinecraft.core import annotation_form


class TestRadios:
    def test_one_button_per_choice(self) -> None:
        """Each choice is a radio of the item's group, answering its column; item and choices escaped."""
        html = annotation_form.radios('q<1>"', "label", ["ANSWER", "A&B"], label="Label")
        assert html.startswith("<fieldset>Label: ") and html.endswith("</fieldset>")
        assert html.count('type="radio"') == 2 and html.count('data-column="label"') == 2
        assert 'name="q&lt;1&gt;&quot;:label"' in html and 'value="A&amp;B"' in html
        assert "q<1>" not in html

    def test_no_label(self) -> None:
        """Without a label the fieldset holds only the buttons."""
        assert annotation_form.radios("q1", "c", ["x"]).startswith("<fieldset><label>")


class TestPage:
    def test_cards_and_columns(self) -> None:
        """The page holds its cards in order, escapes its title and heading, and its script names
        the CSV's columns; it loads nothing from the network."""
        cards = ['<section class="item" data-item="a">A</section>', '<section class="item" data-item="b">B</section>']
        page = annotation_form.page(
            title="T <1>", heading="H & co", intro="<p>intro</p>", cards=cards, columns=["item_id", "label"]
        )
        assert "<title>T &lt;1&gt;</title>" in page and "<h1>H &amp; co</h1>" in page and "<p>intro</p>" in page
        assert page.index(cards[0]) < page.index(cards[1])
        assert f"const COLUMNS = {json.dumps(['item_id', 'label'])};" in page
        assert "http://" not in page and "https://" not in page and "src=" not in page
