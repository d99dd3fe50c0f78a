"""One kind of planned call (:class:`Part`), the question sizes a plan works from, and the
declared sizes of prompts and outputs that tokens are estimated with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.artifacts import read_benchmark
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import answer

#: Characters of one scenario + question as the model sees it (two sentences under 30 words each).
QUESTION_CHARS = 360
#: Characters of an oracle reference answer.
REFERENCE_CHARS = 600
#: Characters of a whole wiki page in the oracle's context when pages are not cut (C_pre of the
#: paper: 11,612 chunks of 1,500 characters from 2,642 pages, about 5,500 characters a page).
PAGE_CHARS = 6000
#: Characters of the "[Page: <title>]" line and separators around each chunk in a context.
CHUNK_OVERHEAD = 40
#: Typical output tokens per call by template, without thinking (declared estimates; the upper
#: bound is always the call's budget). Thinking adds :data:`THINK_TOKENS`.
OUTPUT_TOKENS: dict[str, int] = {
    "generate_scenario": 60,
    "generate_facts": 250,
    "generate_question": 60,
    "verify": 5,
    "answer": 300,
    "reflect": 150,
    "rewrite_query": 30,
    "judge_response": 5,
    "judge_accuracy": 5,
    "oracle": 300,
    "k2g": 80,
    "esb": 250,
    "esb_conflict": 40,
}
#: Typical thinking tokens of a call with thinking on (declared; the paper's budget is 16,000 and
#: 1.9 % of its answers exhausted it).
THINK_TOKENS = 1500


@dataclass(frozen=True)
class Part:
    """One kind of call a stage makes to one model."""

    stage: str
    """The stage notebook (``05_answer``)."""
    model: str
    """Registry id."""
    what: str
    """The template or kind of call (``answer_no_context``, ``judge_response``...)."""
    calls_min: int
    calls_max: int
    prompt_chars: int
    """Estimated characters of one call's prompt (template and fields)."""
    output_tokens: int
    """Typical output tokens of one call, thinking included (at most ``budget``)."""
    budget: int
    """The call's output budget (``max_tokens``)."""
    responses: int = 0
    """Rows of ``05_answer/responses.parquet`` this part writes (answer calls of the main grid and
    the ablations)."""
    setting: str = ""
    """The answer setting (``main``, or the ablation's name) for the responses total."""
    requests: Callable[[], list[dict[str, str]]] | None = field(default=None, compare=False)
    """The calls' template fields where they can be built without running upstream stages (for
    cache lookups); None where they depend on upstream outputs not on disk."""
    template: str = ""
    """The template of :attr:`requests`."""
    mode: str | None = None
    """The thinking mode of :attr:`requests` (the LLM layer's: off, on, prompt; None = the model's default)."""
    temperature: float = 0.0
    """The sampling temperature of :attr:`requests`."""

    @property
    def exact(self) -> bool:
        """True when the design fixes the count."""
        return self.calls_min == self.calls_max

    @property
    def expected(self) -> int:
        """The calls tokens and dollars are counted at: ``calls_max``, but a judge's bound (every
        item asked and re-asked once) counts each item once, as re-asks are rare."""
        return self.calls_max // 2 if self.what.startswith("judge_") else self.calls_max


@dataclass(frozen=True)
class Sizes:
    """Question counts the plan works from."""

    answerable: int
    unanswerable: int
    from_benchmark: bool
    """True: read from the run's benchmark; False: the verify stage's targets (assumed reached)."""
    frame: pl.DataFrame
    """The benchmark (or a stand-in of ids and halves of the target sizes)."""


def sizes(cfg: RunConfig) -> Sizes:
    """The run's benchmark when stage 04 has written it, else a stand-in at the verify targets."""
    if catalogue.VERIFY_BENCHMARK.path(cfg).is_file():
        bench = read_benchmark(cfg)
        n_ans = int(bench["answerable"].sum())
        return Sizes(n_ans, bench.height - n_ans, True, bench)
    v = cfg.verify
    halves = (("a", v.target_answerable), ("u", v.target_unanswerable))
    ids = [f"{half}{i:05d}" for half, n in halves for i in range(n)]
    frame = pl.DataFrame({"id": ids, "answerable": [i.startswith("a") for i in ids]})
    return Sizes(v.target_answerable, v.target_unanswerable, False, frame)


def halves(frame: pl.DataFrame) -> tuple[int, int]:
    """(answerable, unanswerable) questions of a frame with an ``answerable`` column."""
    n_ans = int(frame["answerable"].sum()) if frame.height else 0
    return n_ans, frame.height - n_ans


def distinct_queries(frame: pl.DataFrame, scenario: bool) -> int:
    """Distinct questions as the model sees them (with or without the scenario): two questions of the
    same text make one call. A stand-in frame without question text counts its rows."""
    if "question" not in frame.columns:
        return frame.height
    return len({answer.query_of(r, scenario) for r in frame.to_dicts()})


def chunk_chars(size: int, cut: int) -> int:
    """Characters of one chunk in a prompt: the chunk (cut when ``cut`` > 0) and its header."""
    return (min(size, cut) if cut > 0 else size) + CHUNK_OVERHEAD


def output_of(what: str, budget: int, thinking: bool) -> int:
    """Typical output tokens of a call of kind ``what`` (:data:`OUTPUT_TOKENS`, plus
    :data:`THINK_TOKENS` when it thinks), never above its budget."""
    return min(budget, OUTPUT_TOKENS[what] + (THINK_TOKENS if thinking else 0))
