"""Retrieval speed and agreement: our stack (Tantivy + LanceDB) against the paper's kind
of stack (rank_bm25 BM25Okapi k1=1.5 + ChromaDB HNSW), both fused by the same RRF (K=60).

    .venv/bin/python benchmarks/bench_retrieval.py [--chunks N] [--queries M] [--seed S]

* Corpus: paper scale, 11,612 chunks of ~1,400 characters ("[Page: <title>] ..."). Synthetic by
  default (Zipf-distributed pseudo-words, so posting-list lengths look like real text); with
  ``--from-parquet PATH`` the corpus stage's chunks are replicated, sentence order shuffled, until
  the size is reached.
* Queries: 1,000 self-queries (a question stem + a 12-40 word window of one chunk), so each has a
  known target chunk and Hit@5 measures quality on both stacks.
* Embeddings are computed ONCE (``hash-384``: feature hashing, a sparse random projection of the
  bag of words) and the same vectors are fed to both stacks; query embedding is not timed.
* Both stacks use the same tokens (our Tantivy analyzer), so BM25 differences come from the engine
  and k1, not from tokenisation.
* Each stack runs in its own fresh process, so build time and peak RSS are its own.
* Query throughput is measured as each stack is used: ours with one batched call per pipeline
  (``Retriever.search_many``; dense = one exact (flat) LanceDB multi-vector query per block of 256 queries),
  the baseline with one call per query (how a LangChain-style retriever calls rank_bm25/Chroma).
  Our one-query-at-a-time ``Retriever.search`` loop is reported too.

Writes ``outputs/bench/retrieval.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
K = 5
DEPTH = 50  # what each component contributes to RRF (IndexParams.fusion_depth)
RRF_K = 60
STEMS = (
    "How does",
    "What happens when",
    "Why does",
    "Can I use",
    "Where can I find",
    "Is it true that",
    "What is needed for",
    "How many",
)


# --- data ------------------------------------------------------------------------------------


def synthetic_chunks(n: int, seed: int) -> pl.DataFrame:
    """Zipf-distributed pseudo-words: realistic posting-list lengths, deterministic."""
    rng = np.random.default_rng(seed)
    syllables = [a + b for a in "bcdfghklmnprstvwz" for b in ("a", "e", "i", "o", "u", "ar", "en", "or")]
    vocab_size = 30_000
    words = []
    seen = set()
    while len(words) < vocab_size:
        word = "".join(rng.choice(syllables, size=rng.integers(1, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    ranks = np.arange(1, vocab_size + 1)
    probs = 1.0 / ranks**1.07
    probs /= probs.sum()
    titles = [" ".join(rng.choice(words[200:5000], size=rng.integers(1, 3))).title() for _ in range(n // 4 + 1)]
    ids, texts, page_titles = [], [], []
    for i in range(n):
        title = titles[i // 4]
        body = rng.choice(words, size=int(rng.integers(180, 240)), p=probs)
        sentences = []
        for start in range(0, len(body), 14):
            part = " ".join(body[start : start + 14])
            sentences.append(part[:1].upper() + part[1:] + ".")
        ids.append(f"syn-{i:05d}")
        texts.append(f"[Page: {title}] " + " ".join(sentences))
        page_titles.append(title)
    return pl.DataFrame({"chunk_id": ids, "title": page_titles, "text": texts, "corpus": ["pre"] * n})


def replicated_chunks(path: Path, n: int, seed: int) -> pl.DataFrame:
    """The corpus stage's C_pre chunks, replicated with shuffled sentence order up to ``n``."""
    rng = np.random.default_rng(seed)
    base = pl.read_parquet(path).filter(pl.col("corpus") == "pre")
    ids, texts, titles = [], [], []
    for i in range(n):
        row = base.row(i % base.height, named=True)
        text = row["text"]
        if i >= base.height:
            head, _, body = text.partition("] ")
            parts = body.split(". ")
            rng.shuffle(parts)
            text = f"{head}] " + ". ".join(parts)
        ids.append(f"{row['chunk_id']}#{i // base.height}")
        texts.append(text)
        titles.append(row["title"])
    return pl.DataFrame({"chunk_id": ids, "title": titles, "text": texts, "corpus": ["pre"] * n})


def self_queries(chunks: pl.DataFrame, m: int, seed: int) -> tuple[list[str], list[str]]:
    """A question stem + a 12-40 word window of a random chunk; returns (queries, target ids)."""
    rng = np.random.default_rng(seed + 1)
    picks = rng.integers(0, chunks.height, size=m)
    queries, targets = [], []
    for i in picks:
        words = chunks["text"][int(i)].split("] ", 1)[-1].split()
        size = int(rng.integers(12, 41))
        start = int(rng.integers(0, max(1, len(words) - size)))
        queries.append(f"{STEMS[int(rng.integers(len(STEMS)))]} {' '.join(words[start : start + size])}?")
        targets.append(chunks["chunk_id"][int(i)])
    return queries, targets


class Precomputed:
    """An Embedder that serves vectors computed once (documents in order, queries by text)."""

    def __init__(self, name: str, docs: np.ndarray, queries: dict[str, np.ndarray]) -> None:
        self.name, self.dim = name, int(docs.shape[1])
        self._docs, self._queries = docs, queries

    def embed_documents(self, texts):
        assert len(texts) == self._docs.shape[0]
        return self._docs

    def embed_queries(self, texts):
        return np.stack([self._queries[t] for t in texts]).astype(np.float32)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rrf(bm25_ids: list[str], dense_ids: list[str], k: int) -> list[str]:
    from declinecraft.retrieval.fusion import rrf

    return [h.chunk_id for h in rrf({"bm25": bm25_ids, "dense": dense_ids}, k=RRF_K, limit=k)]


# --- the two stacks (each in its own process) --------------------------------------------------


def run_ours(work: Path) -> dict:
    from declinecraft.core.config import IndexParams
    from declinecraft.retrieval import index, retrieve

    chunks = pl.read_parquet(work / "chunks.parquet")
    queries = json.loads((work / "queries.json").read_text())
    docs = np.load(work / "docs.npy")
    qvecs = np.load(work / "queries.npy")
    embedder = Precomputed("hash-384", docs, dict(zip(queries, qvecs, strict=True)))
    params = IndexParams(embedder="hash-384", fusion_depth=DEPTH, rrf_k=RRF_K)
    rss_before = _peak_rss_mb()

    started = time.perf_counter()
    index.build(chunks, work / "ours-index", embedder=embedder, params=params)
    retriever = retrieve.Retriever.open(work / "ours-index", embedder=embedder)
    build_seconds = time.perf_counter() - started

    out: dict = {"build_seconds": build_seconds, "qps": {}, "top5": {}}
    retriever.search_many(queries[:20], "hybrid", K)  # warm-up (page cache, first allocations)
    for pipeline in ("bm25", "dense", "hybrid"):
        started = time.perf_counter()
        results = retriever.search_many(queries, pipeline, K)
        elapsed = time.perf_counter() - started
        out["qps"][pipeline] = len(queries) / elapsed
        out["top5"][pipeline] = [[h.chunk_id for h in hits] for hits in results]
    started = time.perf_counter()
    for query in queries:
        retriever.search(query, "hybrid", K)
    out["qps"]["hybrid_one_call_per_query"] = len(queries) / (time.perf_counter() - started)
    out["peak_rss_mb"] = _peak_rss_mb()
    out["rss_before_build_mb"] = rss_before
    return out


def run_baseline(work: Path) -> dict:
    import chromadb
    from chromadb.config import Settings
    from rank_bm25 import BM25Okapi

    from declinecraft.retrieval.bm25 import bm25_analyzer

    chunks = pl.read_parquet(work / "chunks.parquet")
    queries = json.loads((work / "queries.json").read_text())
    docs = np.load(work / "docs.npy")
    qvecs = np.load(work / "queries.npy")
    ids = chunks["chunk_id"].to_list()
    analyzer = bm25_analyzer("en_stem")
    rss_before = _peak_rss_mb()

    started = time.perf_counter()
    bm25 = BM25Okapi([analyzer.analyze(t) for t in chunks["text"].to_list()], k1=1.5, b=0.75)
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    collection = client.create_collection(
        "bench",
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine", "ef_construction": 200, "ef_search": 200, "max_neighbors": 32}},
    )
    step = client.get_max_batch_size()
    for start in range(0, len(ids), step):
        collection.add(ids=ids[start : start + step], embeddings=docs[start : start + step])
    build_seconds = time.perf_counter() - started

    def bm25_top(query: str, k: int) -> list[str]:
        scores = bm25.get_scores(analyzer.analyze(query))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [ids[i] for i in top]

    def dense_top(vector: np.ndarray, k: int) -> list[str]:
        return collection.query(query_embeddings=[vector], n_results=k, include=[])["ids"][0]

    out: dict = {"build_seconds": build_seconds, "qps": {}, "top5": {}}
    for query, vector in zip(queries[:5], qvecs[:5], strict=True):  # warm-up
        _rrf(bm25_top(query, DEPTH), dense_top(vector, DEPTH), K)
    # One pass of the hybrid pipeline, timing each component: BM25 alone is the first part of it
    # (its top 5 is the head of its top 50), so rank_bm25 (~0.1 s a query here) runs once.
    t_bm25 = t_hybrid = 0.0
    bm25_top5, hybrid_top5 = [], []
    for query, vector in zip(queries, qvecs, strict=True):
        t0 = time.perf_counter()
        lexical = bm25_top(query, DEPTH)
        t1 = time.perf_counter()
        fused = _rrf(lexical, dense_top(vector, DEPTH), K)
        t2 = time.perf_counter()
        t_bm25 += t1 - t0
        t_hybrid += t2 - t0
        bm25_top5.append(lexical[:K])
        hybrid_top5.append(fused)
    out["qps"]["bm25"] = len(queries) / t_bm25
    out["qps"]["hybrid"] = len(queries) / t_hybrid
    out["top5"]["bm25"], out["top5"]["hybrid"] = bm25_top5, hybrid_top5
    started = time.perf_counter()
    out["top5"]["dense"] = [dense_top(v, K) for v in qvecs]
    out["qps"]["dense"] = len(queries) / (time.perf_counter() - started)
    out["peak_rss_mb"] = _peak_rss_mb()
    out["rss_before_build_mb"] = rss_before
    # Not timed: BM25Okapi's formula at k1=1.5 (check: equals rank_bm25) and at Tantivy's k1=1.2,
    # to split the k1 effect from the engine's (idf variant, length quantisation).
    tokens = [analyzer.analyze(t) for t in chunks["text"].to_list()]
    q_tokens = [analyzer.analyze(q) for q in queries]
    out["top5"]["okapi_k1_1_5"] = [[ids[i] for i in row] for row in okapi_top(tokens, q_tokens, 1.5, 0.75, K)]
    out["top5"]["bm25_k1_1_2"] = [[ids[i] for i in row] for row in okapi_top(tokens, q_tokens, 1.2, 0.75, K)]
    for k1 in (1.2, 1.5):
        rows = okapi_top(tokens, q_tokens, k1, 0.75, K, idf_kind="lucene")
        out["top5"][f"lucene_k1_{k1}".replace(".", "_")] = [[ids[i] for i in row] for row in rows]
    return out


def okapi_top(
    docs: list[list[str]],
    queries: list[list[str]],
    k1: float,
    b: float,
    k: int,
    *,
    idf_kind: str = "okapi",
    epsilon: float = 0.25,
) -> list[list[int]]:
    """Exact BM25 top-k, vectorised with a sparse matrix. ``idf_kind="okapi"``: rank_bm25.BM25Okapi
    (idf log((N-n+.5)/(n+.5)), negatives floored to epsilon x mean idf); ``"lucene"``: Tantivy's
    and Lucene's log(1 + (N-n+.5)/(n+.5)), with exact document lengths (Tantivy quantises them)."""
    from collections import Counter

    from scipy import sparse

    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for d, doc in enumerate(docs):
        for term, tf in Counter(doc).items():
            rows.append(d)
            cols.append(vocab.setdefault(term, len(vocab)))
            vals.append(tf)
    tf = sparse.csc_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)), dtype=np.float64)
    n = len(docs)
    doc_len = np.array([len(doc) for doc in docs], dtype=np.float64)
    df = np.diff(tf.indptr)
    if idf_kind == "okapi":
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = epsilon * idf.mean()
    else:
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * doc_len / doc_len.mean())
    out = []
    for query in queries:
        scores = np.zeros(n)
        for term, count in Counter(query).items():
            j = vocab.get(term)
            if j is None:
                continue
            lo, hi = tf.indptr[j], tf.indptr[j + 1]
            rows_j, f = tf.indices[lo:hi], tf.data[lo:hi]
            scores[rows_j] += count * idf[j] * f * (k1 + 1) / (f + norm[rows_j])
        top = np.argpartition(-scores, k - 1)[:k]
        out.append(top[np.argsort(-scores[top], kind="stable")].tolist())
    return out


# --- the comparison --------------------------------------------------------------------------


def overlap(a: list[list[str]], b: list[list[str]], k: int = K) -> float:
    """Mean share of the top-k sets the two rankings have in common."""
    return float(np.mean([len(set(x[:k]) & set(y[:k])) / k for x, y in zip(a, b, strict=True)]))


def hit_rate(results: list[list[str]], targets: list[str], k: int = K) -> float:
    return float(np.mean([t in r[:k] for r, t in zip(results, targets, strict=True)]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=11_612)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-parquet", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "retrieval.json")
    parser.add_argument("--child", choices=["ours", "baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a small run, for CI (1,500 chunks, 100 queries)")
    args = parser.parse_args()
    if args.quick:
        args.chunks, args.queries = min(args.chunks, 1_500), min(args.queries, 100)

    if args.child:
        result = run_ours(args.work) if args.child == "ours" else run_baseline(args.work)
        (args.work / f"{args.child}.json").write_text(json.dumps(result))
        return 0

    from declinecraft.retrieval.hashing import HashEmbedder

    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        if args.from_parquet:
            chunks = replicated_chunks(args.from_parquet, args.chunks, args.seed)
            corpus = f"replicated from {args.from_parquet}"
        else:
            chunks = synthetic_chunks(args.chunks, args.seed)
            corpus = "synthetic Zipf pseudo-words"
        queries, targets = self_queries(chunks, args.queries, args.seed)
        embedder = HashEmbedder(384)
        np.save(work / "docs.npy", embedder.embed_documents(chunks["text"].to_list()))
        np.save(work / "queries.npy", embedder.embed_queries(queries))
        chunks.write_parquet(work / "chunks.parquet")
        (work / "queries.json").write_text(json.dumps(queries))
        prep_seconds = time.perf_counter() - started
        print(f"corpus {chunks.height} chunks, {len(queries)} queries, embeddings once: {prep_seconds:.1f} s")

        results = {}
        for stack in ("ours", "baseline"):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, __file__, "--child", stack, "--work", str(work)],
                check=True,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
            results[stack] = json.loads((work / f"{stack}.json").read_text())
            print(f"{stack}: {time.perf_counter() - started:.1f} s, qps {results[stack]['qps']}")

    ours, base = results["ours"], results["baseline"]
    report = {
        "corpus": {
            "chunks": chunks.height,
            "queries": len(queries),
            "kind": corpus,
            "seed": args.seed,
            "mean_chunk_chars": round(float(chunks["text"].str.len_chars().mean()), 1),
        },
        "embeddings": "hash-384 computed once, same vectors for both stacks; query embedding not timed",
        "cpu_count": os.cpu_count(),
        "load_average_at_end": list(os.getloadavg()),
        "k": K,
        "fusion_depth": DEPTH,
        "rrf_k": RRF_K,
        "ours": {
            "bm25": "tantivy k1=1.2 b=0.75",
            "dense": "LanceDB flat (exact) search, one multi-vector query per 256 queries",
            "calls": "batched Retriever.search_many",
        },
        "baseline": {
            "bm25": "rank_bm25 BM25Okapi k1=1.5 b=0.75",
            "dense": "chromadb HNSW cosine ef_construction=200 ef_search=200 M=32",
            "calls": "one call per query",
        },
        "bm25_qps": ours["qps"]["bm25"],
        "dense_qps": ours["qps"]["dense"],
        "hybrid_qps": ours["qps"]["hybrid"],
        "hybrid_qps_one_call_per_query": ours["qps"]["hybrid_one_call_per_query"],
        "baseline_bm25_qps": base["qps"]["bm25"],
        "baseline_dense_qps": base["qps"]["dense"],
        "baseline_hybrid_qps": base["qps"]["hybrid"],
        "bm25_ratio": ours["qps"]["bm25"] / base["qps"]["bm25"],
        "dense_ratio": ours["qps"]["dense"] / base["qps"]["dense"],
        "ratio": ours["qps"]["hybrid"] / base["qps"]["hybrid"],
        "ratio_one_call_per_query": ours["qps"]["hybrid_one_call_per_query"] / base["qps"]["hybrid"],
        "top5_overlap": {p: overlap(ours["top5"][p], base["top5"][p]) for p in ("bm25", "dense", "hybrid")},
        "bm25_top5_overlap_vs_k1_1_5": overlap(ours["top5"]["bm25"], base["top5"]["bm25"]),
        "bm25_top5_overlap_vs_rank_bm25_k1_1_2": overlap(ours["top5"]["bm25"], base["top5"]["bm25_k1_1_2"]),
        "rank_bm25_top5_overlap_k1_1_2_vs_1_5": overlap(base["top5"]["bm25_k1_1_2"], base["top5"]["bm25"]),
        "okapi_replica_top5_overlap_with_rank_bm25": overlap(base["top5"]["okapi_k1_1_5"], base["top5"]["bm25"]),
        # Tantivy's own formula at k1=1.5 against ours: the pure effect of the k1 deviation.
        "bm25_top5_overlap_vs_tantivy_formula_k1_1_5": overlap(ours["top5"]["bm25"], base["top5"]["lucene_k1_1_5"]),
        "bm25_top5_overlap_vs_tantivy_formula_k1_1_2": overlap(ours["top5"]["bm25"], base["top5"]["lucene_k1_1_2"]),
        "hit_at_5": {
            "ours": {p: hit_rate(ours["top5"][p], targets) for p in ("bm25", "dense", "hybrid")},
            "baseline": {p: hit_rate(base["top5"][p], targets) for p in ("bm25", "dense", "hybrid")},
            "rank_bm25_k1_1_2": hit_rate(base["top5"]["bm25_k1_1_2"], targets),
        },
        "build_seconds": ours["build_seconds"],
        "baseline_build_seconds": base["build_seconds"],
        "peak_rss_mb": ours["peak_rss_mb"],
        "baseline_peak_rss_mb": base["peak_rss_mb"],
        "rss_after_imports_and_data_mb": {"ours": ours["rss_before_build_mb"], "baseline": base["rss_before_build_mb"]},
        "command": "python benchmarks/bench_retrieval.py " + " ".join(sys.argv[1:]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if not isinstance(v, dict)}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
