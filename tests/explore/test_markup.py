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
