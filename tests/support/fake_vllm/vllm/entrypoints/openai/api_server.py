"""A stand-in for vLLM's OpenAI server module, for tests of the launch path without vLLM.

``python -m vllm.entrypoints.openai.api_server --port P --max-model-len N ...`` (with
tests/support/fake_vllm on PYTHONPATH) writes its argument list and environment to ``$FAKE_VLLM_RECORD``,
starts a helper process in a session of its own (as a process that left the server's group would
be: :func:`declinecraft.runtime.process_tree.stop` must still end it; its pid is recorded too), then
serves tests/support/fake_openai.py on port P, refusing ``max_tokens`` above N with vLLM's HTTP 400.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[6]))  # the repository root: tests.support
from tests.support import fake_openai  # noqa: E402


def main(argv: list[str]) -> None:
    """Record, start the escaped helper, serve."""
    helper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    record = {"argv": argv, "env": dict(os.environ), "helper": helper.pid, "pid": os.getpid()}
    Path(os.environ["FAKE_VLLM_RECORD"]).write_text(json.dumps(record))
    if "--max-model-len" in argv:
        fake_openai.MAX_MODEL_LEN = int(argv[argv.index("--max-model-len") + 1])
    asyncio.run(fake_openai.serve(int(argv[argv.index("--port") + 1]), 0.0))


if __name__ == "__main__":
    main(sys.argv[1:])
