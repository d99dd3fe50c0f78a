"""Setup's smoke check of the chat models: every llama.cpp model a run names loads and answers.

``python -m declinecraft.llm.smoke params/default.yaml`` (the end of ``make setup``) loads each
GGUF chat model of the run in a process of its own and asks it one short question at temperature
0. A model whose process dies (a native crash such as llama.cpp's AMX backend on some Xeons, an
illegal instruction, the OOM killer) or that answers nothing stops setup with one message naming
the model, the signal, llama.cpp's system-info line (the CPU features it was built for) and what
to do, instead of failing half an hour later inside a stage.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from declinecraft.core import config
from declinecraft.core.environment import llama_system_info
from declinecraft.core.registry import ModelSpec, load_models
from declinecraft.runtime.process_exit import report, run_child

#: The one question each model answers.
PROMPT = "Answer in one word: what colour is grass?"
#: Seconds one model may take to load and answer.
TIMEOUT_S = 600
#: What a user does when a model fails the check.
ADVICE = (
    "Rebuild llama.cpp for this machine (`rm -rf .venv .make/wheels && make setup`); if it fails "
    "again, report the CPU (`lscpu`) and .venv/llama-build.json with this message."
)


def local_models(params_file: str | Path) -> list[ModelSpec]:
    """The llama.cpp models that the run of ``params_file`` names, sorted by id."""
    cfg = config.load(params_file)
    known = load_models(cfg.resolve(cfg.models_file))
    ids = sorted(m for m in config.referenced_models(cfg) if m)
    return [known[m] for m in ids if m in known and known[m].backend == "llamacpp"]


def answer_once(spec: ModelSpec, cache_dir: Path) -> dict[str, object]:
    """Load ``spec`` in this process and answer :data:`PROMPT` at temperature 0."""
    import llama_cpp

    from declinecraft.llm.serve import gguf_path

    start = time.monotonic()
    model = llama_cpp.Llama(
        model_path=str(gguf_path(spec, cache_dir)),
        n_ctx=512,
        n_batch=64,
        n_threads=min(2, os.cpu_count() or 1),
        seed=0,
        verbose=False,
    )
    reply = model.create_chat_completion(messages=[{"role": "user", "content": PROMPT}], temperature=0.0, max_tokens=16)
    # Not streamed, so a dict; the binding annotates the return as dict or stream.
    text = (reply["choices"][0]["message"].get("content") or "").strip()  # type: ignore[index]
    return {"model": spec.id, "answer": text, "seconds": round(time.monotonic() - start, 1)}


def child_command(params_file: str | Path, model_id: str) -> list[str]:
    """The command that runs :func:`answer_once` for one model in a process of its own."""
    return [sys.executable, "-m", "declinecraft.llm.smoke", "--one", str(params_file), model_id]


def check(params_file: str | Path, *, timeout_s: float = TIMEOUT_S) -> list[str]:
    """Run :func:`answer_once` for each model in a child process; one failure message per failed model."""
    failures = []
    for spec in local_models(params_file):
        child = run_child(child_command(params_file, spec.id), timeout_s)
        result = child.result()
        if child.returncode != 0:
            failures.append(failure(spec, child.ended(timeout_s), child.stderr_tail()))
        elif not result or not result.get("answer"):
            failures.append(failure(spec, "answered nothing (an empty reply at temperature 0)", child.stderr_tail()))
        else:
            print(f"   {spec.id}: {str(result['answer'])[:40]!r} in {result['seconds']} s", flush=True)
    return failures


def failure(spec: ModelSpec, what: str, tail: str) -> str:
    """One message: the model, what happened, llama.cpp's system info, the child's last words, advice."""
    return (
        f"setup's smoke check failed: model {spec.id!r} {what} while loading and answering one prompt.\n"
        f"  llama.cpp system info: {llama_system_info()}\n"
        + (f"  its last output:\n{tail}\n" if tail else "")
        + f"  What to do: {ADVICE}"
    )


def main(argv: list[str]) -> int:
    """``PARAMS_FILE`` checks every model; ``--one PARAMS_FILE MODEL_ID`` is one child."""
    if argv[:1] == ["--one"] and len(argv) == 3:
        cfg = config.load(argv[1])
        spec = load_models(cfg.resolve(cfg.models_file))[argv[2]]
        print(json.dumps(answer_once(spec, cfg.cache_dir)), flush=True)
        return 0
    if len(argv) != 1:
        print("usage: python -m declinecraft.llm.smoke PARAMS_FILE", file=sys.stderr)
        return 2
    return report(check(argv[0]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
