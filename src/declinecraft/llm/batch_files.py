"""A stage's uncached calls as batch files, for engines that run them elsewhere (``vllm run-batch``, Ray
Data's LLM processors, a provider's console), and their results folded back into the call cache.

``make batch-export NB=05 [PARAMS=...]`` runs the stage with ``DECLINECRAFT_BATCH_EXPORT`` set to a
folder (``outputs/<run>/batches/<stage>/``). Then the client sends nothing: every uncached call is
appended to ``<model>.jsonl`` in the OpenAI batch format (the one ``vllm run-batch -i`` reads; its
``custom_id`` is the call's cache key), and what its record needs beside the answer (its request,
template version, endpoint) to ``<model>.calls.jsonl``. The stage then stops with
:class:`BatchExported`, naming the files, before it writes anything.

``make batch-import FILES="out1.jsonl ..." [PARAMS=...]`` (:func:`import_results`) reads result files
in the OpenAI batch output format (``vllm run-batch -o``, an OpenAI output or error file) and stores
each line's answer under its call's key, ok or failed with the reason; a line naming no exported call
is an error naming the file and the line. The next ``make all`` then answers those calls from the
cache and sends only what the answers lead to (iterative rounds, judges): export, run and import
again until a run sends nothing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from declinecraft.core import paths
from declinecraft.llm import batch_lines
from declinecraft.llm.cache import Cache, CallRecord, canonical_json, open_cache
from declinecraft.llm.transport import LLMError

#: The folder the stage's uncached calls are written to instead of being sent (set by the Makefile).
EXPORT_ENV = "DECLINECRAFT_BATCH_EXPORT"

_lock = threading.Lock()
_written: dict[str, int] = {}
"""Calls written by this process, by file (what :class:`BatchExported` reports)."""


class BatchExported(LLMError):
    """A stage's uncached calls were written to batch files instead of being sent; the stage stops."""


def exporting() -> Path | None:
    """The folder calls are exported to in this process, or None in an ordinary run."""
    folder = os.environ.get(EXPORT_ENV)
    return Path(folder) if folder else None


def export(folder: Path, model_id: str, served_name: str, endpoint: str, revision: str, calls: Sequence[Any]) -> Path:
    """Append calls (``key``, ``body``, ``request.prompt_version``) to ``<folder>/<model_id>.jsonl``, once
    per key, and their records' fields to ``<model_id>.calls.jsonl``; return the batch file."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{model_id}.jsonl"
    sidecar = folder / f"{model_id}.calls.jsonl"
    with _lock:
        seen = {line["custom_id"] for line in _read(sidecar)} if sidecar.is_file() else set()
        fresh = [c for c in calls if c.key not in seen]
        with target.open("a", encoding="utf-8") as out, sidecar.open("a", encoding="utf-8") as side:
            for call in fresh:
                out.write(
                    json.dumps(batch_lines.openai_line(call.key, served_name, call.body), ensure_ascii=False) + "\n"
                )
                side.write(
                    json.dumps(
                        {
                            "custom_id": call.key,
                            "model": model_id,
                            "endpoint": endpoint,
                            "revision": revision,
                            "prompt_version": call.request.prompt_version,
                            "request": canonical_json(call.body),
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
        _written[str(target)] = _written.get(str(target), 0) + len(fresh)
    return target


def written() -> dict[str, int]:
    """Calls this process exported, by batch file (empty when none)."""
    with _lock:
        return dict(_written)


def stop_if_exported() -> None:
    """Raise :class:`BatchExported` when this process exported calls (the end of an exporting stage).

    Raises:
        BatchExported: naming each file and its count, and how to run and import them.
    """
    with _lock:  # reported once: a later close in the process has its own exports to report
        files = dict(_written)
        _written.clear()
    if not files:
        return
    listed = ", ".join(f"{path} ({n} calls)" for path, n in sorted(files.items()))
    raise BatchExported(
        f"the stage's uncached calls were written for a batch run, not sent: {listed}. Run each file "
        "(e.g. `vllm run-batch -i <file> -o <file>.out.jsonl --model <model>`), then "
        "`make batch-import FILES=...` and run the stage again"
    )


def _read(path: Path) -> list[dict[str, Any]]:
    return batch_lines.read_jsonl(path.read_bytes(), str(path))


def import_results(cache: Cache, results: Iterable[Path], exported: Iterable[Path]) -> dict[str, int]:
    """Store every result line of ``results`` under its call's key; return counts of ``ok`` and ``failed``.

    Args:
        cache: the call store.
        results: files in the OpenAI batch output format (``vllm run-batch -o``, an output or error file).
        exported: the ``*.calls.jsonl`` files :func:`export` wrote (what each call's record needs).

    Raises:
        LLMError: a result line names no exported call (file and line named), or a file is unreadable.
    """
    calls = {line["custom_id"]: line for path in exported for line in _read(path)}
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    records: list[CallRecord] = []
    for path in results:
        for number, line in enumerate(_read(path), 1):
            key, answer = batch_lines.openai_result(line, f"{path.name}")
            call = calls.get(key)
            if call is None:
                raise LLMError(
                    f"{path}: result {number} has custom_id {key!r}, which no exported call has "
                    "(import the results with the *.calls.jsonl written beside the batch file)"
                )
            records.append(
                batch_lines.record_of(
                    {**call, "key": key},
                    answer,
                    endpoint=call["endpoint"],
                    revision=call["revision"],
                    created_at=now,
                )
            )
    cache.store(records)
    return {
        "ok": sum(r.status == "ok" for r in records),
        "failed": sum(r.status != "ok" for r in records),
    }


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.llm.batch_files import EXPORT_DIR RESULT...``: fold result files into the
    project's call cache, with the ``*.calls.jsonl`` files found under ``EXPORT_DIR`` (``outputs/<run>/batches``)."""
    if len(argv) < 3 or argv[0] != "import":
        print("usage: python -m declinecraft.llm.batch_files import EXPORT_DIR RESULT.jsonl...", file=sys.stderr)
        return 2
    results = [Path(a) for a in argv[2:]]
    missing = [str(p) for p in results if not p.is_file()]
    if missing:
        print(f"error: no such result file: {', '.join(missing)}", file=sys.stderr)
        return 1
    exported = sorted(Path(argv[1]).rglob("*.calls.jsonl"))
    if not exported:
        print(f"error: {argv[1]}: no exported calls (*.calls.jsonl); run `make batch-export` first", file=sys.stderr)
        return 1
    cache_dir = paths.cache_dir(paths.find_root(Path.cwd()))
    try:
        with open_cache(cache_dir) as cache:
            counts = import_results(cache, results, exported)
    except LLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{counts['ok']} answered and {counts['failed']} failed calls stored in {cache_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))


def stand_in(key: str, prompt_version: str, endpoint: str, where: Path) -> CallRecord:
    """The record a stream gives a call written to a batch file instead of being sent (never stored)."""
    return CallRecord(
        key=key,
        status="failed",
        endpoint=endpoint,
        revision="",
        prompt_version=prompt_version,
        request="",
        text=None,
        reasoning=None,
        finish_reason=None,
        prompt_tokens=None,
        completion_tokens=None,
        latency_s=None,
        error=f"not sent: written to {where} for a batch run (make batch-export)",
        attempts=0,
        created_at="",
    )
