"""One question with every response to it (:func:`show`): HTML in Jupyter, text in a terminal.

The HTML comes from ``templates/question.html.j2``; the static report (:mod:`~declinecraft.explore.report`)
embeds the same section per question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from declinecraft.explore import markup
from declinecraft.explore.filters import score_columns, setting_order
from declinecraft.explore.frame import FROM_BENCH, chunks_of

#: Thinking traces in the report are cut to this many characters (the notebook view shows them whole).
TRACE_CHARS = 8000


def rounds_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """An iterative response's rounds (queries, new chunk ids, reflection, stop); [] when absent."""
    try:
        rounds = json.loads(row.get("rounds") or "[]")
    except ValueError:
        return []
    return [r for r in rounds if isinstance(r, dict)] if isinstance(rounds, list) else []


def hits_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A response's retrieved chunks in order: chunk_id, rank, component ranks, round, target, scenario."""
    ids = list(row.get("retrieved_chunk_ids") or [])
    try:
        ranks = json.loads(row.get("component_ranks") or "[]")
    except ValueError:
        ranks = []
    round_of = {c: r.get("index") for r in rounds_of(row) for c in r.get("chunk_ids") or []}
    scenario = set(row.get("scenario_chunk_ids") or [])
    return [
        {
            "chunk_id": c,
            "rank": i + 1,
            "ranks": ranks[i] if i < len(ranks) and isinstance(ranks[i], dict) else {},
            "round": round_of.get(c),
            "target": c == row.get("target_chunk_id"),
            "scenario": c in scenario,
        }
        for i, c in enumerate(ids)
    ]


@dataclass(frozen=True)
class ChunkInfo:
    """What a question's view shows of a chunk; ``deferred`` when the text is left to the page to fill
    in (the report ships each chunk's text once, not in every section that lists it)."""

    title: str
    url: str | None
    corpus: str | None
    text: str | None
    deferred: bool


@dataclass(frozen=True)
class SettingGroup:
    """The responses of one setting; ``shared`` when they all saw one single-shot chunk list."""

    setting: str
    detail: str
    rows: list[dict[str, Any]]
    shared: bool


@dataclass(frozen=True)
class GridLine:
    """One configuration's responses across settings (None where it has none)."""

    config: str
    model: str
    thinking: str
    cells: list[dict[str, Any] | None]


@dataclass
class QuestionView:
    """One question with every response to it; HTML in Jupyter, text in a terminal."""

    question: dict[str, Any]
    rows: list[dict[str, Any]]
    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)
    judges: list[str] = field(default_factory=list)

    def settings(self) -> list[str]:
        """The settings of the rows, in display order."""
        return setting_order([r["setting"] for r in self.rows])

    def groups(self) -> list[SettingGroup]:
        """The rows per setting, in display order."""
        out = []
        for setting in self.settings():
            rows = [r for r in self.rows if r["setting"] == setting]
            head = rows[0]
            detail = "" if head["condition"] == "no_rag" else f"{head['pipeline']} · k={head['k']}"
            # Single-shot retrieval runs one query per question, so every model saw the same list.
            shared = len({tuple(r.get("retrieved_chunk_ids") or ()) for r in rows}) == 1
            out.append(SettingGroup(setting, detail, rows, shared and head["condition"] != "iterative"))
        return out

    def grid(self) -> list[GridLine]:
        """Labels at a glance: per configuration (model|thinking), its row in each setting."""
        cells = {(f"{r['model']}|{r['thinking']}", r["setting"]): r for r in self.rows}
        settings = self.settings()
        lines = []
        for config in dict.fromkeys(c for c, _ in cells):
            model, thinking = config.rsplit("|", 1)
            lines.append(GridLine(config, model, thinking, [cells.get((config, s)) for s in settings]))
        return lines

    def scores(self, row: dict[str, Any]) -> list[tuple[str, float]]:
        """(judge, accuracy score) of each judge that scored the response."""
        return [(j, row["score_" + j]) for j in self.judges if row.get("score_" + j) is not None]

    def chunk(self, chunk_id: str) -> ChunkInfo:
        """Title (the id where unknown), URL, corpus and text of a chunk."""
        c = self.chunks.get(chunk_id, {})
        return ChunkInfo(
            c.get("title") or chunk_id, c.get("url"), c.get("corpus"), c.get("text"), bool(c) and "text" not in c
        )

    def titles(self, chunk_ids: Sequence[str]) -> list[str]:
        """The chunks' page titles (the chunk id where the title is unknown)."""
        return [self.chunks.get(c, {}).get("title") or c for c in chunk_ids]

    def hits(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """The response's retrieved chunks (:func:`hits_of`)."""
        return hits_of(row)

    def rounds(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """The response's rounds (:func:`rounds_of`)."""
        return rounds_of(row)

    def _repr_html_(self) -> str:
        return question_html(self, standalone=True)

    def text(self, *, thinking: bool = False) -> str:
        """Plain text; thinking traces only when asked."""
        return question_text(self, thinking=thinking)

    def __str__(self) -> str:
        return self.text()

    __repr__ = __str__


def show(
    question_id: str,
    frame: pl.DataFrame,
    *,
    chunks: pl.DataFrame | None = None,
    models: Sequence[str] | None = None,
    settings: Sequence[str] | None = None,
) -> QuestionView:
    """Everything about one question: scenario, question, target, fact, reference, and per setting
    the retrieved chunks and every model's response, thinking, label, scores and rounds.

    ``chunks`` (``load_chunks``) gives titles and texts; by default they are read from the corpus
    stage of the run the frame was loaded from. ``models``/``settings`` restrict the responses.

    Raises:
        ValueError: the question is not in the frame.
    """
    rows = frame.filter(pl.col("question_id") == str(question_id))
    if rows.height == 0:
        some = ", ".join(frame["question_id"].unique(maintain_order=True).head(5).to_list())
        raise ValueError(f"question {question_id!r} is not in the frame (questions include: {some})")
    first = rows.row(0, named=True)
    if models is not None:
        rows = rows.filter(pl.col("model").is_in(list(models)))
    if settings is not None:
        rows = rows.filter(pl.col("setting").is_in(list(settings)))
    order = {s: i for i, s in enumerate(setting_order(frame["setting"].unique().to_list()))}
    records = sorted(rows.to_dicts(), key=lambda r: (order.get(r["setting"], 99), r["model"], r["thinking"]))
    question = {c: first.get(c) for c in ("question_id", "answerable", *FROM_BENCH, "reference")}
    wanted = [question["target_chunk_id"], *(question["scenario_chunk_ids"] or [])]
    wanted += [c for r in records for c in r.get("retrieved_chunk_ids") or []]
    chunks = chunks if chunks is not None else chunks_of(frame)
    found = [] if chunks is None else chunks.filter(pl.col("chunk_id").is_in(wanted)).to_dicts()
    judges = [c.removeprefix("score_") for c in score_columns(frame)]
    return QuestionView(question, records, {r["chunk_id"]: r for r in found}, judges)


def question_html(view: QuestionView, *, standalone: bool = False, trace_chars: int | None = None) -> str:
    """One question's section; ``standalone`` adds the stylesheet (for Jupyter); thinking traces are
    cut to ``trace_chars`` characters when given (the report, where traces of 16,000-token budgets
    would otherwise dominate the page)."""
    return markup.render("question.html.j2", view=view, standalone=standalone, trace_chars=trace_chars)


def _hit_lines(view: QuestionView, row: dict[str, Any], indent: str) -> list[str]:
    out = []
    for h in hits_of(row):
        mark = (" *target*" if h["target"] else "") + (" [scenario]" if h["scenario"] else "")
        ranks = ", ".join(f"{k} {v}" for k, v in h["ranks"].items())
        out.append(f"{indent}{h['rank']:>2}. {_titled(view, h['chunk_id'])}{mark} {ranks}".rstrip())
    return out


def _titled(view: QuestionView, chunk_id: str) -> str:
    return f"{view.chunks.get(chunk_id, {}).get('title') or '?'} ({chunk_id})"


def _response_lines(view: QuestionView, r: dict[str, Any], shared: bool, thinking: bool) -> list[str]:
    """One response of the text form: label line, its chunks, rounds, text and thinking."""
    scores = ", ".join(f"{j} {markup.number(s)}" for j, s in view.scores(r))
    others = "".join(  # the rule's and the judge's labels where they differ from the label of record
        f" ({who} {r[key]})"
        for who, key in (("rule", "rule_label"), ("judge", "judge_label"))
        if r.get(key) not in (None, "", r.get("label"))
    )
    accuracy = f" · accuracy {markup.number(r.get('accuracy'))}" if scores or r.get("accuracy") is not None else ""
    k2g = (
        f" · Know2Guess {r['k2g_state']} (confidence {markup.number(r.get('k2g_confidence'))})"
        if r.get("k2g_state")
        else ""
    )
    lines = [
        f"- {r['model']} (thinking {r['thinking']}): {r.get('label') or 'no label'}{others}{accuracy}{k2g}"
        + (f" [{scores}]" if scores else "")
    ]
    lines += [] if shared else _hit_lines(view, r, "    ")
    for rd in rounds_of(r):
        ref = rd.get("reflection") or {}
        said = (
            f"; {ref.get('assessment') or ref.get('status')}: {ref.get('missing_info') or ''} "
            f"follow-ups {ref.get('follow_ups')}"
            if ref
            else ""
        )
        said += f"; stop: {rd['stop']}" if rd.get("stop") else ""
        new = len(rd.get("chunk_ids") or [])
        lines.append(f"    round {rd.get('index')}: queries {rd.get('queries')} -> {new} new{said}")
    lines += ["    " + line for line in (r.get("response") or "").splitlines() or [""]]
    if trace := r.get("thinking_trace"):
        if thinking:
            lines += ["    thinking:"] + ["      " + x for x in trace.splitlines()]
        else:
            lines.append(f"    (thinking trace: {len(trace):,} chars; text(thinking=True) shows it)")
    return lines


def question_text(view: QuestionView, *, thinking: bool = False) -> str:
    """One question as plain text (the terminal form of :func:`show`)."""
    q = view.question
    lines = [
        f"{q['question_id']} · {'answerable' if q.get('answerable') else 'unanswerable'} · target page "
        f"{q.get('target_title')} ({q.get('target_chunk_id')}) {q.get('target_url') or ''}".rstrip()
    ]
    for name, key in (
        ("Scenario", "scenario_text"),
        ("Question", "asked_question"),
        ("Fact", "fact"),
        ("Reference", "reference"),
    ):
        lines.append(f"{name}: {q.get(key) or '–'}")
    scenario = ", ".join(_titled(view, c) for c in q.get("scenario_chunk_ids") or [])
    lines.append("Scenario chunks: " + (scenario or "–"))
    for group in view.groups():
        lines.append(f"\n== {group.setting} ==")
        if group.shared and hits_of(group.rows[0]):
            lines += ["  retrieved:", *_hit_lines(view, group.rows[0], "  ")]
        for r in group.rows:
            lines += _response_lines(view, r, group.shared, thinking)
    return "\n".join(lines)
