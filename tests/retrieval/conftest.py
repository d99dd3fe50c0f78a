"""Fixtures of the retrieval tests: the synthetic index, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.retrieval.hashing import HashEmbedder
from declinecraft.retrieval.retrieve import Retriever
from tests.support import retrieval_data


@pytest.fixture(scope="session")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic index (built once)."""
    return retrieval_data.build_index(tmp_path_factory.mktemp("index") / "ix", fusion_depth=4, rerank_pool=3)


@pytest.fixture()
def retriever(folder: Path) -> Retriever:
    """The synthetic index opened with the hash embedder and the fake reranker."""
    return Retriever.open(
        folder,
        embedder=HashEmbedder(retrieval_data.DIM),
        reranker=retrieval_data.LengthReranker(),
        cache_dir=folder.parent,
    )
