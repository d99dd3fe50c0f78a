"""Iterative RAG (§4.2, Appendix H "Iterative RAG", Algorithm 4): reflect, retrieve more, answer.

Algorithm 4 itself is not in our copy of the paper; this is our reading of its description:

1. Round 0 retrieves the same ``k`` chunks as single-shot RAG for the user's question.
2. The model under test answers the reflection prompt (App. J.2) on the context gathered so far:
   a JSON object with ``assessment``, ``missing_info`` and ``follow_up_questions``.
3. If it says "Insufficient" and asks 1-5 follow-up questions, each follow-up is sent to the same
   retriever and the results are merged round-robin, skipping chunks already in the context, until
   ``k`` new chunks are found: the follow-ups *share* the original budget of ``k`` chunks per round.
4. Steps 2-3 repeat for at most ``max_rounds`` additional rounds; then the answer prompt sees every
   chunk gathered, in the order it was retrieved.

Every round is recorded (queries, new chunk ids, reflection JSON or why it was unusable). Malformed
reflections never crash a run and are never guessed: each has one defined outcome (see
:func:`parse_reflection`), and the loop answers with the context it has.

Everything here is pure: retrieval and the model are injected callables that work on whole batches
(one call per round for all questions), so a GPU server sees many requests at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

import polars as pl

from declinecraft.llm.calls import Reply
from declinecraft.llm.responses import FormatError, parse_json

#: The reflection prompt asks for "1-5" follow-up questions.
MAX_FOLLOW_UPS = 5
#: The placeholder inside the reflection prompt's JSON example; a model that copies it back has
#: not asked a question, so the copy is not a usable follow-up (small models do this).
TEMPLATE_FOLLOW_UP = (
    "Generate 1-5 specific questions here that target the missing information. "
    "If sufficient, this should be an empty list."
)

Status = Literal[
    "sufficient",  # the model judged the context sufficient: stop and answer
    "insufficient",  # insufficient with usable follow-ups: retrieve another round
    "no_follow_ups",  # insufficient but no usable follow-up question: stop and answer
    "lost_to_format",  # no JSON object with a valid assessment: stop and answer
    "budget_exhausted",  # the reflection ran out of tokens before any text: stop and answer
    "error",  # the call failed: stop and answer
]


@dataclass(frozen=True)
class Reflection:
    """One parsed reflection and the outcome it leads to."""

    status: Status
    assessment: str | None = None
    """"Sufficient" or "Insufficient" as the model wrote it (normalised case), else None."""
    missing_info: str = ""
    follow_ups: tuple[str, ...] = ()
    """Usable follow-up questions (non-empty strings, at most :data:`MAX_FOLLOW_UPS`)."""
    n_follow_ups_given: int = 0
    """How many follow-up entries the model wrote, before cleaning and truncation."""
    truncated: bool = False
    """The model asked more than :data:`MAX_FOLLOW_UPS` questions; the first five were kept."""
    echoed_template: bool = False
    """A follow-up was the prompt's own placeholder text, copied back; it was dropped."""
    raw: str = ""
    cache_key: str | None = None


@dataclass(frozen=True)
class Round:
    """One retrieval round: the queries sent, the new chunks found, and the reflection after it."""

    index: int
    queries: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    """Chunks added to the context in this round (already-seen chunks are skipped)."""
    reflection: Reflection | None = None
    """None when no reflection followed (the last allowed round, or no new chunks)."""
    stop: str | None = None
    """Why the loop ended after this round, if it did."""


@dataclass
class Trace:
    """All rounds of one question; :attr:`chunk_ids` is the context of the final answer."""

    query: str
    rounds: list[Round] = field(default_factory=list)

    @property
    def chunk_ids(self) -> list[str]:
        """Every chunk gathered, in retrieval order."""
        return [c for r in self.rounds for c in r.chunk_ids]

    def to_json(self) -> str:
        """The rounds as a JSON string (the ``rounds`` column of responses.parquet)."""
        return json.dumps([asdict(r) for r in self.rounds], ensure_ascii=False)


def _json_object(text: str) -> dict[str, object] | None:
    """The JSON object in a reply (lenient: fences, prose around it, trailing commas), if any."""
    try:
        value = parse_json(text)
    except FormatError:
        return None
    return value if isinstance(value, dict) else None


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").strip(" .").split())


def parse_reflection(text: str) -> Reflection:
    """Parse a reflection reply into its outcome.

    Defined outcomes for bad input:
      - no JSON object, or ``assessment`` neither "Sufficient" nor "Insufficient" (any case):
        ``lost_to_format`` (counted; the loop stops and answers with the context it has);
      - "Sufficient": stop, whatever follow-ups it also lists;
      - "Insufficient" with 0 usable follow-ups (missing, empty, non-strings, or only the prompt's
        placeholder copied back, :data:`TEMPLATE_FOLLOW_UP`): ``no_follow_ups``;
      - more than five follow-ups: the first five are used and ``truncated`` is set.
    """
    obj = _json_object(text or "")
    if obj is None:
        return Reflection("lost_to_format", raw=text)
    assessment = str(obj.get("assessment", "")).strip().strip(".").lower()
    if assessment not in ("sufficient", "insufficient"):
        return Reflection("lost_to_format", raw=text)
    missing = obj.get("missing_info", "")
    given = obj.get("follow_up_questions", [])
    if isinstance(given, str):  # a single question written as a bare string
        given = [given]
    if not isinstance(given, list):
        given = []
    strings = [q.strip() for q in given if isinstance(q, str) and q.strip()]
    usable = [q for q in strings if _norm(q) != _norm(TEMPLATE_FOLLOW_UP)]
    parsed = Reflection(
        "insufficient",
        assessment=assessment.capitalize(),
        missing_info=missing if isinstance(missing, str) else json.dumps(missing),
        n_follow_ups_given=len(given),
        echoed_template=len(usable) < len(strings),
        raw=text,
    )
    if assessment == "sufficient":
        return replace(parsed, status="sufficient")
    if not usable:
        return replace(parsed, status="no_follow_ups")
    return replace(parsed, follow_ups=tuple(usable[:MAX_FOLLOW_UPS]), truncated=len(usable) > MAX_FOLLOW_UPS)


def reflection_of(reply: Reply) -> Reflection:
    """Turn a model reply into a :class:`Reflection` (errors and exhausted budgets first)."""
    if reply.error:
        return Reflection("error", raw=reply.error, cache_key=reply.cache_key)
    if reply.budget_exhausted:
        return Reflection("budget_exhausted", raw=reply.text, cache_key=reply.cache_key)
    return replace(parse_reflection(reply.text), cache_key=reply.cache_key)


def allocate(ranked: Sequence[Sequence[str]], k: int, seen: Collection[str]) -> list[str]:
    """Share a budget of ``k`` new chunks between several ranked lists, round-robin.

    Takes each list's best unseen chunk in turn (list 1, list 2, ..., then each list's second),
    skipping chunks in ``seen`` or already taken, until ``k`` are chosen or the lists run out.
    """
    taken: list[str] = []
    used = set(seen)
    cursors = [0] * len(ranked)
    while len(taken) < k and any(c < len(r) for c, r in zip(cursors, ranked, strict=True)):
        for i, hits in enumerate(ranked):
            while cursors[i] < len(hits) and hits[cursors[i]] in used:
                cursors[i] += 1
            if cursors[i] < len(hits) and len(taken) < k:
                taken.append(hits[cursors[i]])
                used.add(hits[cursors[i]])
                cursors[i] += 1
    return taken


#: ``retrieve(queries, k)`` -> one ranked list of chunk ids per query.
Retrieve = Callable[[Sequence[str], int], list[list[str]]]
#: ``reflect([(query, chunk_ids), ...])`` -> one reply per item, in order.
Reflect = Callable[[Sequence[tuple[str, Sequence[str]]]], Sequence[Reply]]


def run(
    queries: Sequence[str],
    *,
    retrieve: Retrieve,
    reflect: Reflect,
    k: int,
    max_rounds: int,
    first: Sequence[Sequence[str]] | None = None,
) -> list[Trace]:
    """Run Algorithm 4 for a batch of questions and return one :class:`Trace` each.

    Args:
        queries: the user's questions (scenario + question, or the question alone).
        retrieve: batch retriever; asked for ``k`` chunks in round 0 and ``k + len(context)``
            per follow-up later, so each follow-up list still has ``k`` unseen chunks if they exist.
        reflect: batch model call on the reflection prompt for (query, context chunk ids).
        k: chunks per round (the single-shot budget).
        max_rounds: additional retrieval rounds allowed after round 0 (the paper: 2).
        first: round-0 chunk ids when already retrieved (single-shot's), else retrieved here.
    """
    if k < 1 or max_rounds < 0:
        raise ValueError(f"iterative RAG needs k >= 1 and max_rounds >= 0, got k={k}, max_rounds={max_rounds}")
    initial = [list(ids) for ids in first] if first is not None else retrieve(list(queries), k)
    if len(initial) != len(queries):
        raise ValueError(f"retriever returned {len(initial)} result lists for {len(queries)} queries")
    traces = [
        Trace(q, [Round(0, (q,), tuple(dict.fromkeys(ids))[:k])]) for q, ids in zip(queries, initial, strict=True)
    ]
    active = list(range(len(traces)))
    for index in range(1, max_rounds + 1):
        if not active:
            break
        replies = reflect([(traces[i].query, traces[i].chunk_ids) for i in active])
        if len(replies) != len(active):
            raise ValueError(f"reflect returned {len(replies)} replies for {len(active)} questions")
        going: dict[int, tuple[str, ...]] = {}  # question -> its follow-up queries
        for i, reply in zip(active, replies, strict=True):
            reflection = reflection_of(reply)
            stop: str | None = None if reflection.status == "insufficient" else reflection.status
            traces[i].rounds[-1] = replace(traces[i].rounds[-1], reflection=reflection, stop=stop)
            if stop is None:
                going[i] = reflection.follow_ups
        if not going:
            break
        flat = [q for follow_ups in going.values() for q in follow_ups]
        depth = k + max(len(traces[i].chunk_ids) for i in going)
        hits = retrieve(flat, depth)
        if len(hits) != len(flat):
            raise ValueError(f"retriever returned {len(hits)} result lists for {len(flat)} queries")
        active, offset = [], 0
        for i, follow_ups in going.items():
            ranked = hits[offset : offset + len(follow_ups)]
            offset += len(follow_ups)
            new = allocate(ranked, k, traces[i].chunk_ids)
            stop = None if new else "no_new_chunks"
            if index == max_rounds and new:
                stop = "max_rounds"
            traces[i].rounds.append(Round(index, follow_ups, tuple(new), stop=stop))
            if stop is None:
                active.append(i)
    return traces


def stop_table(responses: pl.DataFrame) -> pl.DataFrame:
    """Count iterative responses by model, thinking, rounds and why the loop stopped.

    ``responses`` is ``05_answer/responses.parquet`` (its ``rounds`` column holds each response's
    rounds as JSON); the stop reason is the last round's ``stop``.
    """
    part = responses.filter(pl.col("condition") == "iterative")
    stops = [json.loads(r)[-1]["stop"] if r else None for r in part["rounds"]]
    return (
        part.select("model", "thinking", "n_rounds")
        .with_columns(stop=pl.Series(stops, dtype=pl.String))
        .group_by("model", "thinking", "n_rounds", "stop")
        .len()
        .sort("model", "thinking", "n_rounds", "stop")
    )
