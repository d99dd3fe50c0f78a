"""Rendering of the explorer (:mod:`declinecraft.explore`): one question as HTML or text, the
JupyterLab widget view, and the static report page ``outputs/<run>/explorer/index.html``.

The report is one self-contained file: inline CSS and JavaScript, no network. Its data is JSON
in a ``<script type="application/json">`` tag (``<``, ``>`` and ``&`` escaped, so no text can end
the tag): per question a search text, the label of every (configuration, setting), the settings
and configurations where each :data:`explore.FLAGS` filter holds, and the question's section as
HTML rendered by :func:`question_html` (the same view as :func:`explore.show`). The page reads
``location.hash`` on load (``#q=copper&transition=A-X&from=single&to=iterative``) and writes it
back as the controls change, so a filtered view is a link.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft import explore, paths
from declinecraft.config import RunConfig
from declinecraft.explore import QuestionView, setting_order

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


# --- the static report -------------------------------------------------------------------------


def report_data(frame: pl.DataFrame, chunks: pl.DataFrame | None, *, run: str = "") -> dict[str, Any]:
    """The JSON the report embeds: run facts, settings, configurations, flags and one entry per question."""
    code = pl.col("label").replace_strict(explore.CODE_OF, default="-", return_dtype=pl.String)
    labels: dict[str, dict[str, dict[str, str]]] = {}
    for qid, config, setting, c in frame.select(
        "question_id", pl.format("{}|{}", "model", "thinking"), "setting", code
    ).iter_rows():  # fmt: skip
        labels.setdefault(qid, {}).setdefault(config, {})[setting] = c
    flags: dict[str, dict[str, list[list[str | None]]]] = {}
    for name, (_, fn) in explore.FLAGS.items():
        rows = fn(frame)
        per_row = "model" in rows.columns
        for r in rows.iter_rows(named=True):
            entry = [r["setting"], f"{r['model']}|{r['thinking']}" if per_row else None]
            flags.setdefault(r["question_id"], {}).setdefault(name, []).append(entry)
    hay = pl.concat_str([pl.col(c).fill_null("") for c in explore.SEARCH_FIELDS], separator="\n")
    text = dict(frame.group_by("question_id").agg(hay.str.join("\n").str.to_lowercase().alias("t")).iter_rows())
    lists = [frame.select(pl.col(c).explode().alias("id")) for c in ("retrieved_chunk_ids", "scenario_chunk_ids")]
    used = pl.concat([*lists, frame.select(pl.col("target_chunk_id").alias("id"))])["id"].drop_nulls().unique()
    meta = pl.DataFrame(schema={"chunk_id": pl.String, "title": pl.String, "url": pl.String, "corpus": pl.String})
    texts: dict[str, str] = {}
    if chunks is not None:
        chunks = chunks.filter(pl.col("chunk_id").is_in(used.implode()))
        meta, texts = chunks.select(meta.columns), dict(chunks.select("chunk_id", "text").iter_rows())
    questions = []
    for qid in frame["question_id"].unique(maintain_order=True).to_list():
        view = explore.show(qid, frame, chunks=meta)
        questions.append({"id": qid, "answerable": bool(view.question.get("answerable")), "text": text[qid],
                          "labels": labels.get(qid, {}), "flags": flags.get(qid, {}),
                          "html": question_html(view, trace_chars=TRACE_CHARS)})  # fmt: skip
    return {
        "run": run, "n_responses": frame.height,
        "settings": setting_order(frame["setting"].unique().to_list()),
        "models": sorted(frame["model"].unique().to_list()),
        "judges": [c.removeprefix("score_") for c in explore.score_columns(frame)],
        "flags": {name: title for name, (title, _) in explore.FLAGS.items()},
        "questions": questions, "chunks": texts,
    }  # fmt: skip


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` as ``\\u`` escapes."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def report_html(frame: pl.DataFrame, chunks: pl.DataFrame | None, *, run: str = "") -> str:
    """The whole self-contained page."""
    data = report_data(frame, chunks, run=run)
    return PAGE.replace("{{TITLE}}", _e(f"DeclineCraft explorer · {run}" if run else "DeclineCraft explorer")).replace(
        "{{CSS}}", CSS).replace("{{JS}}", JS).replace("{{DATA}}", embed_json(data))  # fmt: skip


def write_report(cfg: RunConfig, *, out: Path | None = None) -> Path:
    """Write ``outputs/<run>/explorer/index.html`` (or ``out``) for a run and return its path."""
    frame = explore.load(cfg)
    try:
        chunks = explore.load_chunks(cfg)
    except FileNotFoundError:
        chunks = None
    target = out or cfg.run_dir() / "explorer" / "index.html"
    return paths.write_text_atomic(target, report_html(frame, chunks, run=cfg.run))


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

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{TITLE}}</title><style>{{CSS}}
body{margin:0;background:#f4f6f9;font:14px system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d232b}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #d5dbe3;padding:8px 16px;z-index:2}
header h1{font-size:17px;margin:0 0 6px}header label{margin-right:10px;white-space:nowrap}
header input[type=search]{width:220px}main{max-width:1180px;margin:0 auto;padding:0 16px 40px}
#dc-count{font-weight:600;margin-left:8px}#dc-summary{color:#5b6675;font-size:12px}
</style></head><body>
<header><h1>{{TITLE}}</h1><div id="dc-summary"></div><div>
<label>Search <input type="search" id="dc-q" placeholder="words in question, page, responses"></label>
<label>Questions <select id="dc-answerable"><option value="">all</option><option value="true">answerable</option>
<option value="false">unanswerable</option></select></label>
<label>Model <select id="dc-model"></select></label><label>Thinking <select id="dc-thinking">
<option value="">any</option><option value="off">off</option><option value="on">on</option></select></label>
<label>Setting <select id="dc-setting"></select></label><label>Filter <select id="dc-flag"></select></label></div><div>
<label>Transition <select id="dc-cmp"><option value="condition">between settings</option>
<option value="thinking">thinking off → on</option></select></label>
<label class="dc-cond">from <select id="dc-from"></select></label>
<label class="dc-cond">to <select id="dc-to"></select></label>
<label class="dc-think">in <select id="dc-in"></select></label>
<label>label <select id="dc-la"></select></label><label>→ <select id="dc-lb"></select></label>
<span id="dc-count"></span></div></header>
<main><div id="dc-out"></div><p><button id="dc-more" type="button">show more</button></p></main>
<script type="application/json" id="dc-data">{{DATA}}</script>
<script>{{JS}}</script></body></html>
"""

JS = r"""
(function(){
"use strict";
const D=JSON.parse(document.getElementById("dc-data").textContent);
const $=id=>document.getElementById("dc-"+id), PAGE=50;
const CODES=[["*","any"],["A","ABSTAIN"],["D","DENY"],["X","ANSWER"],["-","no label"]];
let shown=PAGE;
function fill(id,opts){$(id).innerHTML=opts.map(([v,t])=>`<option value="${v}">${t}</option>`).join("");}
const esc=s=>String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
fill("model",[["","all"]].concat(D.models.map(m=>[esc(m),esc(m)])));
fill("setting",[["","all"]].concat(D.settings.map(s=>[esc(s),esc(s)])));
fill("flag",[["","none"]].concat(Object.entries(D.flags).map(([k,t])=>[k,esc(t)])));
for(const id of ["from","to","in"])fill(id,D.settings.map(s=>[esc(s),esc(s)]));
fill("la",CODES);fill("lb",CODES);
const pick=(id,v)=>{if(D.settings.includes(v))$(id).value=v;};
pick("from","single");pick("to","iterative");pick("in","no_rag");
const KEYS=["q","answerable","model","thinking","setting","flag","cmp","from","to","in"];
const DEF={};for(const k of KEYS)DEF[k]=$(k).value;
const nA=D.questions.filter(q=>q.answerable).length;
$("summary").textContent=`run ${D.run} · ${D.questions.length} questions (${nA} answerable) · `+
 `${D.n_responses} responses · `+
 `${D.models.length} models · settings: ${D.settings.join(", ")} · accuracy judges: ${D.judges.join(", ")||"none"}`;
function readHash(){const p=new URLSearchParams(location.hash.slice(1));
 for(const k of KEYS){const v=p.get(k);
  $(k).value=v!==null&&(k==="q"||[...$(k).options].some(o=>o.value===v))?v:DEF[k];}
 const t=(p.get("transition")||"*-*").split("-");
 $("la").value=CODES.some(c=>c[0]===t[0])?t[0]:"*";$("lb").value=CODES.some(c=>c[0]===t[1])?t[1]:"*";}
function state(){const s={};for(const k of KEYS)s[k]=$(k).value;s.la=$("la").value;s.lb=$("lb").value;return s;}
function writeHash(s){const p=new URLSearchParams();
 for(const k of KEYS)if(s[k]!==DEF[k])p.set(k,s[k]);if(s.la!=="*"||s.lb!=="*")p.set("transition",s.la+"-"+s.lb);
 const h=p.toString();if(h!==location.hash.slice(1))history.replaceState(null,"",h?"#"+h:location.pathname);}
const split=c=>{const i=c.lastIndexOf("|");return [c.slice(0,i),c.slice(i+1)];};
function cfgOk(c,s){if(!c)return true;const [m,t]=split(c);
 return(!s.model||s.model===m)&&(!s.thinking||s.thinking===t);}
const ok=(code,want)=>want==="*"||code===want;
function transition(q,s){if(s.la==="*"&&s.lb==="*")return null;const hits=[];
 for(const c in q.labels){if(!cfgOk(c,s))continue;
  if(s.cmp==="thinking"){const [m,t]=split(c);const on=q.labels[m+"|on"];
   if(t!=="off"||!on||!(s.in in q.labels[c])||!(s.in in on)||(s.thinking&&s.thinking!=="off"))continue;
   if(ok(q.labels[c][s.in],s.la)&&ok(on[s.in],s.lb))hits.push([c,s.in],[m+"|on",s.in]);}
  else{const l=q.labels[c];if(!(s.from in l)||!(s.to in l))continue;
   if(ok(l[s.from],s.la)&&ok(l[s.to],s.lb))hits.push([c,s.from],[c,s.to]);}}
 return hits;}
function matches(q,s){
 if(s.answerable&&String(q.answerable)!==s.answerable)return false;
 if(s.q&&!q.text.includes(s.q.toLowerCase()))return false;
 if((s.model||s.thinking)&&!Object.keys(q.labels).some(c=>cfgOk(c,s)))return false;
 if(s.flag&&!(q.flags[s.flag]||[]).some(([st,c])=>(!s.setting||st===s.setting)&&cfgOk(c,s)))return false;
 const t=transition(q,s);if(t!==null&&!t.length)return false;q._hits=t||[];return true;}
function render(){const t0=performance.now(),s=state();writeHash(s);
 document.querySelectorAll(".dc-cond").forEach(e=>e.classList.toggle("dc-hidden",s.cmp!=="condition"));
 document.querySelectorAll(".dc-think").forEach(e=>e.classList.toggle("dc-hidden",s.cmp!=="thinking"));
 const list=D.questions.filter(q=>matches(q,s));const out=$("out");
 out.innerHTML=list.slice(0,shown).map(q=>q.html).join("")||"<p>No question matches.</p>";
 for(const q of list.slice(0,shown)){const sec=document.getElementById("q-"+q.id);if(!sec)continue;
  sec.querySelectorAll(".dc-set").forEach(e=>
   e.classList.toggle("dc-hidden",!!s.setting&&e.dataset.setting!==s.setting));
  sec.querySelectorAll(".dc-row").forEach(e=>{e.classList.toggle("dc-hidden",!cfgOk(e.dataset.config,s));
   e.classList.toggle("dc-hit",q._hits.some(([c,st])=>c===e.dataset.config&&st===e.dataset.setting));});}
 $("count").textContent=`${list.length} of ${D.questions.length} questions`+
  (list.length>shown?` (first ${shown} shown)`:"");
 $("more").classList.toggle("dc-hidden",list.length<=shown);
 document.body.dataset.renderMs=(performance.now()-t0).toFixed(1);document.body.dataset.matches=list.length;}
readHash();render();document.body.dataset.readyMs=performance.now().toFixed(0);
for(const k of [...KEYS,"la","lb"])$(k).addEventListener(k==="q"?"input":"change",()=>{shown=PAGE;render();});
document.addEventListener("toggle",e=>{const d=e.target;if(!d.dataset||!d.dataset.chunk||!d.open)return;
 const pre=d.querySelector("pre");
 if(!pre.textContent)pre.textContent=D.chunks[d.dataset.chunk]||"(chunk text not in this report)";},true);
$("more").addEventListener("click",()=>{shown+=PAGE;render();});
window.addEventListener("hashchange",()=>{readHash();shown=PAGE;render();});
})();
"""
