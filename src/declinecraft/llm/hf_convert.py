"""Convert a GGUF chat model to a Hugging Face folder that vLLM loads (dequantized, bf16).

Run as a script by the vLLM engine's own interpreter (``python hf_convert.py GGUF OUT``), which has
transformers, ``gguf`` and ``accelerate`` at the versions vLLM accepts; it imports nothing of the
project. vLLM's own GGUF route needs CUDA (its dequantization kernels are Triton), so on the CPU
build the weights are dequantized once here. The tokenizer, with the chat template inside the
GGUF, is written beside the weights.
"""

from __future__ import annotations

import sys
from pathlib import Path


def convert(gguf: Path, out: Path) -> None:
    """Write the model and tokenizer of ``gguf`` to the folder ``out`` (created)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    torch.manual_seed(0)
    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.bfloat16, quantization_config=GgufConfig(dequantize=True)
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python hf_convert.py MODEL.gguf OUT_DIR", file=sys.stderr)
        raise SystemExit(2)
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
