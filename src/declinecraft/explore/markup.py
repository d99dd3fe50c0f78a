"""The Jinja2 environment that renders the explorer's HTML from the package's ``templates/`` folder.

Autoescaping is on, so every value from the run (responses, chunk texts, titles) is escaped; the
templates alone hold markup, CSS and JavaScript. ``None`` renders as nothing, as a missing value
should in a table cell, and a name a template gets wrong is an error rather than a blank.

Responses are shown rendered from their markdown (the ``markdown`` filter, :func:`markdown`) by
mistune, the renderer nbconvert uses, with raw HTML escaped, links kept only to ``http(s)`` and
``mailto`` addresses, and images shown as their alt text (a page that opens from disk fetches
nothing).
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2
import mistune
from markupsafe import Markup, escape
from mistune.renderers.html import HTMLRenderer


def number(value: float | None) -> str:
    """A score as shown: ``–`` when missing, whole numbers without decimals, else up to two decimals."""
    if value is None:
        return "–"
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def thousands(value: int) -> str:
    """An integer with thousands separators (``12,345``)."""
    return f"{value:,}"


#: Link schemes a rendered response may keep; any other link is shown as its text alone.
SAFE_SCHEMES = ("http://", "https://", "mailto:")


class _SafeRenderer(HTMLRenderer):
    """mistune's HTML renderer with raw HTML escaped, unsafe links dropped and images as alt text."""

    def __init__(self) -> None:
        super().__init__(escape=True)

    def link(self, text: str, url: str, title: str | None = None) -> str:
        """A link to an http(s) or mailto address, opening in a new tab; any other is its text."""
        if not url.lower().startswith(SAFE_SCHEMES):
            return text
        return f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer">{text}</a>'

    def image(self, text: str, url: str, title: str | None = None) -> str:
        """An image as its alt text: nothing is fetched."""
        return f'<span class="dc-img">[image: {text}]</span>'


@functools.cache
def _markdown() -> mistune.Markdown:
    return mistune.Markdown(
        _SafeRenderer(), plugins=[mistune.plugins.import_plugin(n) for n in ("strikethrough", "table")]
    )


def markdown(text: str | None) -> Markup:
    """A response's markdown as sanitised HTML (raw HTML escaped, only http(s)/mailto links, no
    images); ``""`` for None."""
    if not text:
        return Markup("")
    return Markup(str(_markdown()(text)))


def _blank_none(value: Any) -> Any:
    return "" if value is None else value


@functools.cache
def environment() -> jinja2.Environment:
    """The explorer's template environment (built once)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("declinecraft.explore", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_blank_none,
        # Line breaks after block tags are layout of the template, not of the page.
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=number, thousands=thousands, markdown=markdown)
    # The report's data travels as compact JSON; non-ASCII stays as is (the page is UTF-8).
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "separators": (",", ":")}
    return env


def render(template: str, **context: Any) -> str:
    """Render one of the explorer's templates."""
    return environment().get_template(template).render(**context)
