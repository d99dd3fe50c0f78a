"""Tests for declinecraft.retrieval.pipelines: the six pipelines, reranking and rewriting."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from declinecraft.retrieval import bm25, fusion, pipelines
from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.retrieval.retrieve import Retriever
from tests.support import retrieval_data

NASTY = [
    'What: "armor" (horse)?',
    "horse AND OR NOT armor",
    "horse^2 armor~1 -saddle +copper",
    "title:Horse [1 TO 5] {x}",
    'unbalanced "quote and (paren',
    "back\\slash * wild? card:",
    "a-b c/d 3:4 100% @#$ horse!",
]


class TestBm25:
    def test_rare_word_top1(self, retriever: Retriever) -> None:
        """The only chunk containing a rare word is BM25's top hit."""
        assert pipelines.bm25(retriever, ["Where does the quokkaberry grow?"], 3)[0][0].chunk_id == "Quokkaberry#0"

    def test_matches_bm25_formula(self, retriever: Retriever) -> None:
        """Scores equal BM25 with k1=1.2, b=0.75 and idf ln(1 + (N-n+0.5)/(n+0.5))."""
        analyzer = bm25.bm25_analyzer("en_stem")
        docs = {c[0]: analyzer.analyze(f"[Page: {c[1]}]\n{c[2]}") for c in retrieval_data.CHUNKS if c[3] == "pre"}
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
        assert all(h.chunk_id in retrieval_data.PRE_IDS for h in hits)

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
        assert not set(retrieval_data.ids(hits)) & set(retrieval_data.POST_IDS)

    def test_k_larger_than_corpus(self, retriever: Retriever) -> None:
        """k above the corpus size returns every matching chunk once."""
        hits = pipelines.bm25(retriever, ["a horse"], 1000)[0]
        assert len(hits) == len(set(retrieval_data.ids(hits))) <= retrieval_data.N_PRE

    def test_ranks(self, retriever: Retriever) -> None:
        """Each hit carries its BM25 rank."""
        assert [h.ranks for h in pipelines.bm25(retriever, ["copper"], 2)[0]] == [{"bm25": 1}, {"bm25": 2}]

    @pytest.mark.parametrize("k", [0, -1, 2.5, True])
    def test_bad_k(self, retriever: Retriever, k: object) -> None:
        """k must be a positive integer."""
        with pytest.raises(ValueError, match="k must be a positive integer"):
            pipelines.bm25(retriever, ["horse"], k)  # type: ignore[arg-type]


class TestDense:
    def test_exact_cosine(self, retriever: Retriever) -> None:
        """Scores are the exact cosine similarity, best first, over every C_pre chunk."""
        embedder = HashEmbedder(retrieval_data.DIM)
        texts = [f"[Page: {c[1]}]\n{c[2]}" for c in retrieval_data.CHUNKS if c[3] == "pre"]
        expected = embedder.embed_documents(texts) @ embedder.embed_queries(["copper ingot furnace"])[0]
        hits = pipelines.dense(retriever, ["copper ingot furnace"], retrieval_data.N_PRE)[0]
        assert retrieval_data.ids(hits)[0] == retrieval_data.PRE_IDS[int(np.argmax(expected))]
        assert sorted(h.score for h in hits) == pytest.approx(sorted(expected), abs=1e-5)

    def test_post_corpus(self, retriever: Retriever) -> None:
        """corpus="post" searches C_post only (question generation)."""
        hits = pipelines.dense(retriever, ["copper horse armor"], 10, corpus="post")[0]
        assert retrieval_data.ids(hits)[0] == "Copper_Horse_Armor#0" and set(retrieval_data.ids(hits)) == set(
            retrieval_data.POST_IDS
        )

    def test_k_larger_than_corpus(self, retriever: Retriever) -> None:
        """k above the corpus size returns the whole corpus."""
        assert len(pipelines.dense(retriever, ["horse"], 50)[0]) == retrieval_data.N_PRE

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
                "bm25": retrieval_data.ids(pipelines.bm25(retriever, [query], depth)[0]),
                "dense": retrieval_data.ids(pipelines.dense(retriever, [query], depth)[0]),
            },
            k=60,
            limit=3,
        )
        assert pipelines.hybrid(retriever, [query], 3)[0] == expected

    def test_prefix_property(self, retriever: Retriever) -> None:
        """The top 2 is the head of the top 4 (k does not reorder within the fusion depth)."""
        query = "copper horse armor"
        assert (
            retrieval_data.ids(pipelines.hybrid(retriever, [query], 2)[0])
            == retrieval_data.ids(pipelines.hybrid(retriever, [query], 4)[0])[:2]
        )

    def test_deduplicated(self, retriever: Retriever) -> None:
        """A chunk found by both retrievers appears once."""
        hits = pipelines.hybrid(retriever, ["copper"], 10)[0]
        assert len(retrieval_data.ids(hits)) == len(set(retrieval_data.ids(hits)))

    def test_punctuation_only(self, retriever: Retriever) -> None:
        """Without BM25 tokens, hybrid is the dense ranking."""
        hits = pipelines.hybrid(retriever, ["?!"], 3)[0]
        assert retrieval_data.ids(hits) == retrieval_data.ids(pipelines.dense(retriever, ["?!"], 3)[0]) and all(
            "bm25" not in h.ranks for h in hits
        )

    def test_k_larger_than_corpus(self, retriever: Retriever) -> None:
        """k above the corpus size returns every C_pre chunk once."""
        assert sorted(retrieval_data.ids(pipelines.hybrid(retriever, ["horse"], 100)[0])) == sorted(
            retrieval_data.PRE_IDS
        )


class TestHybridRerank:
    def test_reorders_by_reranker(self, retriever: Retriever) -> None:
        """The cross-encoder's order wins; every hit keeps its hybrid and rerank ranks."""
        hits = pipelines.hybrid_rerank(retriever, ["copper"], 2)[0]
        assert retrieval_data.ids(hits)[0] in ("Copper_Ingot#0", "Oxidation#0")
        assert [h.ranks["rerank"] for h in hits] == [1, 2] and all("hybrid" in h.ranks for h in hits)
        assert hits[0].score >= hits[1].score

    def test_pool(self, retriever: Retriever) -> None:
        """The reranker sees max(k, rerank_pool) candidates per query."""
        reranker = retriever.reranker
        assert isinstance(reranker, retrieval_data.LengthReranker)
        pipelines.hybrid_rerank(retriever, ["horse", "copper"], 1)
        assert len(reranker.pairs) == 2 * retriever.params.rerank_pool
        reranker.pairs.clear()
        pipelines.hybrid_rerank(retriever, ["horse"], 5)
        assert len(reranker.pairs) == 5

    def test_verifier_r_plus(self, retriever: Retriever) -> None:
        """R+ (k=10) on a corpus of 8 returns all of C_pre, reranked."""
        assert sorted(retrieval_data.ids(retriever.search("horse", "hybrid+rerank", 10))) == sorted(
            retrieval_data.PRE_IDS
        )


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
        assert retrieval_data.ids(got[0]) == ["Quokkaberry#0"]

    def test_retriever_rewriter(self, folder: Path) -> None:
        """A rewriter given at open time is used by search."""
        opened = Retriever.open(
            folder, embedder=HashEmbedder(retrieval_data.DIM), rewrite=lambda qs: ["quokkaberry"] * len(qs)
        )
        assert retrieval_data.ids(opened.search("anything", "hybrid+rewrite", 1)) == ["Quokkaberry#0"]


class TestHybridRewriteRerank:
    def test_rerank_sees_rewritten_query(self, retriever: Retriever) -> None:
        """The cross-encoder scores the rewritten query against the candidates."""
        reranker = retriever.reranker
        assert isinstance(reranker, retrieval_data.LengthReranker)
        hits = pipelines.hybrid_rewrite_rerank(retriever, ["anything"], 1, rewrite=lambda qs: ["copper"])
        assert {q for q, _ in reranker.pairs} == {"copper"} and "rerank" in hits[0][0].ranks
