"""Tests for declinecraft.explore.markup: the page templates' environment and filters."""

from __future__ import annotations

import jinja2
import pytest

from declinecraft.explore import markup


class TestMarkup:
    @pytest.mark.parametrize(("value", "shown"), [(None, "–"), (1.0, "1"), (0.0, "0"), (0.5, "0.5"), (0.125, "0.12")])
    def test_number(self, value: float | None, shown: str) -> None:
        """Scores show without trailing zeros; a missing one as a dash."""
        assert markup.number(value) == shown

    def test_environment(self) -> None:
        """Templates escape values, render None as nothing and refuse names they were not given."""
        env = markup.environment()
        assert env.from_string("<b>{{ a }}</b>{{ b }}").render(a="<i>&", b=None) == "<b>&lt;i&gt;&amp;</b>"
        with pytest.raises(jinja2.UndefinedError):
            env.from_string("{{ nope }}").render()

    def test_templates_are_files(self) -> None:
        """The HTML, CSS and JavaScript are package files, none of them markup in Python."""
        names = set(markup.environment().list_templates())
        assert {
            "question.html.j2",
            "parts.html.j2",
            "question.css",
            "report.html.j2",
            "report.css",
            "report.js",
        } <= names


class TestMarkdown:
    def test_rendered(self) -> None:
        """Bold, lists, code and tables are rendered as HTML, not shown as raw ``**…**``."""
        html = markup.markdown("**Four** points:\n\n- iron\n- `gold`\n\n| a | b |\n|---|---|\n| 1 | 2 |")
        assert "<strong>Four</strong>" in html and "<li>iron</li>" in html and "<code>gold</code>" in html
        assert "<td>1</td>" in html and "**" not in html

    @pytest.mark.parametrize(
        ("text", "absent"),
        [
            ("<script>alert(1)</script>", "<script"),
            ('<img src=x onerror="alert(1)">', "<img"),
            ("[click](javascript:alert(1))", "javascript:"),
            ("[file](file:///etc/passwd)", "file:"),
            ("![pixel](https://tracker.example/p.png)", "<img"),
            ('<a href="https://x.example" onclick="alert(1)">x</a>', "<a "),
        ],
    )
    def test_sanitised(self, text: str, absent: str) -> None:
        """Raw HTML is escaped, links other than http(s)/mailto are dropped, images fetch nothing."""
        assert absent not in markup.markdown(text)

    def test_safe_link_kept(self) -> None:
        """An https link stays a link, opening in a new tab without access to the page."""
        html = markup.markdown('[wiki](https://minecraft.wiki/w/Panda?a=1&b="2")')
        assert '<a href="https://minecraft.wiki/w/Panda?a=1&amp;b=%222%22" target="_blank"' in html

    def test_in_the_question_view(self) -> None:
        """Templates render a response through the filter (escaped, then marked up)."""
        env = markup.environment()
        assert env.from_string("{{ r|markdown }}").render(r="*a* <b>") == "<p><em>a</em> &lt;b&gt;</p>\n"
