"""Wikitext → plain text, following Appendix D ("Cleaning and indexing").

The paper's rules: templates become their last argument, links their display text; galleries,
comments, file embeds and interlanguage links are removed; tables stay as wikitext; sections about
other versions or out-of-game material are dropped (:data:`DROP_SECTIONS`).

Where the paper is silent we chose (and test) the following:

* ``<ref>`` footnotes, ``<references/>`` and category links are removed: they are citations and
  page metadata, not content, and would otherwise leak wikitext into chunks.
* Bold/italic quotes, ``<span>``/``<div>``/``<code>`` and other HTML tags keep only their
  contents; ``<nowiki>``/``<pre>``/``<math>``/``<syntaxhighlight>`` keep their raw contents;
  ``<br>`` becomes a line break; ``<includeonly>`` parts (invisible on the page) are removed.
* List markers (``*``, ``#``, ``:``, ``;``) are kept so list items stay readable as lines.
* Headings of kept sections become a line with the heading text.
* Parser functions (``{{#if:…}}``) are templates too, so they also become their last argument;
  a template without arguments disappears; ``{{{1|x}}}`` becomes its default ``x``.
* Inside a kept table, cell contents are cleaned with the same rules, but the table markup
  (``{|``, ``|-``, ``||``, ``!``, ``|}``) and cell attributes are kept verbatim.
* A section is dropped when its heading (lower-cased, cleaned) equals a name in
  ``drop_sections`` or starts with it followed by a space, so ``Joke`` also drops "Joke mobs"
  and the paper's "Unimplemented and Removed mobs and features" is read as the prefixes
  ``Unimplemented`` and ``Removed``; the section's sub-sections go with it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import mwparserfromhell
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Node,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

from declinecraft.core.params import DROP_SECTIONS

FILE_PREFIXES = ("file", "image", "media")
#: Interlanguage prefixes (the languages minecraft.wiki links to, plus common ISO codes).
LANGUAGE_PREFIXES = frozenset(
    "ar be bg bn ca cs cy da de el en eo es et eu fa fi fil fr ga gl he hi hr hu hy id is it ja "
    "ka kk ko la lt lv lzh mk ml mn ms mt my nb nl nn no pl pt pt-br ro ru sk sl sq sr sv sw ta "
    "th tl tr tt uk ur uz vi zh zh-cn zh-hk zh-tw".split()
)
TABLE_TAGS = frozenset({"table", "tr", "td", "th", "caption"})
LIST_TAGS = frozenset({"li", "dt", "dd"})
RAW_TAGS = frozenset({"nowiki", "pre", "math", "syntaxhighlight", "source", "chem"})
REMOVED_TAGS = frozenset({"ref", "references", "gallery", "includeonly", "templatedata", "hr"})
MAGIC_WORD_RE = re.compile(r"__[A-Z]+__")


def wikitext_to_text(wikitext: str, *, drop_sections: Iterable[str] = DROP_SECTIONS) -> str:
    """Return the readable text of a page's wikitext under the Appendix D rules (see module doc).

    Args:
        wikitext: one revision's wikitext.
        drop_sections: section names whose sections (with sub-sections) are removed.
    """
    code = mwparserfromhell.parse(wikitext)
    names = tuple(_norm(name) for name in drop_sections)
    kept: list[Node] = []
    skip_level = 0  # > 0 while inside a dropped section of that heading level
    for node in code.nodes:
        if isinstance(node, Heading):
            if skip_level and node.level > skip_level:
                continue
            skip_level = 0
            if _dropped(_render(node.title), names):
                skip_level = node.level
                continue
        if not skip_level:
            kept.append(node)
    return _tidy("".join(_node_text(node) for node in kept))


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _dropped(heading: str, names: tuple[str, ...]) -> bool:
    title = _norm(heading)
    return any(title == name or title.startswith(name + " ") for name in names)


def _render(code: Wikicode) -> str:
    return "".join(_node_text(node) for node in code.nodes)


def _node_text(node: Node) -> str:
    if isinstance(node, Text):
        return node.value
    if isinstance(node, Template):
        return _render(node.params[-1].value).strip() if node.params else ""
    if isinstance(node, Wikilink):
        return _link_text(node)
    if isinstance(node, Tag):
        return _tag_text(node)
    if isinstance(node, HTMLEntity):
        return node.normalize()
    if isinstance(node, Heading):
        return _render(node.title).strip()
    if isinstance(node, ExternalLink):
        return _render(node.title).strip() if node.title is not None else ("" if node.brackets else str(node.url))
    if isinstance(node, Argument):
        return _render(node.default) if node.default is not None else ""
    if isinstance(node, Comment):
        return ""
    return str(node)


def _link_text(link: Wikilink) -> str:
    target = str(link.title).strip()
    colon = target.startswith(":")  # [[:Category:X]] and [[:File:X]] are plain links
    bare = target.lstrip(":")
    prefix = bare.split(":", 1)[0].strip().lower() if ":" in bare else ""
    if not colon and (prefix in FILE_PREFIXES or prefix == "category" or prefix in LANGUAGE_PREFIXES):
        return ""
    if link.text is not None:
        shown = _render(link.text).strip()
        if shown:
            return shown
    return bare.lstrip("#").strip()


def _tag_text(tag: Tag) -> str:
    name = str(tag.tag).strip().lower()
    if name in REMOVED_TAGS:
        return ""
    if name in TABLE_TAGS and tag.wiki_markup:
        _clean_in_place(tag)
        return str(tag)
    if name in LIST_TAGS and tag.wiki_markup:
        return str(tag.wiki_markup)
    if name == "br":
        return "\n"
    if tag.contents is None:
        return ""
    if name in RAW_TAGS:
        return html.unescape(str(tag.contents))
    return _render(tag.contents)


def _clean_in_place(tag: Tag) -> None:
    # Tables stay wikitext: replace each non-table node inside by its cleaned text, keep the rest.
    if tag.contents is None:
        return
    nodes: list[Node] = []
    for node in tag.contents.nodes:
        if isinstance(node, Tag) and str(node.tag).strip().lower() in TABLE_TAGS and node.wiki_markup:
            _clean_in_place(node)
            nodes.append(node)
        elif isinstance(node, Text):
            nodes.append(node)
        else:
            nodes.append(Text(_node_text(node)))
    tag.contents.nodes = nodes


def _tidy(text: str) -> str:
    text = MAGIC_WORD_RE.sub("", text).replace("\u00a0", " ")
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
