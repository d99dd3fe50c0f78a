"""Candidate generation (§3.2, Appendix J.1): scenario → target chunk → facts → question.

Every candidate draws from its own random stream, seeded by ``(seed, half, index)``, so adding
candidates (or a second half) never changes the earlier ones. The four steps run as batches over
all candidates, so a local server stays busy; the model and the retriever are injected callables
(:data:`Ask`, :data:`Search`), which is what lets the tests script them. Bad generator output
never crashes a run: each draft ends with a ``status`` (``drafted`` or why it stopped), the step
and the reason, and every LLM output is kept with its cache key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.config import GenerateParams
from declinecraft.llm.calls import Ask, Call, Reply
from declinecraft.llm.responses import FormatError, parse_json

#: How a half is written into candidate ids and random streams.
HALVES = {True: ("a", 0), False: ("u", 1)}
STATUSES = ("drafted", "lost_to_format", "no_target", "no_facts", "llm_error")


#: ``search(queries, where, k)`` → chunk ids per query, best first; ``where`` is a corpus
#: ("pre"/"post", dense cosine) for generation, or a pipeline over C_pre for verification.
Search = Callable[[Sequence[str], str, int], list[list[str]]]


# --- parsing generator output -----------------------------------------------------------------

_LABEL = re.compile(r"^\s*\**\s*(?:scenario|question|q)\s*\**\s*[:：]\s*\**\s*", re.I)
_QUOTES = "\"'“”‘’`"
_WORD = re.compile(r"[\w’'-]+")


def _clean_line(text: str) -> str:
    text = " ".join(_LABEL.sub("", text.strip()).lstrip("-*• ").split())
    if text[:1] in _QUOTES:  # 'I am in a cave.' or “I am in a cave”.
        text = text[1:]
        if end := re.search(rf"[{_QUOTES}]([.?!]?)$", text):
            text = text[: end.start()] + end.group(1)
    return text.strip()


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def parse_scenario(reply: Reply, *, max_words: int = 30, trim: bool = False, notes: list[str] | None = None) -> str:
    """Return the scenario G_scenario wrote, or raise :class:`FormatError` saying why not.

    With ``trim``, an over-long scenario (or one cut by the token budget) is cut back to its
    leading whole sentences under ``max_words``, and a note says so; otherwise it is lost.
    """
    lines = [line for line in map(_clean_line, (reply.text or "").splitlines()) if line]
    if not lines:
        raise FormatError("empty output")
    if len(lines) > 1 and notes is not None:
        notes.append(f"scenario: kept the first of {len(lines)} lines")
    scenario, cut = lines[0], reply.finish_reason == "length"
    if "?" in scenario:
        raise FormatError("the scenario asks a question")
    n = _words(scenario)
    if trim and (cut or n >= max_words):
        sentences = re.findall(r"[^.!]+[.!]", scenario)  # complete sentences only
        kept: list[str] = []
        while sentences and _words(" ".join([*kept, sentences[0].strip()])) < max_words:
            kept.append(sentences.pop(0).strip())
        if kept and notes is not None:
            notes.append(f"scenario: cut to its first {len(kept)} sentence(s) ({n} words{', cut off' * cut})")
        scenario, cut, n = (" ".join(kept), False, _words(" ".join(kept))) if kept else (scenario, cut, n)
    if cut:
        raise FormatError("over-long: output hit the token budget")
    if n >= max_words:
        raise FormatError(f"over-long: {n} words (limit: under {max_words})")
    return scenario


def parse_facts(reply: Reply, *, max_facts: int = 6, notes: list[str] | None = None) -> list[str]:
    """Return the facts G_facts listed (at most ``max_facts``; ``[]`` is a valid answer), or raise
    :class:`FormatError` when there is no parsable fact list."""
    text = (reply.text or "").strip()
    if not text:
        raise FormatError("empty output")
    try:
        data: Any = parse_json(text)
    except FormatError:
        cut = " (output hit the token budget)" if reply.finish_reason == "length" else ""
        raise FormatError(f"not JSON{cut}") from None
    items = data.get("facts") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise FormatError('no "facts" list in the JSON')
    facts = [" ".join(item.split()) for item in items if isinstance(item, str) and item.strip()]
    if items and not facts:
        raise FormatError("the fact list holds no text")
    if len(facts) > max_facts and notes is not None:
        notes.append(f"facts: {len(facts)} listed, kept the first {max_facts}")
    return facts[:max_facts]


def parse_question(reply: Reply, scenario: str, *, max_words: int = 30, notes: list[str] | None = None) -> str:
    """Return the asked question G_question wrote (without the scenario), or raise
    :class:`FormatError` for empty, over-long, multi-question or scenario-repeating output."""
    if reply.finish_reason == "length":
        raise FormatError("over-long: output hit the token budget")
    question = " ".join(line for line in map(_clean_line, (reply.text or "").splitlines()) if line)
    if not question:
        raise FormatError("empty output")
    norm_s = _norm(scenario)
    if norm_s and _norm(question).startswith(norm_s):
        # The question is appended to the scenario: a copied scenario would appear twice.
        tokens = list(re.finditer(r"[A-Za-z0-9]+", question))
        n = len(norm_s.split())
        question = question[tokens[n].start() :].strip() if len(tokens) > n else ""
        if "?" not in question:
            raise FormatError("repeats the scenario")
        if notes is not None:
            notes.append("question: removed a copy of the scenario")
    count = question.count("?")
    if count == 0:
        raise FormatError("no question mark")
    if count > 1:
        raise FormatError(f"multi-question: {count} question marks")
    if not question.endswith("?"):
        raise FormatError("text after the question mark")
    if (n := _words(question)) >= max_words:
        raise FormatError(f"over-long: {n} words (limit: under {max_words})")
    return question


# --- drawing -----------------------------------------------------------------------------------


def candidate_rng(seed: int, answerable: bool, index: int) -> np.random.Generator:
    """Return the random stream of one candidate, fixed by (seed, half, index) alone."""
    return np.random.default_rng([seed, HALVES[answerable][1], index])


def candidate_id(answerable: bool, index: int) -> str:
    """Return the stable id of a candidate: ``a0007`` (answerable) or ``u0007`` (unanswerable)."""
    return f"{HALVES[answerable][0]}{index:04d}"


def is_technical(title: str, patterns: Sequence[str]) -> bool:
    """True when a page title matches one of the technical-page patterns (case-insensitive)."""
    return any(re.search(p, title, re.I) for p in patterns)


def choose_target(
    ranked: Sequence[str],
    titles: dict[str, str],
    rng: np.random.Generator,
    *,
    exclude: Sequence[str] = (),
    patterns: Sequence[str] = (),
    draw: int = 5,
) -> tuple[str | None, int]:
    """Draw the target chunk uniformly from the ``draw`` best-ranked eligible chunks.

    Chunks of technical pages, the ``exclude`` ids and unknown ids are not eligible. Returns the
    chosen id (``None`` when nothing is eligible) and how many chunks were eligible, so a pool
    smaller than ``draw`` is drawn from as it is and counted, not dropped.
    """
    eligible = [c for c in ranked if c in titles and c not in exclude and not is_technical(titles[c], patterns)]
    if not eligible:
        return None, 0
    top = eligible[:draw]
    return top[int(rng.integers(len(top)))], len(eligible)


# --- the four steps ---------------------------------------------------------------------------


def known_ids(ids: Sequence[str], text: dict[str, str] | Any, where: str) -> list[str]:
    """Return retrieved chunk ids after checking each is a chunk of the corpus stage.

    Raises:
        ValueError: an id the corpus does not hold (the index is stale: rebuild 02_index).
    """
    for cid in ids:
        if cid not in text:
            raise ValueError(
                f"{where}: retrieved chunk {cid!r} is not in the corpus stage's chunks; "
                f"rebuild {catalogue.notebook('index')}"
            )
    return list(ids)


def join_chunks(ids: Sequence[str], text: Mapping[str, str], cap: int) -> str:
    """The chunks ``ids`` as one prompt field, blank-line separated, each cut to ``cap``
    characters (0 = whole); shared by the generator and verifier prompts."""
    return "\n\n".join(text[i][:cap] if cap else text[i] for i in ids)


def _record(reply: Reply, draft: dict[str, Any], step: str) -> bool:
    draft[f"{step}_raw"], draft[f"{step}_key"] = reply.text, reply.cache_key
    if reply.error:
        draft.update(status="llm_error", step=step, reason=reply.error)
        return False
    return True


def _fail(draft: dict[str, Any], status: str, step: str, reason: str) -> None:
    draft.update(status=status, step=step, reason=reason)


def generate_drafts(
    pre: pl.DataFrame,
    post: pl.DataFrame,
    *,
    params: GenerateParams,
    seed: int,
    complete: Ask,
    search: Search,
    generator: str | None = None,
) -> pl.DataFrame:
    """Draft ``params.n_answerable`` + ``params.n_unanswerable`` candidates (§3.2 steps 1–4).

    Args:
        pre, post: chunk tables of C_pre and C_post (chunk_id, title, text, url).
        complete: runs generator calls; search: dense search over "pre" / "post".

    Returns:
        One row per candidate (see :data:`DRAFT_SCHEMA`), ``status`` saying how far it got.
    """
    # A page whose cleaning left no text has no usable chunk: it can never be drawn.
    pre, post = (
        f.filter(pl.col("text").str.strip_chars() != "").with_columns(pl.col("title").fill_null(""))
        for f in (pre, post)
    )
    text = dict(zip(pre["chunk_id"], pre["text"], strict=True)) | dict(zip(post["chunk_id"], post["text"], strict=True))
    titles = {
        "pre": dict(zip(pre["chunk_id"], pre["title"], strict=True)),
        "post": dict(zip(post["chunk_id"], post["title"], strict=True)),
    }
    urls = dict(zip(pre["chunk_id"], pre["url"], strict=True)) | dict(zip(post["chunk_id"], post["url"], strict=True))
    pre_ids = pre["chunk_id"].to_list()
    cap, budget = params.prompt_chunk_chars, params.max_tokens
    drafts: list[dict[str, Any]] = []
    rngs: list[np.random.Generator] = []
    for answerable, n in ((True, params.n_answerable), (False, params.n_unanswerable)):
        for i in range(n):
            rng = candidate_rng(seed, answerable, i)
            k = min(params.scenario_chunks, len(pre_ids))
            picked = [pre_ids[j] for j in rng.choice(len(pre_ids), size=k, replace=False)] if k else []
            drafts.append(
                {
                    "id": candidate_id(answerable, i),
                    "index": i,
                    "answerable": answerable,
                    "generator": generator or params.generator,
                    "status": "drafted",
                    "step": "",
                    "reason": "",
                    "notes": [],
                    "scenario_chunk_ids": picked,
                }
            )
            rngs.append(rng)
    live = list(range(len(drafts)))
    for j in live:
        if not drafts[j]["scenario_chunk_ids"]:
            _fail(drafts[j], "no_target", "scenario", "C_pre has no chunks")
    live = [j for j in live if drafts[j]["status"] == "drafted"]

    # 1. Scenario from three random C_pre chunks.
    calls = [
        Call(
            "generate_scenario",
            {"context": join_chunks(drafts[j]["scenario_chunk_ids"], text, cap)},
            params.scenario_max_tokens or budget,
        )
        for j in live
    ]
    for j, reply in zip(live, complete(calls), strict=True):
        if _record(reply, drafts[j], "scenario"):
            try:
                drafts[j]["scenario"] = parse_scenario(
                    reply, max_words=params.max_words, trim=params.trim_scenarios, notes=drafts[j]["notes"]
                )
            except FormatError as exc:
                _fail(drafts[j], "lost_to_format", "scenario", str(exc))
    live = [j for j in live if drafts[j]["status"] == "drafted"]

    # 2. Target chunk: cosine top-k from C_pre (answerable) or C_post (unanswerable).
    for corpus in ("pre", "post"):
        group = [j for j in live if drafts[j]["answerable"] == (corpus == "pre")]
        hits = search([drafts[j]["scenario"] for j in group], corpus, params.target_pool) if group else []
        for j, ranked in zip(group, hits, strict=True):
            d = drafts[j]
            ranked = known_ids(ranked, titles[corpus], f"candidate {d['id']}: C_{corpus} search")
            exclude = d["scenario_chunk_ids"] if d["answerable"] else ()
            chosen, eligible = choose_target(
                ranked[: params.target_pool],
                titles[corpus],
                rngs[j],
                exclude=exclude,
                patterns=params.technical_title_patterns,
                draw=params.target_draw,
            )
            d.update(target_pool_ids=list(ranked[: params.target_pool]), eligible_targets=eligible)
            if chosen is None:
                _fail(d, "no_target", "target", f"no eligible chunk among {len(ranked)} retrieved from C_{corpus}")
            else:
                d.update(target_chunk_id=chosen, target_title=titles[corpus][chosen], target_url=urls.get(chosen))
    live = [j for j in live if drafts[j]["status"] == "drafted"]

    # 3. Facts in the target chunk but not in the comparison text.
    unans = [j for j in live if not drafts[j]["answerable"]]
    near = search([text[drafts[j]["target_chunk_id"]] for j in unans], "pre", params.comparison_chunks) if unans else []
    for j, ids in zip(unans, near, strict=True):
        ids = known_ids(ids, titles["pre"], f"candidate {drafts[j]['id']}: C_pre search")
        drafts[j]["comparison_chunk_ids"] = ids[: params.comparison_chunks]
    for j in live:
        if drafts[j]["answerable"]:
            drafts[j]["comparison_chunk_ids"] = list(drafts[j]["scenario_chunk_ids"])
    calls = [
        Call(
            "generate_facts",
            {
                "old": join_chunks(drafts[j]["comparison_chunk_ids"], text, cap),
                "new": text[drafts[j]["target_chunk_id"]],
            },
            budget,
        )
        for j in live
    ]
    for j, reply in zip(live, complete(calls), strict=True):
        d = drafts[j]
        if not _record(reply, d, "facts"):
            continue
        try:
            d["facts"] = parse_facts(reply, max_facts=params.max_facts, notes=d["notes"])
        except FormatError as exc:
            _fail(d, "lost_to_format", "facts", str(exc))
            continue
        if not d["facts"]:
            _fail(d, "no_facts", "facts", "G_facts found no new fact in the target chunk")
            continue
        d["fact_index"] = int(rngs[j].integers(len(d["facts"])))
        d["fact"] = d["facts"][d["fact_index"]]
    live = [j for j in live if drafts[j]["status"] == "drafted"]

    # 4. Question, appended to the scenario.
    calls = [
        Call(
            "generate_question",
            {"scenario": drafts[j]["scenario"], "fact": drafts[j]["fact"], "chunk": text[drafts[j]["target_chunk_id"]]},
            params.question_max_tokens or budget,
        )
        for j in live
    ]
    for j, reply in zip(live, complete(calls), strict=True):
        d = drafts[j]
        if _record(reply, d, "question"):
            try:
                d["asked_question"] = parse_question(reply, d["scenario"], max_words=params.max_words, notes=d["notes"])
                d["question"] = f"{d['scenario']} {d['asked_question']}"
            except FormatError as exc:
                _fail(d, "lost_to_format", "question", str(exc))
    return pl.DataFrame(drafts, schema=DRAFT_SCHEMA)


_S, _L = pl.String, pl.List(pl.String)
DRAFT_SCHEMA: dict[str, Any] = {
    "id": _S,
    "index": pl.Int64,
    "answerable": pl.Boolean,
    "generator": _S,
    "status": _S,
    "step": _S,
    "reason": _S,
    "notes": _L,
    "scenario_chunk_ids": _L,
    "scenario_raw": _S,
    "scenario_key": _S,
    "scenario": _S,
    "target_pool_ids": _L,
    "eligible_targets": pl.Int64,
    "target_chunk_id": _S,
    "target_title": _S,
    "target_url": _S,
    "comparison_chunk_ids": _L,
    "facts_raw": _S,
    "facts_key": _S,
    "facts": _L,
    "fact_index": pl.Int64,
    "fact": _S,
    "question_raw": _S,
    "question_key": _S,
    "asked_question": _S,
    "question": _S,
}
