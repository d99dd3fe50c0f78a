"""ESB's evidence levels built from C_pre for each answerable question, plus our condition T.

For an answerable question whose target chunk (the question's own, from C_pre) is known:

====  ====================================================================================
L1    the target chunk alone (full support)
L2    partial support (:mod:`.partial`): the target chunk with the sentences that state the
      answer cut, among the first k-1 retrieved chunks that are not it, at a seeded position
L3    k chunks drawn (seeded) from pages unrelated to the question (not the target page, not a
      retrieved or scenario page) in which the answer string does not occur
L4    no context
L5    the target chunk and its conflicting copy (the key value altered, :mod:`.values`), in both
      orders: ``gold_first`` and ``conflict_first`` (the position-bias pair)
====  ====================================================================================

T (beyond ESB): each unanswerable question with the k chunks the retriever returns for it.

Nothing is dropped silently: every question or level that cannot be built as defined is a row of
``problems`` (question, level, problem, detail, action), and ``quality`` is ESB §4.4's table of
checks (answer string absent from L2/L3/L4/T, present in L1/L5; L2's answer sentence found and
cut; the conflicting value present and the original absent in the copy) with how many were
checked and how many failed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from declinecraft.evaluation.context import Chunk, format_context
from declinecraft.views.evidence import conflicts, partial, values

COPY_SUFFIX = "#conflict"
"""Appended to the target chunk id to name its conflicting copy in ``chunk_ids``."""
PARTIAL_SUFFIX = "#partial"
"""Appended to the target chunk id to name L2's partial chunk in ``chunk_ids``."""

INSTANCE_SCHEMA: dict[str, Any] = {
    "instance_id": pl.String,
    "question_id": pl.String,
    "answerable": pl.Boolean,
    "level": pl.String,
    "order": pl.String,
    "query": pl.String,
    "chunk_ids": pl.List(pl.String),
    "target_position": pl.Int64,
    "context": pl.String,
    "value_kind": pl.String,
    "answer_string": pl.String,
    "altered_string": pl.String,
    "answer_present": pl.Boolean,
    "altered_present": pl.Boolean,
}
PROBLEM_SCHEMA: dict[str, Any] = {
    "question_id": pl.String,
    "level": pl.String,
    "problem": pl.String,
    "detail": pl.String,
    "action": pl.String,
}
QUALITY_SCHEMA: dict[str, Any] = {
    "check": pl.String,
    "level": pl.String,
    "n_checked": pl.Int64,
    "n_failed": pl.Int64,
    "n_unchecked": pl.Int64,
    "on_failure": pl.String,
}
#: (check, level, what a failure does) in the order of the quality table.
CHECKS: tuple[tuple[str, str, str], ...] = (
    ("answer_absent", "L3", "chunk not drawn"),
    ("answer_absent", "L4", "none (no context)"),
    ("answer_absent", "T", "kept, counted"),
    ("answer_present", "L1", "kept, counted"),
    ("answer_sentence_cut", "L2", "L2 dropped"),
    ("answer_absent", "L2", "kept, counted"),
    ("answer_present", "L5", "L5 dropped"),
    ("conflict_present", "L5", "L5 dropped"),
    ("original_absent_in_copy", "L5", "L5 dropped"),
)


@dataclass(frozen=True)
class Levels:
    """What the builder made of the questions."""

    instances: pl.DataFrame
    """One row per (question, level, order): the chunks, the exact context, the checks."""
    problems: pl.DataFrame
    """One row per question and level that could not be built as defined, with what was done."""
    quality: pl.DataFrame
    """ESB §4.4's checks: counts checked, failed and unchecked (no answer string)."""


def instance_id(question_id: str, level: str, order: str) -> str:
    """A stable 16-hex id of one evidence instance."""
    return hashlib.sha256(json.dumps([question_id, level, order]).encode()).hexdigest()[:16]


class _Builder:
    def __init__(self, chunks: Mapping[str, Chunk], *, k: int, chunk_chars: int, seed: int) -> None:
        self.chunks, self.k, self.chunk_chars, self.seed = chunks, k, chunk_chars, seed
        self.pages: dict[str, list[str]] = defaultdict(list)
        for cid, chunk in chunks.items():
            self.pages[chunk.title].append(cid)
        self.rows: list[dict[str, Any]] = []
        self.problems: list[dict[str, Any]] = []
        self.checked: Counter[tuple[str, str]] = Counter()
        self.failed: Counter[tuple[str, str]] = Counter()
        self.unchecked: Counter[tuple[str, str]] = Counter()

    def problem(self, qid: str, level: str, problem: str, detail: str, action: str) -> None:
        """Record a question or level not built as defined."""
        self.problems.append(
            {"question_id": qid, "level": level, "problem": problem, "detail": detail, "action": action}
        )

    def check(self, name: str, level: str, ok: bool | None) -> None:
        """Count one quality check (None: no answer string to check)."""
        if ok is None:
            self.unchecked[(name, level)] += 1
        else:
            self.checked[(name, level)] += 1
            self.failed[(name, level)] += not ok

    def known(self, qid: str, level: str, ids: Sequence[str]) -> list[str]:
        """Retrieved ids that are chunks of C_pre (an unknown one is counted and skipped)."""
        missing = [c for c in ids if c not in self.chunks]
        if missing:
            self.problem(qid, level, "retrieved_chunk_missing", ", ".join(missing), "chunk skipped")
        return [c for c in ids if c in self.chunks]

    def add(
        self,
        r: Mapping[str, Any],
        level: str,
        shown: Sequence[Chunk],
        *,
        order: str = "",
        target: int | None = None,
        answer: str | None = None,
        altered: str | None = None,
        kind: str | None = None,
    ) -> dict[str, Any]:
        """One instance row, with the context exactly as the model reads it."""
        context = format_context(shown, self.chunk_chars) if shown else ""
        row = {
            "instance_id": instance_id(r["id"], level, order),
            "question_id": r["id"],
            "answerable": bool(r["answerable"]),
            "level": level,
            "order": order,
            "query": r["question"].strip(),
            "chunk_ids": [c.chunk_id for c in shown],
            "target_position": target,
            "context": context,
            "value_kind": kind,
            "answer_string": answer,
            "altered_string": altered,
            "answer_present": None if answer is None else values.contains(context, answer),
            "altered_present": None if altered is None else values.contains(context, altered),
        }
        self.rows.append(row)
        return row

    def answerable(self, r: Mapping[str, Any], retrieved: Sequence[str], value: Mapping[str, Any] | None) -> None:
        """L1-L5 of one answerable question."""
        qid, target_id = r["id"], r["target_chunk_id"]
        target = self.chunks.get(target_id)
        if target is None:
            self.problem(qid, "all", "target_chunk_missing", str(target_id), "question dropped")
            return
        kv = conflicts.key_value(value) if value else None
        answer = kv.answer_string if kv else None
        kind = kv.kind if kv else None
        if answer is None:
            self.problem(qid, "L3", "no_answer_string", (value or {}).get("reason") or "", "L3 drawn unchecked")
        if len(self.pages[target.title]) == 1:
            self.problem(
                qid,
                "L2",
                "single_chunk_page",
                target.title,
                "kept: L2's other chunks are retrieved ones, L3 comes from other pages",
            )
        row = self.add(r, "L1", [target], target=1, answer=answer, kind=kind)
        self.check("answer_present", "L1", row["answer_present"])
        self.level2(r, target, retrieved, answer, kind)
        self.level3(r, target, retrieved, answer, kind)
        self.add(r, "L4", [], answer=answer, kind=kind)
        self.check("answer_absent", "L4", None if answer is None else True)
        self.level5(r, target, kv, value)

    def level2(
        self, r: Mapping[str, Any], target: Chunk, retrieved: Sequence[str], answer: str | None, kind: str | None
    ) -> None:
        """L2: the target with its answer sentences cut (:mod:`.partial`) among the first k-1 other
        retrieved chunks, at a seeded position."""
        qid = r["id"]
        cut, failure = partial.partial_chunk(target.text, answer, r.get("fact") or "")
        self.check("answer_sentence_cut", "L2", cut is not None)
        if cut is None:
            self.problem(qid, "L2", f"partial_{failure}", target.chunk_id, "L2 dropped")
            return
        others = [c for c in self.known(qid, "L2", retrieved) if c != target.chunk_id][: self.k - 1]
        if not others:
            self.problem(qid, "L2", "no_distractors", "the retriever returned no other chunk", "L2 dropped")
            return
        if len(others) < self.k - 1:
            self.problem(qid, "L2", "l2_short", f"{len(others)} of {self.k - 1} other chunks", "kept")
        position = int(conflicts.question_rng(self.seed, qid, "L2").integers(len(others) + 1))
        shown = [self.chunks[c] for c in others]
        shown.insert(position, Chunk(target.chunk_id + PARTIAL_SUFFIX, target.title, target.url, cut))
        row = self.add(r, "L2", shown, target=position + 1, answer=answer, kind=kind)
        self.check("answer_absent", "L2", None if answer is None else not row["answer_present"])
        if row["answer_present"]:
            self.problem(qid, "L2", "answer_in_context", str(answer), "kept, counted")

    def level3(
        self, r: Mapping[str, Any], target: Chunk, retrieved: Sequence[str], answer: str | None, kind: str | None
    ) -> None:
        """L3: k seeded chunks of unrelated pages that do not state the answer string."""
        qid = r["id"]
        near = [*retrieved, *(r.get("scenario_chunk_ids") or [])]
        related = {target.title} | {self.chunks[c].title for c in near if c in self.chunks}
        pool = sorted(
            c
            for c, ch in self.chunks.items()
            if ch.title not in related and (answer is None or not values.contains(ch.text, answer))
        )
        rng = conflicts.question_rng(self.seed, qid, "L3")
        picked = [pool[i] for i in rng.permutation(len(pool))[: self.k]] if pool else []
        if not picked:
            self.problem(
                qid, "L3", "no_unrelated_chunks", "every other page is related or states the answer", "L3 dropped"
            )
            return
        if len(picked) < self.k:
            self.problem(qid, "L3", "l3_short", f"{len(picked)} of {self.k} unrelated chunks", "kept")
        row = self.add(r, "L3", [self.chunks[c] for c in picked], answer=answer, kind=kind)
        self.check("answer_absent", "L3", None if answer is None else not row["answer_present"])

    def level5(
        self, r: Mapping[str, Any], target: Chunk, kv: values.KeyValue | None, value: Mapping[str, Any] | None
    ) -> None:
        """L5: the target and its checked conflicting copy, in both orders."""
        qid = r["id"]
        if kv is None:
            reason = (value or {}).get("reason") or "no_value"
            self.problem(qid, "L5", "no_alterable_value", reason, "L5 dropped")
            return
        copy = values.conflicting_copy(target.text, kv)
        failure = values.copy_problem(copy, kv)
        self.check("conflict_present", "L5", failure != "altered_value_absent")
        if failure != "altered_value_absent":
            self.check("original_absent_in_copy", "L5", failure is None)
        if failure:
            self.problem(
                qid,
                "L5",
                "conflict_check_failed",
                f"{failure}: {kv.answer_string!r} -> {kv.altered_string!r}",
                "L5 dropped",
            )
            return
        twin = Chunk(target.chunk_id + COPY_SUFFIX, target.title, target.url, copy)
        shown_text = format_context([target, twin], self.chunk_chars)
        if not (values.contains(shown_text, kv.answer_string) and values.contains(shown_text, kv.altered_string)):
            self.check("answer_present", "L5", False)
            self.problem(qid, "L5", "value_cut_from_context", f"context_chars={self.chunk_chars}", "L5 dropped")
            return
        self.check("answer_present", "L5", True)
        for order, shown in (("gold_first", [target, twin]), ("conflict_first", [twin, target])):
            self.add(
                r,
                "L5",
                shown,
                order=order,
                target=1 if order == "gold_first" else 2,
                answer=kv.answer_string,
                altered=kv.altered_string,
                kind=kv.kind,
            )

    def temporal(self, r: Mapping[str, Any], retrieved: Sequence[str], answer: str | None) -> None:
        """T of one unanswerable question: its first k retrieved chunks."""
        ids = self.known(r["id"], "T", retrieved)[: self.k]
        if not ids:
            self.problem(r["id"], "T", "no_retrieved_chunks", "", "T dropped")
            return
        row = self.add(r, "T", [self.chunks[c] for c in ids], answer=answer)
        self.check("answer_absent", "T", None if answer is None else not row["answer_present"])
        if row["answer_present"]:
            self.problem(r["id"], "T", "answer_in_context", str(answer), "kept, counted")

    def quality(self) -> pl.DataFrame:
        """The checks counted so far, as ESB §4.4's table."""
        rows = [
            {
                "check": c,
                "level": lv,
                "n_checked": self.checked[(c, lv)],
                "n_failed": self.failed[(c, lv)],
                "n_unchecked": self.unchecked[(c, lv)],
                "on_failure": action,
            }
            for c, lv, action in CHECKS
        ]
        return pl.DataFrame(rows, schema=QUALITY_SCHEMA)


def build(
    questions: pl.DataFrame,
    chunks: Mapping[str, Chunk],
    *,
    retrieved: Mapping[str, Sequence[str]],
    key_values: pl.DataFrame,
    titles: Sequence[str],
    k: int,
    chunk_chars: int = 0,
    seed: int = 0,
) -> Levels:
    """Build every level of every question (see the module docstring).

    ``chunks`` are C_pre's chunks by id; ``retrieved`` the ranked chunk ids per question (at least
    k); ``key_values`` the rows of :func:`conflicts.find_values`; ``titles`` C_pre's page titles
    (named items of the T answer strings).

    Raises:
        ValueError: k below 1.
    """
    if k < 1:
        raise ValueError(f"evidence.k must be at least 1, got {k}")
    builder = _Builder(chunks, k=k, chunk_chars=chunk_chars, seed=seed)
    by_question = {r["question_id"]: r for r in key_values.iter_rows(named=True)}
    for r in questions.sort("id").iter_rows(named=True):
        ranked = list(retrieved.get(r["id"], ()))
        if r["answerable"]:
            builder.answerable(r, ranked, by_question.get(r["id"]))
        else:
            builder.temporal(r, ranked, values.answer_string(r["fact"] or "", r["question"] or "", titles))
    instances = pl.DataFrame(builder.rows, schema=INSTANCE_SCHEMA)
    return Levels(instances, pl.DataFrame(builder.problems, schema=PROBLEM_SCHEMA), builder.quality())
