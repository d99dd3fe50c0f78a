"""Tokens, hours, dollars and a GPU layout for planned calls.

Every number here is either read from a model's entry in ``params/models.yaml`` (declared) or
computed by a rule stated in this module (and in docs/larger-runs.md); nothing is measured by
sending a call:

- tokens: the model's own tokenizer where its files are on disk (``tokenizer.json`` beside its
  weights), else the entry's ``chars_per_token``, else :data:`CHARS_PER_TOKEN`;
- throughput: the entry's ``prefill_tokens_per_s`` / ``decode_tokens_per_s`` (the whole server or
  endpoint), else measured from the endpoint's answered calls in the cache (token counts and
  latency, :func:`measured`), else a rule: vLLM on the declared machine from active parameters per GPU
  (:data:`GPU_DECODE_B_TOKENS_S`, prefill :data:`PREFILL_RATIO` times faster), a hosted API from its
  concurrency (:data:`HOSTED_STREAM_TOKENS_S` per stream), llama.cpp on CPU from parameters;
- dollars: ``price_in`` / ``price_out`` per million tokens; with batch, ``price_batch_in`` /
  ``price_batch_out``, else ``batch_discount`` off the plain price
  (:func:`declinecraft.core.model_terms.prices`: half, unless the entry says otherwise).
  A self-hosted model costs its GPU-hours times ``--gpu-usd-per-hour`` (0 unless given).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from declinecraft.core import model_terms
from declinecraft.core.registry import ModelSpec

#: Characters per token where no tokenizer is on disk and the entry declares none (English prose).
CHARS_PER_TOKEN = 4.0
#: vLLM decode throughput rule: tokens per second per GPU times billions of active parameters at
#: full batch on an 80 GB H100-class GPU (8B: ~2,500 tokens/s per GPU; 70B: ~290). Declared, not
#: measured here: an entry's ``decode_tokens_per_s`` replaces it.
GPU_DECODE_B_TOKENS_S = 20_000.0
#: Prefill runs this many times faster than decode (tokens per second).
PREFILL_RATIO = 10.0
#: One hosted stream's output tokens per second; prefill is this times :data:`PREFILL_RATIO`.
HOSTED_STREAM_TOKENS_S = 60.0
#: llama.cpp on this project's 2 cores: a 1.5B model reads ~60 and writes ~15 tokens per second.
CPU_PREFILL_B_TOKENS_S = 90.0
CPU_DECODE_B_TOKENS_S = 22.5
#: Bytes per parameter by precision; the KV cache and activations need :data:`MEMORY_HEADROOM` more.
BYTES_PER_PARAM = {"INT4": 0.5, "FP8": 1.0, "BF16": 2.0, "FP16": 2.0}
MEMORY_HEADROOM = 1.25


@dataclass(frozen=True)
class Machine:
    """A declared GPU machine: ``8xH100-80GB`` = 8 GPUs of 80 GB named H100."""

    gpus: int
    name: str
    memory_gb: float

    @classmethod
    def parse(cls, text: str) -> Machine:
        """Read ``<n>x<name>-<memory>GB``.

        Raises:
            ValueError: another form, naming it.
        """
        match = re.fullmatch(r"(\d+)\s*[xX]\s*([A-Za-z0-9]+)-(\d+(?:\.\d+)?)GB", text.strip())
        if not match or int(match.group(1)) < 1:
            raise ValueError(f"--gpus {text!r}: expected <count>x<name>-<memory>GB, e.g. 8xH100-80GB")
        return cls(int(match.group(1)), match.group(2), float(match.group(3)))

    def __str__(self) -> str:
        return f"{self.gpus}x{self.name}-{self.memory_gb:g}GB"


def on_gpu(spec: ModelSpec) -> bool:
    """Whether an entry is served by vLLM on GPUs (not the CPU build's converted offline models)."""
    return spec.backend == "vllm" and not spec.extra.get("hf_folder_sha256")


def tokenizer_file(spec: ModelSpec, weights: Path | None) -> Path | None:
    """The ``tokenizer.json`` beside a model's weights, when they are on disk."""
    if weights is None or not weights.is_dir():
        return None
    found = weights / "tokenizer.json"
    return found if found.is_file() else None


def chars_per_token(spec: ModelSpec, weights: Path | None, sample: str) -> tuple[float, str]:
    """The ratio a model's prompts are counted with, and where it comes from (for the table)."""
    path = tokenizer_file(spec, weights)
    if path is not None and sample:
        try:
            from tokenizers import Tokenizer  # optional: only where a tokenizer is on disk

            n = len(Tokenizer.from_file(str(path)).encode(sample).ids)
            if n:
                return len(sample) / n, "tokenizer"
        except Exception:  # noqa: BLE001  (an unreadable tokenizer falls back to the ratio, said so)
            pass
    if spec.extra.get("chars_per_token"):
        return float(spec.extra["chars_per_token"]), f"declared {float(spec.extra['chars_per_token']):g} chars/token"
    return CHARS_PER_TOKEN, f"{CHARS_PER_TOKEN:g} chars/token"


def weights_gb(spec: ModelSpec) -> float | None:
    """GPU memory of a model's weights in GB (None when its size is not in the registry)."""
    if not spec.params_total_b:
        return None
    precision = (spec.precision or "BF16").upper()
    return float(spec.params_total_b) * BYTES_PER_PARAM.get(precision, 2.0)


def gpus_needed(spec: ModelSpec, machine: Machine) -> int:
    """GPUs per replica: the entry's ``tensor_parallel_size``, else the smallest power of two whose
    memory (at ``gpu_memory_utilization``, default 0.9) holds the weights with headroom."""
    if spec.extra.get("tensor_parallel_size"):
        return int(spec.extra["tensor_parallel_size"])
    size = weights_gb(spec)
    if size is None:
        return 1
    usable = machine.memory_gb * float(spec.extra.get("gpu_memory_utilization") or 0.9)
    n = 1
    while n * usable < size * MEMORY_HEADROOM and n < 64:
        n *= 2
    return n


@dataclass(frozen=True)
class Throughput:
    """Tokens per second a model's server (or endpoint) reads and writes, and where they come from."""

    prefill: float
    decode: float
    source: str


#: Answered calls in the cache an endpoint needs before its throughput counts as measured.
MIN_MEASURED = 20


def measured(spec: ModelSpec, usage: Sequence[tuple[int, int, float]]) -> Throughput | None:
    """Throughput from an endpoint's answered calls in the cache (``(prompt_tokens,
    completion_tokens, latency_s)`` each): per stream, the least-squares fit of latency =
    prompt/prefill + completion/decode (a blended rate where the fit is not positive), times the
    entry's concurrency. None below :data:`MIN_MEASURED` calls."""
    if len(usage) < MIN_MEASURED:
        return None
    data = np.asarray(usage, dtype=float)
    solution = np.linalg.lstsq(data[:, :2], data[:, 2], rcond=None)[0]
    streams = spec.concurrency()
    if solution[0] > 0 and solution[1] > 0:
        prefill, decode = 1 / float(solution[0]), 1 / float(solution[1])
    else:
        decode = float((data[:, 1].sum() + data[:, 0].sum() / PREFILL_RATIO) / data[:, 2].sum())
        prefill = decode * PREFILL_RATIO
    return Throughput(prefill * streams, decode * streams, f"measured: {len(usage)} calls x {streams} streams")


def throughput(spec: ModelSpec, machine: Machine, usage: Sequence[tuple[int, int, float]] = ()) -> Throughput:
    """The whole endpoint's throughput: declared in the entry, else measured from its calls in the
    cache (:func:`measured`), else this module's rules (vLLM on every GPU of ``machine``, replicas
    of ``tensor_parallel_size`` GPUs)."""
    if spec.extra.get("decode_tokens_per_s"):
        decode = float(spec.extra["decode_tokens_per_s"])
        prefill = float(spec.extra.get("prefill_tokens_per_s") or decode * PREFILL_RATIO)
        return Throughput(prefill, decode, "declared")
    if (found := measured(spec, usage)) is not None:
        return found
    active = float(spec.params_active_b or spec.params_total_b or 8.0)
    if on_gpu(spec):
        tp = gpus_needed(spec, machine)
        used = (machine.gpus // tp) * tp if tp <= machine.gpus else 0
        decode = GPU_DECODE_B_TOKENS_S / max(active, 1.0) * used
        return Throughput(decode * PREFILL_RATIO, decode, f"rule: {used} GPUs of {machine}")
    if spec.is_local:  # llama.cpp, or vLLM's CPU build
        return Throughput(CPU_PREFILL_B_TOKENS_S / active, CPU_DECODE_B_TOKENS_S / active, "rule: CPU")
    streams = spec.concurrency()
    decode = HOSTED_STREAM_TOKENS_S * streams
    return Throughput(decode * PREFILL_RATIO, decode, f"rule: {streams} streams")


def hours(prompt_tokens: float, output_tokens: float, rate: Throughput) -> float | None:
    """Wall hours to read and write the tokens at ``rate`` (None when the rate is 0: no GPU fits)."""
    if rate.decode <= 0 or rate.prefill <= 0:
        return None
    return (prompt_tokens / rate.prefill + output_tokens / rate.decode) / 3600


@dataclass(frozen=True)
class Dollars:
    """What a model's tokens cost at the plain and the batch price (None: no price declared)."""

    plain: float | None
    batch: float | None

    def at(self, spec: ModelSpec) -> float | None:
        """The run's price: batch where the entry says ``batch: true``."""
        return self.batch if spec.extra.get("batch") else self.plain


def dollars(spec: ModelSpec, prompt_tokens: float, output_tokens: float) -> Dollars:
    """Hosted price of the tokens; None for an entry without ``price_in``/``price_out``."""
    if spec.extra.get("price_in") is None or spec.extra.get("price_out") is None:
        return Dollars(None, None)
    prices = model_terms.prices(spec)
    return Dollars(
        prices.usd(round(prompt_tokens), round(output_tokens), batch=False),
        prices.usd(round(prompt_tokens), round(output_tokens), batch=True),
    )


def layout_row(spec: ModelSpec, machine: Machine, wall_hours: float | None) -> dict[str, object]:
    """One line of the GPU layout: GPUs per replica, replicas, whether it fits, hours, GPU-hours."""
    tp = gpus_needed(spec, machine)
    fits = tp <= machine.gpus
    size = weights_gb(spec)
    return {
        "model": spec.id,
        "weights_gb": None if size is None else round(size, 1),
        "tensor_parallel_size": tp,
        "replicas": machine.gpus // tp if fits else 0,
        "fits": fits,
        "hours": None if wall_hours is None else round(wall_hours, 2),
        "gpu_hours": None if wall_hours is None or not fits else round(wall_hours * machine.gpus, 1),
        "max_model_len": spec.extra.get("max_model_len"),
    }


def ceil_tokens(chars: float, ratio: float) -> int:
    """Tokens of ``chars`` characters at ``ratio`` characters per token, rounded up."""
    return int(math.ceil(chars / ratio)) if chars else 0
