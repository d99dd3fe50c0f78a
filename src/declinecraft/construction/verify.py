"""Verification and assembly (§3.3, Appendix D): verifier checks, cue filter, manual review, caps.

A candidate's ``fate`` says where it ended: the generation status (``lost_to_format``,
``no_target``, ``no_facts``, ``llm_error``), ``cue_filtered``, ``rejected_stated`` /
``rejected_answers`` (which verifier check failed), ``verifier_unparsable`` / ``verifier_error``,
and, for candidates that passed every check, ``kept``, ``capped_chunk``, ``capped_page``,
``manual_review`` or ``reserve`` (passed, but not needed to reach the target).

The checks (verifier prompts "Stated" and "Answers", Appendix J.1):

==============  ==============================================  ===============================
half            Stated (must be NO)                              Answers
==============  ==============================================  ===============================
answerable      the scenario states or implies the fact          YES: R+(question) answers it
unanswerable    R+(fact), 10 C_pre chunks, state or imply it     NO: R+(question) does not
==============  ==============================================  ===============================

The cue filter runs before the verifier (it is deterministic and saves verifier calls), so the
verifier's rejection rates are over candidates without a novelty cue.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from declinecraft.construction.generate import Search, join_chunks, known_ids
from declinecraft.core.config import VerifyParams
from declinecraft.llm.calls import Ask, Call

# --- cue filter (Appendix D) -----------------------------------------------------------------

#: Appendix D's novelty cues, each with the forms the paper lists ("notice(d)") plus the plain
#: -s form; matched case-insensitively as whole words ("renewable" never matches "new").
CUES: dict[str, str] = {
    "wonder": r"wonder(?:s|ed|ing)?",
    "suddenly": r"suddenly",
    "notice": r"notice[sd]?",
    "heard": r"heard",
    "announced": r"announced",
    "announcement": r"announcements?",
    "new": r"new(?:ly)?",
    "recent": r"recent(?:ly)?",
    "latest": r"latest",
    "update": r"update[sd]?",
    "added": r"added",
    "introduced": r"introduced",
    "change": r"change[sd]?",
    "no longer": r"no\s+longer",
    "nowadays": r"nowadays",
    "these days": r"these\s+days",
    "now that": r"now\s+that",
    "Minecraft Live": r"minecraft\s+live",
    "snapshot": r"snapshots?",
    "pre-release": r"pre-?\s?releases?",
    "beta build": r"beta\s+builds?",
}
_CUE = re.compile("|".join(rf"(?P<c{i}>\b{p}\b)" for i, p in enumerate(CUES.values())), re.I)
_CUE_NAMES = list(CUES)
_YEAR = re.compile(r"\b20\d\d\b")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Month names are matched capitalised only ("march" and "may" are verbs), and "May" not as the
# sentence's first word ("May I ...?").
_MONTH = re.compile(rf"\b(?:{'|'.join(m for m in MONTHS if m != 'May')})\b|(?<=[\w,] )May\b")


def find_cues(sentence: str) -> list[str]:
    """Return the novelty cues of Appendix D in a question sentence (``[]`` when it is clean)."""
    found = [_CUE_NAMES[int(m.lastgroup[1:])] for m in _CUE.finditer(sentence) if m.lastgroup]
    found += ["year 20xx"] * bool(_YEAR.search(sentence)) + ["month name"] * bool(_MONTH.search(sentence))
    return list(dict.fromkeys(found))


# --- verifier ---------------------------------------------------------------------------------


def parse_verdict(text: str | None) -> bool | None:
    """Read a YES/NO verdict: True for YES, False for NO, None when it says neither or both."""
    words = re.findall(r"[A-Za-z]+", text or "")
    if words and words[0].upper() in {"YES", "NO"}:
        return words[0].upper() == "YES"
    said = {w.upper() for w in words} & {"YES", "NO"}
    return said.pop() == "YES" if len(said) == 1 else None


#: The App. J.1 template of each check (spelt out: the stage's Make prerequisites are found by name).
PROMPTS = {"stated": "verify_stated", "answers": "verify_answers"}


def verify_drafts(
    drafts: pl.DataFrame,
    *,
    chunk_text: Mapping[str, str],
    complete: Ask,
    search: Search,
    params: VerifyParams,
    verifier: str | None = None,
) -> pl.DataFrame:
    """Run the cue filter and the verifier's two checks on every drafted candidate.

    Args:
        drafts: rows of ``generate.DRAFT_SCHEMA``.
        chunk_text: chunk id → text for every C_pre chunk the retriever may return.
        complete: runs verifier calls; search: ``search(queries, params.pipeline, k)`` over C_pre.

    Returns:
        The drafts with the verifier's inputs, raw outputs, cache keys and verdicts, and ``fate``.
    """
    rows = drafts.with_columns(verifier=pl.lit(verifier or params.verifier)).to_dicts()
    for r in rows:
        r.update(cues=[], fate=r["status"], stated_context_ids=None, answers_context_ids=None)
        if r["status"] == "drafted":
            r["cues"] = find_cues(r["asked_question"])
            r["fate"] = "cue_filtered" if r["cues"] else "checking"
    k, cap, budget = params.retrieve_k, params.context_chars, params.max_tokens

    def run_check(name: str, live: list[dict[str, Any]], contexts: list[str], fields: list[dict[str, str]]) -> None:
        calls = [Call(PROMPTS[name], f | {"context": c}, budget) for f, c in zip(fields, contexts, strict=True)]
        replies = complete(calls)
        for r, reply in zip(live, replies, strict=True):
            r[f"{name}_raw"], r[f"{name}_key"] = reply.text, reply.cache_key
            r[name] = None if reply.error else parse_verdict(reply.text)
            if reply.error:
                r["fate"], r["fate_detail"] = "verifier_error", f"{name}: {reply.error}"
            elif r[name] is None:
                r["fate"], r["fate_detail"] = "verifier_unparsable", f"{name}: {reply.text[:80]!r}"

    # Stated: the answerable scenario, or C_pre retrieved for the unanswerable fact.
    live = [r for r in rows if r["fate"] == "checking"]
    unans = [r for r in live if not r["answerable"]]
    for r, ids in zip(unans, search([r["fact"] for r in unans], params.pipeline, k) if unans else [], strict=True):
        r["stated_context_ids"] = known_ids(ids, chunk_text, f"candidate {r['id']}: R+ for the fact")
    contexts = [
        r["scenario"] if r["answerable"] else join_chunks(r["stated_context_ids"], chunk_text, cap) for r in live
    ]
    run_check("stated", live, contexts, [{"fact": r["fact"]} for r in live])
    for r in live:
        if r["fate"] == "checking" and r["stated"]:
            r["fate"] = "rejected_stated"
            r["fate_detail"] = "scenario states the fact" if r["answerable"] else "C_pre states the fact"

    # Answers: C_pre retrieved for the whole question (scenario + asked question).
    live = [r for r in rows if r["fate"] == "checking"]
    hits = search([r["question"] for r in live], params.pipeline, k) if live else []
    for r, ids in zip(live, hits, strict=True):
        r["answers_context_ids"] = known_ids(ids, chunk_text, f"candidate {r['id']}: R+ for the question")
    contexts = [join_chunks(r["answers_context_ids"], chunk_text, cap) for r in live]
    run_check("answers", live, contexts, [{"question": r["question"], "answer": r["fact"]} for r in live])
    for r in live:
        if r["fate"] == "checking":
            if r["answers"] != r["answerable"]:
                r["fate"] = "rejected_answers"
                r["fate_detail"] = "C_pre does not answer it" if r["answerable"] else "C_pre answers it"
            else:
                r["fate"] = "passed"
    schema = dict(drafts.schema) | VERIFY_SCHEMA
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)


_S, _L = pl.String, pl.List(pl.String)
VERIFY_SCHEMA: dict[str, Any] = {
    "verifier": _S,
    "cues": _L,
    "stated_context_ids": _L,
    "stated_raw": _S,
    "stated_key": _S,
    "stated": pl.Boolean,
    "answers_context_ids": _L,
    "answers_raw": _S,
    "answers_key": _S,
    "answers": pl.Boolean,
    "fate": _S,
    "fate_detail": _S,
}


# --- manual review and assembly ---------------------------------------------------------------


def load_review(path: str | Path, run: str) -> dict[str, dict[str, str]]:
    """Read the manual-review drops of one run: id → {reason, question}.

    The file maps run names to lists of ``{id, reason, question}``; a missing file means no drops.

    Raises:
        ValueError: malformed file or entry, naming the file and the entry.
    """
    path = Path(path)
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc
    runs = data.get("runs", {}) if isinstance(data, dict) else None
    if not isinstance(runs, dict):
        raise ValueError(f"{path}: expected a top-level 'runs:' mapping of run name -> list of drops")
    out: dict[str, dict[str, str]] = {}
    for i, entry in enumerate(runs.get(run) or []):
        if not isinstance(entry, dict) or not entry.get("id") or not entry.get("reason"):
            raise ValueError(f"{path}: runs.{run}[{i}] needs an 'id' and a 'reason', got {entry!r}")
        if entry["id"] in out:
            raise ValueError(f"{path}: runs.{run}[{i}]: id {entry['id']!r} listed twice")
        out[str(entry["id"])] = {"reason": str(entry["reason"]), "question": str(entry.get("question") or "")}
    return out


def _check_review(candidates: pl.DataFrame, review: Mapping[str, Mapping[str, str]], where: str) -> None:
    asked = dict(zip(candidates["id"], candidates["asked_question"], strict=True))
    for cid, entry in review.items():
        if cid not in asked:
            raise ValueError(f"{where}: reviewed id {cid!r} is not a candidate of this run")
        if entry.get("question") and entry["question"] != asked[cid]:
            raise ValueError(
                f"{where}: reviewed id {cid!r} now asks {asked[cid]!r}, not the reviewed "
                f"{entry['question']!r}: review it again"
            )


def assemble(
    candidates: pl.DataFrame,
    *,
    target_answerable: int,
    target_unanswerable: int,
    max_per_chunk: int = 2,
    max_per_page: int = 10,
    review: Mapping[str, Mapping[str, str]] | None = None,
    where: str = "manual review",
) -> pl.DataFrame:
    """Fill each half from its ``passed`` candidates in index order, under the caps.

    A reviewed (dropped) candidate is skipped, so the next unused candidate that passed the same
    checks takes its place; ``replacement`` marks the kept candidates that entered that way.
    Candidates beyond the target stay ``reserve``. Returns the candidates with ``fate`` updated.

    Raises:
        ValueError: a review entry whose id is unknown or whose question changed since review.
    """
    review = review or {}
    _check_review(candidates, review, where)
    targets = {True: target_answerable, False: target_unanswerable}

    def fill(drops: Mapping[str, Any]) -> dict[str, str]:
        fates: dict[str, str] = {}
        per_chunk: Counter[str] = Counter()
        per_page: Counter[str] = Counter()
        kept: Counter[bool] = Counter()
        order = candidates.filter(pl.col("fate") == "passed").sort(pl.col("answerable").not_(), "index")
        for r in order.iter_rows(named=True):
            chunk, page = r["target_chunk_id"], r["target_title"]
            if r["id"] in drops:
                fates[r["id"]] = "manual_review"
            elif kept[r["answerable"]] >= targets[r["answerable"]]:
                fates[r["id"]] = "reserve"
            elif per_chunk[chunk] >= max_per_chunk:
                fates[r["id"]] = "capped_chunk"
            elif per_page[page] >= max_per_page:
                fates[r["id"]] = "capped_page"
            else:
                fates[r["id"]] = "kept"
                per_chunk[chunk] += 1
                per_page[page] += 1
                kept[r["answerable"]] += 1
        return fates

    final, unreviewed = fill(review), fill({})
    reasons = {cid: entry["reason"] for cid, entry in review.items()}
    return candidates.with_columns(
        fate=pl.col("id").replace_strict(final, default=pl.col("fate"), return_dtype=pl.String),
        replacement=pl.col("id").map_elements(
            lambda cid: final.get(cid) == "kept" and unreviewed.get(cid) != "kept", return_dtype=pl.Boolean
        ),
        review_reason=pl.col("id").replace_strict(reasons, default=None, return_dtype=pl.String),
    )


#: The benchmark's columns, in order (``question`` is the full text: scenario + asked question).
BENCHMARK_COLUMNS = (
    "id",
    "answerable",
    "scenario",
    "asked_question",
    "question",
    "fact",
    "target_chunk_id",
    "target_title",
    "target_url",
    "scenario_chunk_ids",
    "comparison_chunk_ids",
    "generator",
    "verifier",
    "replacement",
    "scenario_key",
    "facts_key",
    "question_key",
    "stated_key",
    "answers_key",
    "scenario_raw",
    "facts_raw",
    "question_raw",
    "stated_raw",
    "answers_raw",
)


def benchmark(candidates: pl.DataFrame) -> pl.DataFrame:
    """Return the kept candidates as the benchmark: answerable first, each half in index order."""
    kept = candidates.filter(pl.col("fate") == "kept").sort(pl.col("answerable").not_(), "index")
    return kept.select(BENCHMARK_COLUMNS)
