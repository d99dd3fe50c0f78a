"""The Jinja2 environment that renders the explorer's HTML from the package's ``templates/`` folder.

Autoescaping is on, so every value from the run (responses, chunk texts, titles) is escaped; the
templates alone hold markup, CSS and JavaScript. ``None`` renders as nothing, as a missing value
should in a table cell, and a name a template gets wrong is an error rather than a blank.
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2


def number(value: float | None) -> str:
    """A score as shown: ``–`` when missing, whole numbers without decimals, else up to two decimals."""
    if value is None:
        return "–"
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def thousands(value: int) -> str:
    """An integer with thousands separators (``12,345``)."""
    return f"{value:,}"


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
    env.filters.update(num=number, thousands=thousands)
    # The report's data travels as compact JSON; non-ASCII stays as is (the page is UTF-8).
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "separators": (",", ":")}
    return env


def render(template: str, **context: Any) -> str:
    """Render one of the explorer's templates."""
    return environment().get_template(template).render(**context)
