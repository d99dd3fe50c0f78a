"""Tests for declinecraft.retrieval.bm25: the analyzer, its params, and the two-pass search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from declinecraft.retrieval import bm25, pipelines
from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.retrieval.retrieve import Retriever
from tests.support import retrieval_data


class TestBm25Analyzer:
    def test_en_stem(self) -> None:
        """en_stem lowercases, folds accents, stems and splits on punctuation."""
        assert bm25.bm25_analyzer("en_stem").analyze('Horses\' "Armor": naïve-ghasts?') == [
            "hors",
            "armor",
            "naiv",
            "ghast",
        ]

    def test_default(self) -> None:
        """default only lowercases."""
        assert bm25.bm25_analyzer("default").analyze("Horses Armor") == ["horses", "armor"]

    def test_unknown(self) -> None:
        """An unknown analyzer name is a ValueError."""
        with pytest.raises(ValueError, match="unknown BM25 analyzer"):
            bm25.bm25_analyzer("klingon")


class TestCheckBm25Params:
    def test_tantivy_constants_pass(self) -> None:
        """k1=1.2, b=0.75 are accepted."""
        bm25.check_bm25_params(retrieval_data.make_params())

    @pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (1.2, 0.4)])
    def test_other_constants_rejected(self, k1: float, b: float) -> None:
        """Any other BM25 constant is refused with the reason."""
        with pytest.raises(ValueError, match="Tantivy's BM25 is fixed"):
            bm25.check_bm25_params(retrieval_data.make_params(bm25_k1=k1, bm25_b=b))


def zipf_chunks(n: int = 300, seed: int = 5) -> pl.DataFrame:
    """C_pre chunks of seeded Zipf-distributed words: a few in most chunks, most in few."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:03d}x" for i in range(400)])
    probs = 1.0 / np.arange(1, len(words) + 1)
    rows = []
    for i in range(n):
        body = " ".join(rng.choice(words, size=int(rng.integers(15, 40)), p=probs / probs.sum()))
        rows.append((f"Z{i:03d}#0", f"Page {i}", body, "pre"))
    return retrieval_data.make_chunks(rows + [("Post#0", "Post", "w001x w002x", "post")])


@pytest.fixture(scope="module")
def zipf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of :func:`zipf_chunks`, frequent terms those in a fifth of the chunks."""
    return retrieval_data.build_index(tmp_path_factory.mktemp("zipf") / "ix", zipf_chunks(), bm25_frequent_share=0.2)


class TestBm25TwoPass:
    """Above index.bm25_exact_max_rows: the rarer terms' best candidates, frequent terms' stored scores added."""

    QUERIES = ["w000x w001x w002x w007x w019x w050x", "w003x w003x w000x w031x w120x", "w005x w010x w040x w000x w002x"]

    def open(self, folder: Path, **params: object) -> Retriever:
        from dataclasses import replace

        base = Retriever.open(folder, embedder=HashEmbedder(retrieval_data.DIM))
        return Retriever.open(folder, embedder=HashEmbedder(retrieval_data.DIM), params=replace(base.params, **params))

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
            matched = retrieval_data.ids(pipelines.bm25(full, [rare], 10_000)[0])
            assert rare and len(matched) >= 20 and len(truth) > len(matched), query
            want = sorted(matched, key=lambda c: (-truth[c], order[c]))[:20]
            two = self.open(zipf, bm25_exact_max_rows=0, bm25_candidates=len(matched))
            got = pipelines.bm25(two, [query], 20)[0]
            assert retrieval_data.ids(got) == want, query
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
            overlap.append(len(set(best) & set(retrieval_data.ids(got)[:5])) / 5)
        assert taken == [True] * len(self.QUERIES) and np.mean(overlap) >= 0.6

    def test_falls_back_to_the_full_search(self, zipf: Path) -> None:
        """Only frequent terms, a depth above the pool, or rarer terms matching fewer chunks than the
        pool: the search covers every term, as below the threshold."""
        full, two = self.open(zipf), self.open(zipf, bm25_exact_max_rows=0, bm25_candidates=30)
        frequent = " ".join(full.manifest["bm25"]["frequent"]["terms"][:2])
        for query, k in ((frequent, 10), (self.QUERIES[0], 40), ("w000x w399x", 10)):
            assert retrieval_data.ids(pipelines.bm25(two, [query], k)[0]) == retrieval_data.ids(
                pipelines.bm25(full, [query], k)[0]
            ), query

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
        empty = bm25.FrequentScores.load(folder, None, retrieval_data.N_PRE)
        assert dict(empty.rows) == {}
        assert bm25.search_two_pass(None, None, {"horse": 1}, empty, 5, 10) is None  # type: ignore[arg-type]

    def test_stored_scores_must_match_the_manifest(self, zipf: Path, tmp_path: Path) -> None:
        """A scores file that does not hold the listed terms is refused, naming the file."""
        entry = Retriever.open(zipf, embedder=HashEmbedder(retrieval_data.DIM)).manifest["bm25"]["frequent"]
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
        from tests.support import retrieval_data

        with pytest.raises(ValueError, match=message):
            bm25.check_bm25_params(retrieval_data.make_params(**{field: value}))
