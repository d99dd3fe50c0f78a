"""Tests for declinecraft.corpus.clean: each Appendix D rule on hand-written wikitext with a known result."""

from __future__ import annotations

import pytest

from declinecraft.core import config
from declinecraft.corpus import clean

CASES = {
    # Appendix D rules
    "template_last_argument": ("Craft a {{ItemLink|id=gold|Golden Apple}} now.", "Craft a Golden Apple now."),
    "template_named_last": ("{{Infobox|title=Apple|health=20}}", "20"),
    "template_no_argument": ("Text{{Stub}} here.", "Text here."),
    "template_nested": ("{{A|x|{{B|y|[[Cow|cows]]}}}}", "cows"),
    "parser_function": ("{{#if: yes | then | else}}", "else"),
    "link_display": ("Breed [[Cow|cows]] and [[sheep]].", "Breed cows and sheep."),
    "link_trail": ("Two [[apple]]s.", "Two apples."),
    "link_section": ("See [[Apple#Usage]] and [[#Obtaining]].", "See Apple#Usage and Obtaining."),
    "gallery": ("A<gallery>\nA.png|cap\nB.png\n</gallery>B", "AB"),
    "comment": ("A<!-- hidden\nnote -->B", "AB"),
    "file_embed": ("A[[File:Apple.png|thumb|An [[apple]] icon]]B[[Image:x.png]]C", "ABC"),
    "interlanguage": ("Apple[[de:Apfel]][[zh:苹果]][[pt-br:Maçã]]", "Apple"),
    "table_kept": (
        '{| class="wikitable"\n! Item !! Hunger\n|-\n| {{ItemLink|Apple}} || [[Hunger|4]]\n|}',
        '{| class="wikitable"\n! Item !! Hunger\n|-\n| Apple || 4\n|}',
    ),
    # our documented decisions
    "ref_removed": ("Fact.<ref name=a>{{cite|Source}}</ref> More.<ref name=a/>", "Fact. More."),
    "references_removed": ("Text\n<references />", "Text"),
    "category_removed": ("Text [[Category:Food]][[category:Items|Apple]]", "Text"),
    "colon_links_kept": ("[[:Category:Food|all food]] and [[:File:A.png]]", "all food and File:A.png"),
    "bold_italic": ("'''Bold''' and ''italic''.", "Bold and italic."),
    "html_tags": ("<span style='x'>red</span> <code>/give</code><br/>line", "red /give\nline"),
    "nowiki_raw": ("<nowiki>[[not a link]]</nowiki>", "[[not a link]]"),
    "includeonly": ("A<includeonly>hidden</includeonly><noinclude>B</noinclude>", "AB"),
    "lists_kept": ("* one\n* two [[x]]\n# three", "* one\n* two x\n# three"),
    "entities": ("5&nbsp;blocks &amp; more", "5 blocks & more"),
    "external_link": (
        "[https://minecraft.net Minecraft site] and https://example.org",
        "Minecraft site and https://example.org",
    ),
    "argument_default": ("{{{1|default}}}{{{2}}}", "default"),
    "magic_word": ("__NOTOC__Text", "Text"),
    "blank_lines": ("A\n\n\n\n  \nB   \n", "A\n\nB"),
}


class TestWikitextToText:
    @pytest.mark.parametrize("case", sorted(CASES))
    def test_rules(self, case: str) -> None:
        """Each cleaning rule gives the hand-computed text."""
        wikitext, expected = CASES[case]
        assert clean.wikitext_to_text(wikitext) == expected

    @pytest.mark.parametrize("section", config.CorpusParams().drop_sections)
    def test_drops_each_section(self, section: str) -> None:
        """Every section named in Appendix D is dropped with its body; its neighbours stay."""
        text = f"Intro.\n== {section} ==\nGONE\n== Usage ==\nKept."
        assert clean.wikitext_to_text(text) == "Intro.\nUsage\nKept."

    def test_drops_subsections(self) -> None:
        """A dropped section takes its sub-sections; the next same-level heading ends it."""
        text = "A\n== History ==\nx\n=== Java Edition ===\ny\n==== Beta ====\nz\n== Behavior ==\nB\n=== Riding ===\nC"
        assert clean.wikitext_to_text(text) == "A\nBehavior\nB\nRiding\nC"

    def test_drops_by_prefix(self) -> None:
        """Headings starting with a dropped name (Joke mobs, Removed features) go too, case-insensitively."""
        text = "A\n== Joke mobs ==\nx\n== removed  features ==\ny\n== Jokers ==\nkept"
        assert clean.wikitext_to_text(text) == "A\nJokers\nkept"

    def test_subsection_of_kept_section_can_drop(self) -> None:
        """A dropped level-3 section inside a kept section ends at the next level-3 heading."""
        text = "== Usage ==\nu\n=== Sounds ===\ns\n=== Crafting ===\nc"
        assert clean.wikitext_to_text(text) == "Usage\nu\nCrafting\nc"

    def test_heading_with_markup(self) -> None:
        """A heading is matched on its cleaned text ([[Trivia]] is Trivia)."""
        assert clean.wikitext_to_text("A\n== [[Trivia]] ==\nx") == "A"

    def test_custom_sections(self) -> None:
        """drop_sections overrides the paper's list."""
        text = "A\n== Usage ==\nu\n== History ==\nh"
        assert clean.wikitext_to_text(text, drop_sections=("Usage",)) == "A\nHistory\nh"

    def test_defaults_match_params(self) -> None:
        """The module's default sections are the run params' default (one list, the paper's)."""
        assert clean.DROP_SECTIONS == config.CorpusParams().drop_sections

    def test_unbalanced_markup(self) -> None:
        """Unbalanced markup is kept as text rather than raising or losing the page."""
        assert clean.wikitext_to_text("Open {{template and [[link") == "Open {{template and [[link"
