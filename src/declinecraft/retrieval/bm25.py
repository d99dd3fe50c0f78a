"""BM25 text analysis: the Tantivy analyzer shared by the index and the queries, and its constants.

Tantivy hard-codes BM25's k1=1.2 and b=0.75; the paper used k1=1.5. The difference is a recorded
deviation (a param that must say 1.2), never a silently ignored setting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import tantivy

from declinecraft.core.config import IndexParams

#: Tantivy's BM25 constants (hard-coded in tantivy, see quickwit-oss/tantivy#2195).
TANTIVY_K1 = 1.2
TANTIVY_B = 0.75


def bm25_analyzer(name: str = "en_stem") -> tantivy.TextAnalyzer:
    """Return the Tantivy analyzer used both to index chunks and to tokenize queries.

    ``en_stem``: split on non-alphanumerics, drop tokens over 40 bytes, lowercase, fold accents,
    English Snowball stemming. ``default``: the same without folding and stemming (Tantivy's own
    default analyzer).
    """
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    builder = builder.filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
    if name == "en_stem":
        builder = builder.filter(tantivy.Filter.ascii_fold()).filter(tantivy.Filter.stemmer("english"))
    elif name != "default":
        raise ValueError(f"unknown BM25 analyzer {name!r} (known: en_stem, default)")
    return builder.build()


def max_contribution(count: int, doc_freq: int, docs: int) -> float:
    """Return the most one query term can add to a chunk's BM25 score (Tantivy's formula).

    A term said ``count`` times in the query, found in ``doc_freq`` of ``docs`` chunks, adds
    count x idf x tf / (tf + k1 x length norm) < count x idf x (k1 + 1), with Tantivy's
    idf = ln(1 + (docs - doc_freq + 0.5) / (doc_freq + 0.5)).
    """
    idf = math.log(1.0 + (docs - doc_freq + 0.5) / (doc_freq + 0.5))
    return count * idf * (TANTIVY_K1 + 1.0)


def prune_terms(counts: Mapping[str, int], doc_freq: Callable[[str], int], docs: int, budget: float) -> dict[str, int]:
    """Return the query terms left after dropping the most frequent ones within a score budget.

    Terms are dropped most frequent first (ties by token) while the sum of their
    :func:`max_contribution` stays at most ``budget``, so no chunk's score falls by more than
    ``budget``; a term found in no chunk is dropped for free, and the rarest term found in any
    chunk is always kept. ``budget`` 0 keeps every term found in a chunk (the exact score).
    """
    found = sorted((t for t in counts if doc_freq(t) > 0), key=lambda t: (-doc_freq(t), t))
    spent = 0.0
    for i, token in enumerate(found[:-1]):
        spent += max_contribution(counts[token], doc_freq(token), docs)
        if spent > budget:
            return {t: counts[t] for t in found[i:]}
    return {t: counts[t] for t in found[-1:]}


def check_bm25_params(params: IndexParams) -> None:
    """Refuse BM25 settings Tantivy cannot honour or that mean nothing.

    Raises:
        ValueError: ``bm25_k1`` is not 1.2 or ``bm25_b`` is not 0.75 (Tantivy hard-codes both; the
            paper's k1=1.5 is a recorded deviation, not a setting), or ``bm25_max_score_error`` is
            negative.
    """
    if params.bm25_max_score_error < 0:
        raise ValueError(f"index.bm25_max_score_error must be >= 0 (0 = exact BM25), got {params.bm25_max_score_error}")
    if params.bm25_k1 != TANTIVY_K1 or params.bm25_b != TANTIVY_B:
        raise ValueError(
            f"index.bm25_k1={params.bm25_k1}, index.bm25_b={params.bm25_b}: Tantivy's BM25 is fixed at "
            f"k1={TANTIVY_K1}, b={TANTIVY_B} and cannot use other values. Set bm25_k1: {TANTIVY_K1} and "
            f"bm25_b: {TANTIVY_B} (the paper's k1=1.5 is a listed deviation; "
            "benchmarks/bench_retrieval.py measures its effect)"
        )
