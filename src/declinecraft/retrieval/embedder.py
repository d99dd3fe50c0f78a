"""What an embedding model is to the rest of the package: the :class:`Embedder` protocol.

The index, the retrievers, the embedding cache and the reranker's cache rely on this interface
only; the implementations (ONNX, sentence-transformers, llama.cpp, feature hashing) live in
:mod:`declinecraft.retrieval.embed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

#: Which side of retrieval a text is on (queries may get an instruction prefix).
Kind = Literal["document", "query"]


@runtime_checkable
class Embedder(Protocol):
    """What the index and the retrievers need from an embedding model."""

    name: str
    """Short model id (a key of :data:`~declinecraft.retrieval.embed.EMBEDDERS`)."""
    dim: int
    """Vector dimension."""

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return one L2-normalised row per chunk text, shape ``(len(texts), dim)``."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return one L2-normalised row per query (query instruction applied), same shape rules."""
        ...


def check_texts(texts: Sequence[str], what: str) -> list[str]:
    """Return ``texts`` as a list, or raise TypeError naming the item that is not a string."""
    if isinstance(texts, str):
        raise TypeError(f"{what}: expected a sequence of strings, got one string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"{what}[{i}]: expected str, got {type(text).__name__}")
    return out


def normalise(matrix: NDArray) -> NDArray[np.float32]:
    """Scale each row to unit L2 norm (cosine similarity becomes a dot product)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
