"""Rendering of the explorer (:mod:`declinecraft.explore.frame`): one question as HTML or text, and the
JupyterLab widget view. The static report page that reuses :func:`question_html` is built by
:mod:`declinecraft.explore.report`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

import polars as pl

from declinecraft.explore import frame as explore
from declinecraft.explore.frame import QuestionView, setting_order

#: Thinking traces in the report are cut to this many characters (the notebook view shows them whole).
TRACE_CHARS = 8000
LABEL_OPTIONS = [("any", "*"), ("ABSTAIN", "A"), ("DENY", "D"), ("ANSWER", "X"), ("no label", "-")]


def hits_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A response's retrieved chunks in order: chunk_id, rank, component ranks, round, target, scenario."""
    ids = list(row.get("retrieved_chunk_ids") or [])
    try:
        ranks = json.loads(row.get("component_ranks") or "[]")
    except ValueError:
        ranks = []
    round_of = {c: r.get("index") for r in rounds_of(row) for c in r.get("chunk_ids") or []}
    scenario = set(row.get("scenario_chunk_ids") or [])
    return [{"chunk_id": c, "rank": i + 1, "ranks": ranks[i] if i < len(ranks) and isinstance(ranks[i], dict) else {},
             "round": round_of.get(c), "target": c == row.get("target_chunk_id"), "scenario": c in scenario}
            for i, c in enumerate(ids)]  # fmt: skip


def rounds_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """An iterative response's rounds (queries, new chunk ids, reflection, stop); [] when absent."""
    try:
        rounds = json.loads(row.get("rounds") or "[]")
    except ValueError:
        return []
    return [r for r in rounds if isinstance(r, dict)] if isinstance(rounds, list) else []


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _link(url: str | None, text: str) -> str:
    if url and url.startswith(("http://", "https://")):
        return f'<a href="{_e(url)}" target="_blank" rel="noopener">{_e(text)}</a>'
    return _e(text)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def _label(label: str | None, rule: str | None = None) -> str:
    badge = f'<span class="dc-l dc-l-{_e(label or "none")}">{_e(label or "no label")}</span>'
    return badge + (f' <small title="judge.rule_label">rule {_e(rule)}</small>' if rule and rule != label else "")


def _chunk(view: QuestionView, chunk_id: str, note: str = "") -> str:
    c = view.chunks.get(chunk_id, {})
    title = _link(c.get("url"), c.get("title") or chunk_id) + (
        f" <small>C_{_e(c['corpus'])}</small>" if c.get("corpus") else ""
    )
    summary = f"<summary>{note}{title} <code>{_e(chunk_id)}</code></summary>"
    if c and "text" not in c:  # the report: the page fills the text from its chunk table when opened
        return f'<details class="dc-chunk" data-chunk="{_e(chunk_id)}">{summary}<pre></pre></details>'
    body = f"<pre>{_e(c['text'])}</pre>" if c.get("text") else "<p><i>chunk text not loaded</i></p>"
    return f'<details class="dc-chunk">{summary}{body}</details>'


def _hits(view: QuestionView, row: dict[str, Any]) -> str:
    hits = hits_of(row)
    items = []
    for h in hits:
        tags = ('<span class="dc-tag dc-target">target</span>' if h["target"] else "") + (
            '<span class="dc-tag dc-scen">scenario</span>' if h["scenario"] else "")  # fmt: skip
        ranks = " · ".join(f"{k} {v}" for k, v in h["ranks"].items())
        ranks += f" · round {h['round']}" if h["round"] else ""
        items.append(f"<li>{_chunk(view, h['chunk_id'], tags)}<small>{_e(ranks)}</small></li>")
    found = f"target retrieved at rank {row['target_rank']}" if row.get("target_retrieved") else "target not retrieved"
    scen = f"{row.get('scenario_hits') or 0}/{len(row.get('scenario_chunk_ids') or [])} scenario chunks"
    return (f'<details class="dc-ret"><summary>Retrieved {len(hits)} chunks · {_e(found)} · {_e(scen)}</summary>'
            f"<ol>{''.join(items)}</ol></details>")  # fmt: skip


def _rounds(view: QuestionView, row: dict[str, Any]) -> str:
    parts = []
    for r in rounds_of(row):
        new = ", ".join(_e(view.chunks.get(c, {}).get("title") or c) for c in r.get("chunk_ids") or [])
        queries = _e(" | ".join(r.get("queries") or []))
        text = f"<b>Round {_e(r.get('index'))}</b> · queries: {queries} · new chunks: {new or '–'}"
        if (ref := r.get("reflection")) is not None:
            text += (f"<br>reflection: <b>{_e(ref.get('assessment') or ref.get('status'))}</b>"
                     f" · missing: {_e(ref.get('missing_info') or '–')}"
                     f" · follow-ups: {_e(' | '.join(ref.get('follow_ups') or []) or '–')}")  # fmt: skip
        if r.get("stop"):
            text += f" · stop: {_e(r['stop'])}"
        parts.append(f"<li>{text}</li>")
    if not parts:
        return ""
    summary = f"{len(parts)} round{'s' if len(parts) > 1 else ''}"
    return f'<details class="dc-rounds" open><summary>{summary}</summary><ul>{"".join(parts)}</ul></details>'


def _row(view: QuestionView, row: dict[str, Any], with_hits: bool, trace_chars: int | None) -> str:
    scores = " · ".join(f"{j} {_num(row.get('score_' + j))}" for j in view.judges if row.get("score_" + j) is not None)
    accuracy = "" if row.get("accuracy") is None and not scores else f"<br>accuracy {_num(row.get('accuracy'))}"
    verdict = "" if row.get("failed") is None else ("dc-fail" if row["failed"] else "dc-ok")
    trace = row.get("thinking_trace") or ""
    cell = f'<div class="dc-text">{_e(row.get("response") or "")}</div>'
    if row.get("error"):
        cell += f'<div class="dc-err">error: {_e(row["error"])}</div>'
    if row.get("budget_exhausted"):
        cell += '<div class="dc-err">budget exhausted (finish_reason ' + _e(row.get("finish_reason")) + ")</div>"
    if trace:
        cut = f"\n[… {len(trace) - trace_chars:,} more characters: explore.show() has the whole trace]" \
            if trace_chars is not None and len(trace) > trace_chars else ""  # fmt: skip
        body = _e(trace[:trace_chars] if cut else trace) + _e(cut)
        cell += f"<details><summary>thinking trace ({len(trace):,} chars)</summary><pre>{body}</pre></details>"
    cell += _rounds(view, row) + (_hits(view, row) if with_hits and row.get("retrieved_chunk_ids") else "")
    config = f"{row['model']}|{row['thinking']}"
    return (f'<tr class="dc-row {verdict}" data-config="{_e(config)}" data-setting="{_e(row["setting"])}">'
            f'<td class="dc-m">{_e(row["model"])}<br><small>thinking {_e(row["thinking"])}</small></td>'
            f'<td class="dc-v">{_label(row.get("label"), row.get("rule_label"))}{accuracy}'
            f"<br><small>{_e(scores)}</small></td><td>{cell}</td></tr>")  # fmt: skip


def _grid(view: QuestionView) -> str:
    """Labels at a glance: one row per configuration, one column per setting."""
    settings = view.settings()
    cells = {(f"{r['model']}|{r['thinking']}", r["setting"]): r for r in view.rows}
    head = "".join(f"<th>{_e(s)}</th>" for s in settings)
    body = []
    for config in dict.fromkeys(c for c, _ in cells):
        model, thinking = config.rsplit("|", 1)
        tds = []
        for s in settings:
            r = cells.get((config, s))
            mark = "" if r is None or r.get("failed") is None else (" ✗" if r["failed"] else " ✓")
            tds.append("<td></td>" if r is None else f"<td>{_label(r.get('label'))}{mark}</td>")
        name = f"<td>{_e(model)} <small>thinking {_e(thinking)}</small></td>"
        body.append(f'<tr class="dc-row" data-config="{_e(config)}">{name}{"".join(tds)}</tr>')
    return f'<table class="dc-grid"><tr><th></th>{head}</tr>{"".join(body)}</table>'


def _shared(rows: list[dict[str, Any]]) -> bool:
    """Whether every response of a setting saw the same chunks (single-shot: one query, one list)."""
    return len({tuple(r.get("retrieved_chunk_ids") or ()) for r in rows}) == 1 and rows[0]["condition"] != "iterative"


def question_html(view: QuestionView, *, standalone: bool = False, trace_chars: int | None = None) -> str:
    """One question's section; ``standalone`` adds the stylesheet (for Jupyter); thinking traces are
    cut to ``trace_chars`` characters when given (the report, where traces of 16,000-token budgets
    would otherwise dominate the page)."""
    q = view.question
    kind = "answerable" if q.get("answerable") else "unanswerable"
    qid = _e(q["question_id"])
    page = _link(q.get("target_url"), q.get("target_title") or "?")
    h2 = f'<h2><code>{qid}</code> <span class="dc-b dc-{kind}">{kind}</span> target page {page}</h2>'
    out = [f'<section class="dc-q" id="q-{qid}" data-id="{qid}">{h2}<dl class="dc-meta">']
    for name, key in (("Scenario", "scenario_text"), ("Question", "asked_question"), ("Fact", "fact"),
                      ("Reference answer", "reference")):  # fmt: skip
        out.append(f"<dt>{name}</dt><dd>{_e(q.get(key) or '–')}</dd>")
    out.append("</dl>" + _grid(view))
    if q.get("target_chunk_id"):
        out.append(_chunk(view, q["target_chunk_id"], '<span class="dc-tag dc-target">target chunk</span>'))
    for c in q.get("scenario_chunk_ids") or []:
        out.append(_chunk(view, c, '<span class="dc-tag dc-scen">scenario chunk</span>'))
    for setting in view.settings():
        rows = [r for r in view.rows if r["setting"] == setting]
        shared, head = _shared(rows), rows[0]
        detail = "" if head["condition"] == "no_rag" else f"{head['pipeline']} · k={head['k']}"
        out.append(f'<div class="dc-set" data-setting="{_e(setting)}"><h3>{_e(setting)} <small>{_e(detail)}</small>'
                   "</h3>")
        if shared and head.get("retrieved_chunk_ids"):
            out.append(_hits(view, head))
        table = "".join(_row(view, r, not shared, trace_chars) for r in rows)
        out.append(f'<table class="dc-resp">{table}</table></div>')
    out.append("</section>")
    return (f"<style>{CSS}</style>" if standalone else "") + "".join(out)


def question_text(view: QuestionView, *, thinking: bool = False) -> str:
    """One question as plain text (the terminal form of :func:`explore.show`)."""
    q = view.question
    lines = [f"{q['question_id']} · {'answerable' if q.get('answerable') else 'unanswerable'} · target page "
             f"{q.get('target_title')} ({q.get('target_chunk_id')}) {q.get('target_url') or ''}".rstrip()]  # fmt: skip
    for name, key in (("Scenario", "scenario_text"), ("Question", "asked_question"), ("Fact", "fact"),
                      ("Reference", "reference")):  # fmt: skip
        lines.append(f"{name}: {q.get(key) or '–'}")

    def title(c: str) -> str:
        return f"{view.chunks.get(c, {}).get('title') or '?'} ({c})"

    lines.append("Scenario chunks: " + (", ".join(title(c) for c in q.get("scenario_chunk_ids") or []) or "–"))
    def hits(row: dict[str, Any], indent: str) -> list[str]:
        out = []
        for h in hits_of(row):
            mark = (" *target*" if h["target"] else "") + (" [scenario]" if h["scenario"] else "")
            ranks = ", ".join(f"{k} {v}" for k, v in h["ranks"].items())
            out.append(f"{indent}{h['rank']:>2}. {title(h['chunk_id'])}{mark} {ranks}".rstrip())
        return out

    for setting in view.settings():
        rows = [r for r in view.rows if r["setting"] == setting]
        shared = _shared(rows)
        lines += [f"\n== {setting} =="] + (["  retrieved:", *hits(rows[0], "  ")] if shared and hits_of(rows[0]) else [])
        for r in rows:
            scores = ", ".join(f"{j} {_num(r.get('score_' + j))}" for j in view.judges if r.get("score_" + j) is not None)
            rule = f" (rule {r['rule_label']})" if r.get("rule_label") and r.get("rule_label") != r.get("label") else ""
            accuracy = f" · accuracy {_num(r.get('accuracy'))}" if scores or r.get("accuracy") is not None else ""
            lines.append(f"- {r['model']} (thinking {r['thinking']}): {r.get('label') or 'no label'}{rule}{accuracy}"
                         + (f" [{scores}]" if scores else ""))  # fmt: skip
            lines += [] if shared else hits(r, "    ")
            for rd in rounds_of(r):
                ref = rd.get("reflection") or {}
                said = f"; {ref.get('assessment') or ref.get('status')}: {ref.get('missing_info') or ''} " \
                    f"follow-ups {ref.get('follow_ups')}" if ref else ""  # fmt: skip
                said += f"; stop: {rd['stop']}" if rd.get("stop") else ""
                new = len(rd.get("chunk_ids") or [])
                lines.append(f"    round {rd.get('index')}: queries {rd.get('queries')} -> {new} new{said}")
            lines += ["    " + line for line in (r.get("response") or "").splitlines() or [""]]
            if r.get("thinking_trace"):
                trace = r["thinking_trace"]
                if thinking:
                    lines += ["    thinking:"] + ["      " + x for x in trace.splitlines()]
                else:
                    lines.append(f"    (thinking trace: {len(trace):,} chars; text(thinking=True) shows it)")
    return "\n".join(lines)


# --- JupyterLab widgets ------------------------------------------------------------------------


class Browser:
    """Dropdowns for model, setting and filter, a search box and paging over questions."""

    def __init__(self, frame: pl.DataFrame, *, questions: pl.DataFrame | Sequence[str] | None = None,
                 chunks: pl.DataFrame | None = None) -> None:  # fmt: skip
        import ipywidgets as w

        self.frame, self.chunks, self.position = frame, chunks, 0
        settings = setting_order(frame["setting"].unique().to_list())

        def pick(s: str) -> str | None:
            return s if s in settings else (settings[0] if settings else None)

        ids = questions["question_id"] if isinstance(questions, pl.DataFrame) else (questions or [])
        self.given = list(dict.fromkeys(str(q) for q in ids))
        choices = [("given questions", "given")] if questions is not None else []
        choices += [("all questions", "all"), ("label transition between settings", "transition"),
                    ("thinking off → on (in setting)", "thinking")]  # fmt: skip
        choices += [(title, name) for name, (title, _) in explore.FLAGS.items()]
        models = [("all models", "")] + [(m, m) for m in sorted(frame["model"].unique().to_list())]
        self.model = w.Dropdown(options=models, description="model")
        self.setting = w.Dropdown(options=[("all settings", "")] + [(s, s) for s in settings], description="setting")
        self.filter = w.Dropdown(options=choices, description="filter")
        self.before = w.Dropdown(options=settings, value=pick("single"), description="from")
        self.after = w.Dropdown(options=settings, value=pick("iterative"), description="to")
        self.from_label = w.Dropdown(options=LABEL_OPTIONS, value="A", description="label")
        self.to_label = w.Dropdown(options=LABEL_OPTIONS, value="X", description="→ label")
        self.search = w.Text(placeholder="words in question, page, responses", description="search")
        self.prev, self.next = w.Button(description="◀ previous"), w.Button(description="next ▶")
        self.status, self.view = w.Label(), w.HTML()
        for control in (self.model, self.setting, self.filter, self.before, self.after, self.from_label,
                        self.to_label, self.search):  # fmt: skip
            control.observe(lambda _: self.refresh(), names="value")
        self.prev.on_click(lambda _: self.go(-1))
        self.next.on_click(lambda _: self.go(1))
        self.widget = w.VBox([
            w.HBox([self.filter, self.model, self.setting]),
            w.HBox([self.before, self.after, self.from_label, self.to_label]),
            w.HBox([self.search, self.prev, self.next, self.status]), self.view,
        ])  # fmt: skip
        self.refresh()

    def ids(self) -> list[str]:
        """Question ids the current choices select, in order."""
        rows = self.frame.filter(pl.col("model") == self.model.value) if self.model.value else self.frame
        kind, setting = self.filter.value, self.setting.value
        if kind == "given":
            found = self.given
        elif kind == "all":
            found = (rows.filter(pl.col("setting") == setting) if setting else rows)["question_id"].to_list()
        elif kind == "transition":
            found = explore.transitions(rows, self.before.value, self.after.value, from_label=self.from_label.value,
                                        to_label=self.to_label.value)["question_id"].to_list()  # fmt: skip
        elif kind == "thinking":
            found = explore.thinking_changes(rows, setting or "no_rag", from_label=self.from_label.value,
                                             to_label=self.to_label.value)["question_id"].to_list()  # fmt: skip
        else:
            hits = explore.FLAGS[kind][1](rows)
            found = (hits.filter(pl.col("setting") == setting) if setting else hits)["question_id"].to_list()
        if self.search.value.strip():
            matched = set(explore.search(rows, self.search.value.strip())["question_id"])
            found = [q for q in found if q in matched]
        return list(dict.fromkeys(found))

    def refresh(self) -> None:
        """Recompute the question list and show its first question."""
        self.position = 0
        self.go(0)

    def go(self, step: int) -> None:
        """Move ``step`` questions forward (negative: back) and render."""
        ids = self.ids()
        self.position = max(0, min(self.position + step, len(ids) - 1))
        if not ids:
            self.status.value, self.view.value = "0 questions", "<p>No question matches.</p>"
            return
        qid = ids[self.position]
        self.status.value = f"{self.position + 1} / {len(ids)} · {qid}"
        model, setting = self.model.value, self.setting.value
        view = explore.show(qid, self.frame, chunks=self.chunks, models=[model] if model else None,
                            settings=[setting] if setting else None)  # fmt: skip
        self.view.value = view._repr_html_()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


CSS = """
.dc-q{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d232b;border:1px solid #d5dbe3;
border-radius:8px;padding:12px 16px;margin:14px 0;background:#fff}
.dc-q h2{font-size:16px;margin:0 0 6px}.dc-q h3{font-size:14px;margin:14px 0 4px;border-bottom:1px solid #e4e8ee}
.dc-q small{color:#5b6675}.dc-q code{font-size:12px;background:#f1f3f6;padding:0 3px;border-radius:3px}
.dc-meta{display:grid;grid-template-columns:130px 1fr;gap:2px 10px;margin:6px 0}
.dc-meta dt{font-weight:600;color:#46505c}
.dc-meta dd{margin:0}.dc-b,.dc-l,.dc-tag{display:inline-block;font-size:11px;font-weight:600;padding:1px 6px;
border-radius:9px;margin-right:4px}.dc-answerable{background:#dff3e4;color:#17603a}
.dc-unanswerable{background:#fde8d7;color:#8a3d07}.dc-l-ABSTAIN{background:#dde9fb;color:#1e4f9a}
.dc-l-DENY{background:#ece0fb;color:#5b2a98}.dc-l-ANSWER{background:#fff0c2;color:#7a5800}
.dc-l-none{background:#eee;color:#555}.dc-target{background:#1f7a45;color:#fff}.dc-scen{background:#8a5a00;color:#fff}
.dc-resp{border-collapse:collapse;width:100%;margin-top:4px}.dc-resp td{border-top:1px solid #eef1f4;padding:6px;
vertical-align:top}.dc-m{width:150px}.dc-v{width:170px}.dc-row.dc-fail{box-shadow:inset 3px 0 #d0342c}
.dc-row.dc-ok{box-shadow:inset 3px 0 #2c9a55}.dc-row.dc-hit{background:#fffbe6}
.dc-text{white-space:pre-wrap}.dc-err{color:#b3261e}.dc-q pre{white-space:pre-wrap;background:#f6f8fa;
padding:6px;max-height:300px;overflow:auto;font-size:12px}.dc-q details{margin:3px 0}
.dc-q summary{cursor:pointer}.dc-grid{border-collapse:collapse;margin:6px 0;font-size:12px}
.dc-grid th,.dc-grid td{padding:2px 8px;text-align:left;border-bottom:1px solid #eef1f4}
.dc-q ol,.dc-q ul{margin:2px 0;padding-left:22px}.dc-hidden{display:none}
"""
