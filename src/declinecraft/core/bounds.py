"""The range of every number in the params blocks, checked when a params file is loaded.

So ``k: -3`` or ``max_tokens: -1`` is refused by ``make check-params`` (and before any stage runs)
with the file and the key named, instead of failing deep inside a stage, or (``max_tokens: -1``)
reaching a server that reads it as "no limit". Every int and float field of every block has an
entry here; a test checks that a new field cannot be added without one.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Any

#: Largest output budget or context size accepted, in tokens (no served model reads more).
MAX_TOKENS = 1_000_000


@dataclass(frozen=True)
class Bound:
    """An inclusive range (``None`` = unbounded on that side)."""

    low: float | None = None
    high: float | None = None
    above: bool = False
    """The value must be strictly greater than ``low`` (a rate, a timeout, a confidence level)."""
    below: bool = False
    """The value must be strictly less than ``high``."""

    def allows(self, value: float) -> bool:
        """Whether ``value`` lies in the range (never NaN or infinite)."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return False
        return self.high is None or (value < self.high if self.below else value <= self.high)

    def describe(self) -> str:
        """The range in words: ``>= 1 and <= 1e+06``."""
        low = "" if self.low is None else f"{'>' if self.above else '>='} {self.low:g}"
        high = "" if self.high is None else f"{'<' if self.below else '<='} {self.high:g}"
        return " and ".join(p for p in (low, high) if p)


COUNT = Bound(0)
"""A count or size where 0 is meaningful (0 = none, or all, or the other setting: see the field)."""
POSITIVE = Bound(1)
TOKENS = Bound(1, MAX_TOKENS)
TOKENS_OR_0 = Bound(0, MAX_TOKENS)
"""A budget where 0 means "take another setting" (the field's docstring says which)."""
TEMPERATURE = Bound(0, 2)
PROPORTION = Bound(0, 1)
LEVEL = Bound(0, 1, above=True, below=True)
"""A confidence level or significance threshold: strictly between 0 and 1."""
SECONDS = Bound(0, above=True)

BOUNDS: dict[str, dict[str, Bound]] = {
    "corpus": {
        "requests_per_second": SECONDS,
        "max_retries": COUNT,
        "timeout_s": SECONDS,
        "maxlag": COUNT,
        "max_pages": POSITIVE,
        "namespaces": COUNT,
        "min_chars": COUNT,
        "chunk_size": POSITIVE,
        "chunk_overlap": COUNT,
    },
    "index": {
        "bm25_k1": Bound(0),
        "bm25_b": PROPORTION,
        "bm25_exact_max_rows": COUNT,
        "bm25_frequent_share": PROPORTION,
        "bm25_candidates": POSITIVE,
        "rrf_k": Bound(0),
        "fusion_depth": POSITIVE,
        "rerank_pool": POSITIVE,
        "batch_size": POSITIVE,
        "dense_flat_max_rows": COUNT,
        "dense_partitions": COUNT,
        "dense_partition_rows": POSITIVE,
        "dense_hnsw_m": POSITIVE,
        "dense_hnsw_ef_construction": POSITIVE,
        "dense_pq_sub_vectors": COUNT,
        "dense_nprobes": POSITIVE,
        "dense_ef": POSITIVE,
        "dense_refine_factor": POSITIVE,
    },
    "generate": {
        "n_answerable": COUNT,
        "n_unanswerable": COUNT,
        "scenario_chunks": POSITIVE,
        "target_pool": POSITIVE,
        "target_draw": POSITIVE,
        "max_facts": POSITIVE,
        "comparison_chunks": COUNT,
        "max_words": POSITIVE,
        "max_tokens": TOKENS,
        "scenario_max_tokens": TOKENS_OR_0,
        "question_max_tokens": TOKENS_OR_0,
        "prompt_chunk_chars": COUNT,
        "temperature": TEMPERATURE,
    },
    "verify": {
        "retrieve_k": POSITIVE,
        "context_chars": COUNT,
        "target_answerable": COUNT,
        "target_unanswerable": COUNT,
        "max_per_chunk": POSITIVE,
        "max_per_page": POSITIVE,
        "audit_k": POSITIVE,
        "audit_folds": Bound(2),
        "audit_min_df": POSITIVE,
        "comparison_answerable": COUNT,
        "comparison_unanswerable": COUNT,
        "max_tokens": TOKENS,
        "temperature": TEMPERATURE,
    },
    "answer": {
        "k": POSITIVE,
        "max_rounds": COUNT,
        "k_sweep": POSITIVE,
        "context_chars": COUNT,
        "max_tokens": TOKENS,
        "temperature": TEMPERATURE,
        "limit_questions": COUNT,
    },
    "judge": {
        "second_judge_sample": COUNT,
        "truncate_chars": POSITIVE,
        "oracle_page_chars": COUNT,
        "oracle_chunk_chars": COUNT,
        "max_tokens": TOKENS,
        "oracle_max_tokens": TOKENS_OR_0,
        "temperature": TEMPERATURE,
        "check_min_agreement": PROPORTION,
        "check_items": COUNT,
    },
    "know2guess": {
        "limit_questions": COUNT,
        "max_tokens": TOKENS,
        "temperature": TEMPERATURE,
        "bootstrap_resamples": POSITIVE,
        "confidence": LEVEL,
        "lambdas": Bound(0),
        "ece_bins": POSITIVE,
        "audit_top_features": COUNT,
    },
    "evidence": {
        "limit_questions": COUNT,
        "k": COUNT,
        "context_chars": Bound(-1),
        "conflict_max_tokens": TOKENS,
        "max_tokens": TOKENS_OR_0,
        "temperature": TEMPERATURE,
        "bootstrap_resamples": POSITIVE,
        "confidence": LEVEL,
        "alpha": LEVEL,
    },
    "analysis": {
        "bootstrap_resamples": POSITIVE,
        "confidence": LEVEL,
        "alpha": LEVEL,
        "min_attempt": PROPORTION,
        "min_protocol": PROPORTION,
        "max_leakage": PROPORTION,
        "min_judge_kappa": Bound(-1.0, 1.0),
        "annotation_part1": COUNT,
        "annotation_part2": COUNT,
        "min_n": COUNT,
    },
    "paper": {"figure_dpi": POSITIVE},
    "llm": {"max_failed_share": PROPORTION, "budget_usd": Bound(0), "budget_tokens": COUNT},
}


def check(block: str, values: Any, where: str) -> list[str]:
    """Return one message per number of a block that is out of its range, or an empty list.

    Args:
        block: the block's name (``answer``).
        values: the built block (a params dataclass).
        where: the prefix of every message (``<params file>: answer``).
    """
    problems = []
    for name, bound in BOUNDS.get(block, {}).items():
        value = getattr(values, name)
        if value is None:  # an optional number left unset (e.g. no budget)
            continue
        items = list(enumerate(value)) if isinstance(value, tuple) else [(None, value)]
        for index, item in items:
            if not bound.allows(item):
                key = name if index is None else f"{name}[{index}]"
                problems.append(f"{where}.{key}: {item!r} is out of range (needs {bound.describe()})")
    problems += _relations(block, values, where)
    return problems


def _relations(block: str, values: Any, where: str) -> list[str]:
    """Ranges that depend on another key of the block."""
    if block == "corpus" and values.chunk_overlap >= values.chunk_size > 0:
        return [f"{where}.chunk_overlap: {values.chunk_overlap} must be below chunk_size ({values.chunk_size})"]
    if block == "generate" and values.target_draw > values.target_pool:
        return [f"{where}.target_draw: {values.target_draw} must be at most target_pool ({values.target_pool})"]
    return []


def numeric_fields(cls: type) -> set[str]:
    """The int and float fields (and tuples of them) of a params block: each needs a bound."""
    hints = typing.get_type_hints(cls)
    numbers = (int, float)
    optional = {int | None, float | None}
    return {
        f.name
        for f in dataclasses.fields(cls)
        if hints[f.name] in numbers
        or hints[f.name] in optional
        or (typing.get_origin(hints[f.name]) is tuple and typing.get_args(hints[f.name])[0] in numbers)
    }
