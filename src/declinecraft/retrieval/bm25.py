"""BM25 over Tantivy: the analyzer shared by the index and the queries, queries built from our own
tokens, and the two-pass search that keeps a million-chunk corpus fast.

Tantivy hard-codes BM25's k1=1.2 and b=0.75; the paper used k1=1.5. The difference is a recorded
deviation (a param that must say 1.2), never a silently ignored setting.

**Why two passes.** Tantivy's Python binding collects a search's hits through a ``MultiCollector``,
which never reaches Tantivy's block-max WAND: a query scores every chunk that holds any of its
terms, so one near-universal word ("the", "block") makes it score nearly every chunk. A query's
score is a sum over its terms, and a frequent term's part of it does not depend on the query. So
the build stores, for every term found in at least ``bm25_frequent_share`` of C_pre's chunks, the
score Tantivy gives each chunk for it (:func:`write_frequent`). Above ``bm25_exact_max_rows``
chunks a search (:func:`search_two_pass`) asks Tantivy for the best ``bm25_candidates`` chunks
by the query's other terms, adds the stored frequent-term scores to exactly those, and ranks them
again. Every returned score is the chunk's full BM25 score (up to float32 rounding of the sum's
order); what can differ from a search over every term is which chunks get scored, when a chunk
ranked below the candidates by the rarer terms climbs into the top by frequent terms alone.
``benchmarks/bench_retrieval_scale.py`` measures how often.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tantivy
from numpy.typing import NDArray

from declinecraft.core.config import IndexParams

#: Tantivy's BM25 constants (hard-coded in tantivy, see quickwit-oss/tantivy#2195).
TANTIVY_K1 = 1.2
TANTIVY_B = 0.75
#: The frequent terms' stored scores, beside ``tantivy/`` in an index version folder.
FREQUENT_FILE = "bm25_frequent.npy"

Rows = tuple[NDArray[np.int64], NDArray[np.float32]]


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


def text_query(schema: tantivy.Schema, counts: Mapping[str, int]) -> tantivy.Query:
    """Return the BM25 query of some tokens: one term query each, boosted by its count.

    A token said twice counts twice, as in classic BM25 (and rank_bm25).
    """
    clauses = []
    for token, count in counts.items():
        term = tantivy.Query.term_query(schema, "text", token, index_option="freq")
        clauses.append((tantivy.Occur.Should, term if count == 1 else tantivy.Query.boost_query(term, float(count))))
    return tantivy.Query.boolean_query(clauses)


def search_rows(searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> Rows:
    """Return (C_pre rows, scores) of a query's best ``limit`` chunks, best first."""
    hits = searcher.search(query, limit=limit, count=False).hits
    if not hits:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    rows = searcher.fast_field_values("row", [address for _, address in hits])
    return np.asarray(rows, dtype=np.int64), np.asarray([s for s, _ in hits], dtype=np.float32)


# --- the frequent terms' stored scores ---------------------------------------------------------


def frequent_terms(searcher: tantivy.Searcher, share: float) -> list[tuple[str, int]]:
    """Return (token, doc freq) of every term found in at least ``share`` of the chunks, most
    frequent first (ties by token)."""
    need = max(1, math.ceil(share * searcher.num_docs))
    limit = 64
    while True:
        terms = searcher.terms_with_prefix("text", "", limit=limit)
        if len(terms) < limit or terms[-1][1] < need:
            return [(token, int(count)) for token, count in terms if count >= need]
        limit *= 4


def write_frequent(index: tantivy.Index, folder: Path, share: float) -> dict[str, Any]:
    """Store every frequent term's score in every chunk, as Tantivy computes it; return its manifest entry.

    Writes ``folder/bm25_frequent.npy``, a float32 [terms, chunks] matrix (0 where a chunk lacks
    the term), each row from a search for that term alone: a term query's BM25 weight depends
    only on the index statistics, so it is the same inside any query.
    """
    searcher = index.searcher()
    terms = frequent_terms(searcher, share)
    scores = np.zeros((len(terms), searcher.num_docs), dtype=np.float32)
    for i, (token, doc_freq) in enumerate(terms):
        rows, found = search_rows(searcher, text_query(index.schema, {token: 1}), doc_freq)
        if len(rows) != doc_freq:
            raise RuntimeError(
                f"{folder}: Tantivy returned {len(rows)} chunks for {token!r}, whose doc freq is {doc_freq}"
            )
        scores[i, rows] = found
    np.save(folder / FREQUENT_FILE, scores)
    return {"file": FREQUENT_FILE, "share": share, "terms": [t for t, _ in terms], "doc_freqs": [d for _, d in terms]}


@dataclass(frozen=True)
class FrequentScores:
    """The stored scores of an index's frequent terms: one row of ``scores`` per token."""

    rows: Mapping[str, int]
    scores: NDArray[np.float32]

    @classmethod
    def load(cls, folder: str | os.PathLike[str], entry: Mapping[str, Any] | None, chunks: int) -> FrequentScores:
        """Open the scores an index stored for its ``chunks`` C_pre chunks (memory-mapped); none
        for an index built without them.

        Raises:
            RuntimeError: the file does not hold one float32 row per listed term of ``chunks`` scores.
        """
        if not entry:
            return cls({}, np.zeros((0, chunks), dtype=np.float32))
        path = Path(folder) / entry["file"]
        scores = np.load(path, mmap_mode="r")
        want = (len(entry["terms"]), chunks)
        if scores.shape != want or scores.dtype != np.float32:
            raise RuntimeError(
                f"{path}: holds {scores.dtype} {scores.shape}, the manifest says float32 {want} (terms, chunks)"
            )
        return cls({token: i for i, token in enumerate(entry["terms"])}, scores)


def search_two_pass(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    counts: Mapping[str, int],
    frequent: FrequentScores,
    depth: int,
    candidates: int,
) -> Rows | None:
    """Return (rows, full BM25 scores) of the best ``depth`` of ``candidates`` chunks found by the
    query's rarer terms, their frequent terms' stored scores added; ``None`` where a search over
    every term is needed instead.

    That is: the query has no frequent or no rarer term, ``depth`` exceeds ``candidates``, or the
    rarer terms match fewer than ``candidates`` chunks (a chunk holding only frequent terms could
    then rank, and the full search costs little anyway).
    """
    common = {t: c for t, c in counts.items() if t in frequent.rows}
    rare = {t: c for t, c in counts.items() if t not in frequent.rows}
    if not common or not rare or depth > candidates:
        return None
    rows, scores = search_rows(searcher, text_query(schema, rare), candidates)
    if len(rows) < candidates:
        return None
    for token, count in common.items():
        part = frequent.scores[frequent.rows[token]][rows]
        scores += part if count == 1 else np.float32(count) * part
    order = np.lexsort((rows, -scores))[:depth]
    return rows[order], scores[order]


def check_bm25_params(params: IndexParams) -> None:
    """Refuse BM25 settings Tantivy cannot honour or that mean nothing.

    Raises:
        ValueError: ``bm25_k1`` is not 1.2 or ``bm25_b`` is not 0.75 (Tantivy hard-codes both; the
            paper's k1=1.5 is a recorded deviation, not a setting), ``bm25_frequent_share`` is
            outside (0, 1], ``bm25_candidates`` is below 1 or ``bm25_exact_max_rows`` is negative.
    """
    if not 0 < params.bm25_frequent_share <= 1:
        raise ValueError(
            f"index.bm25_frequent_share must be in (0, 1] (a share of C_pre's chunks), got {params.bm25_frequent_share}"
        )
    if params.bm25_candidates < 1:
        raise ValueError(f"index.bm25_candidates must be >= 1, got {params.bm25_candidates}")
    if params.bm25_exact_max_rows < 0:
        raise ValueError(f"index.bm25_exact_max_rows must be >= 0, got {params.bm25_exact_max_rows}")
    if params.bm25_k1 != TANTIVY_K1 or params.bm25_b != TANTIVY_B:
        raise ValueError(
            f"index.bm25_k1={params.bm25_k1}, index.bm25_b={params.bm25_b}: Tantivy's BM25 is fixed at "
            f"k1={TANTIVY_K1}, b={TANTIVY_B} and cannot use other values. Set bm25_k1: {TANTIVY_K1} and "
            f"bm25_b: {TANTIVY_B} (the paper's k1=1.5 is a listed deviation; "
            "benchmarks/bench_retrieval.py measures its effect)"
        )
