"""Where the retrieval models (the embedder and the reranker) run, beside the model servers.

``llm.retrieval_device`` says it, one of:

``auto`` (default)
    In a stage that starts model servers (generate, verify, answer) the CPU: a vLLM server may be
    using any GPU the machine has. In the index stage, which starts none, the GPU when torch sees
    one (``cuda``), else the CPU.
``cpu``
    Always the CPU.
``cuda:N``
    GPU ``N`` (0-based among the GPUs this process sees, as ``CUDA_VISIBLE_DEVICES`` numbers them),
    in every stage. The resources gate then keeps that GPU out of what it lends the servers the run
    starts (:func:`declinecraft.llm.resources.for_servers`), so no server shares it.

Only the torch-backed models (sentence-transformers, transformers) and llama.cpp's GGUF embedder
use the setting; the ONNX models and the hash embedder always run on the CPU. On a machine without
a GPU every setting but ``cuda:N`` gives the CPU, so the default run is the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The settings, in words (for messages).
SETTINGS = "auto, cpu or cuda:N (N a GPU index >= 0)"


def gpu_of(setting: str) -> int | None:
    """The GPU index a ``cuda:N`` setting names, None for ``auto`` and ``cpu``.

    Raises:
        ValueError: any other setting (the message lists the allowed ones).
    """
    if setting in ("auto", "cpu"):
        return None
    index = setting.removeprefix("cuda:")
    if setting.startswith("cuda:") and index.isdigit() and index.isascii():
        return int(index)
    raise ValueError(f"retrieval_device must be {SETTINGS}, got {setting!r}")


@dataclass(frozen=True)
class RetrievalDevice:
    """A ``llm.retrieval_device`` setting and whether the stage starts model servers; resolved
    to a torch device only when a model loads, so a stage whose vectors are cached imports no torch."""

    setting: str = "auto"
    """``auto``, ``cpu`` or ``cuda:N`` (see the module)."""
    servers: bool = False
    """Whether the stage starts model servers (then ``auto`` is the CPU)."""

    def __post_init__(self) -> None:
        gpu_of(self.setting)  # refuse a bad setting when made, not at the first model load

    def torch(self) -> str:
        """The torch device: ``cpu``, ``cuda`` (``auto`` where no server runs and torch sees a GPU)
        or ``cuda:N``.

        Raises:
            ValueError: ``cuda:N`` where torch sees no GPU ``N``.
        """
        gpu = gpu_of(self.setting)
        if self.setting == "cpu" or (self.setting == "auto" and self.servers):
            return "cpu"
        try:
            import torch
        except ImportError:  # a llama.cpp-only install: no torch to see a GPU
            if gpu is None:
                return "cpu"
            raise ValueError(f"llm.retrieval_device is {self.setting!r} but torch is not installed") from None
        if gpu is None:
            return "cuda" if torch.cuda.is_available() else "cpu"
        seen = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if gpu >= seen:
            raise ValueError(f"llm.retrieval_device is {self.setting!r} but torch sees {seen} GPU(s)")
        return self.setting


#: ``auto`` outside a stage that starts servers: the loaders' default (scripts, the index stage),
#: a GPU when torch sees one, as before the setting existed.
AUTO = RetrievalDevice()
