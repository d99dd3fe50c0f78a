"""The annotators' forms: one self-contained HTML page per sheet, whose labels download as CSV.

App. I's shared annotation set (:mod:`declinecraft.analysis.annotation`) and ESB's validation
sample (:mod:`declinecraft.views.evidence.validation`) are both labelled on such a page: one
``<section class="item" data-item="...">`` card per item, each question of the card a group of
radio buttons (:func:`radios`), and a button that downloads ``<annotator>.csv`` with one row per
card: ``item_id`` and one column per question, empty where the card does not ask it or it was left
unanswered. No network and no script library: the page works opened from disk.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

#: The page's script: the labels as CSV (``labels()``), the count of labelled cards, the download.
_SCRIPT = r"""
const COLUMNS = COLUMNS_JSON;
function quoted(value) {
  return /[",\n]/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
}
function labels() {
  const rows = [COLUMNS];
  document.querySelectorAll("section.item").forEach(item => {
    rows.push([item.dataset.item, ...COLUMNS.slice(1).map(column => {
      const checked = item.querySelector('input[data-column="' + column + '"]:checked');
      return checked ? checked.value : "";
    })]);
  });
  return rows.map(row => row.map(quoted).join(",")).join("\n") + "\n";
}
function count() {
  const items = [...document.querySelectorAll("section.item")];
  const answered = item => item.querySelectorAll("input:checked").length;
  const done = items.filter(item => answered(item) === item.querySelectorAll("fieldset").length);
  document.getElementById("done").textContent = done.length + " of " + items.length + " labelled";
}
function download() {
  const blob = new Blob([labels()], {type: "text/csv"});
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = (document.getElementById("who").value || "annotator") + ".csv";
  a.click();
}"""

_STYLE = (
    "body{font-family:sans-serif;max-width:56em;margin:2em auto;padding:0 1em} .item{border:1px solid #ccc;\n"
    "padding:.5em 1em;margin:1em 0} h3{margin:.2em 0} .level{font-weight:bold} pre{white-space:pre-wrap;\n"
    "background:#f6f6f6;padding:.4em;max-height:22em;overflow:auto} fieldset{border:0;padding:0;margin:.3em 0}\n"
    "dt{font-weight:bold}"
)


def radios(item: str, column: str, choices: Sequence[str], label: str | None = None) -> str:
    """One question of a card: a radio button per choice, answering ``column`` of ``item``'s row."""
    buttons = " ".join(
        f'<label><input type="radio" name="{html.escape(item)}:{column}" data-column="{column}" '
        f'value="{html.escape(choice)}" onchange="count()"> {html.escape(choice)}</label>'
        for choice in choices
    )
    prefix = f"{label}: " if label else ""
    return f"<fieldset>{prefix}{buttons}</fieldset>"


def page(*, title: str, heading: str, intro: str, cards: Sequence[str], columns: Sequence[str]) -> str:
    """The whole page: ``intro`` (HTML) above the name field and download button, then ``cards``
    (each a ``<section class="item" data-item=...>``); the CSV's header is ``columns`` (``item_id``
    first, then the questions' columns)."""
    script = _SCRIPT.replace("COLUMNS_JSON", json.dumps(list(columns)))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{html.escape(heading)}</h1>
{intro}
<p><input id="who" placeholder="your name"> <button onclick="download()">Download CSV</button>
<span id="done"></span></p>
{"".join(cards)}
<script>{script}</script></body></html>
"""
