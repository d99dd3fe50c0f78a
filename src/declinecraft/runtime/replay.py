"""Replay of a run from its bundle: the ledger of the cached answers a stage reads, and strict mode.

Two environment variables, both set by the Makefile's stage recipe and read here only:

``DECLINECRAFT_LEDGER``
    A file to which each stage process appends one line per cached answer it looks up (an LLM
    call, an embedding, a reranker score): ``kind<TAB>model<TAB>key``. ``make bundle`` copies exactly
    those answers out of the caches (:mod:`declinecraft.runtime.bundle`).
``DECLINECRAFT_REPLAY``
    The bundle a run is replayed from (set by ``make all BUNDLE=<file>``). Then every lookup that
    misses is an error (:class:`ReplayMiss`) naming the stage, the model and the text's first line:
    a replay never quietly calls a model.

``DECLINECRAFT_STAGE`` names the stage notebook running (for the messages).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

LEDGER_ENV = "DECLINECRAFT_LEDGER"
REPLAY_ENV = "DECLINECRAFT_REPLAY"
STAGE_ENV = "DECLINECRAFT_STAGE"

#: What a ledger line names: an LLM call, an embedding vector, a reranker score.
Kind = Literal["llm", "embedding", "rerank"]
KINDS: tuple[Kind, ...] = ("llm", "embedding", "rerank")

_lock = threading.Lock()


class ReplayMiss(RuntimeError):
    """A replayed run needed an answer its bundle lacks; the message names stage, model and text."""


def ledger_note(kind: Kind, model: str, keys: Iterable[str]) -> None:
    """Append the keys a stage looked up to the ledger file, when the stage keeps one."""
    target = os.environ.get(LEDGER_ENV)
    if not target:
        return
    lines = "".join(f"{kind}\t{model}\t{key}\n" for key in dict.fromkeys(keys))
    if not lines:
        return
    with _lock:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8") as out:
            out.write(lines)


def ledger_read(path: Path) -> dict[Kind, set[tuple[str, str]]]:
    """The ``(model, key)`` pairs of a ledger file, by kind.

    Raises:
        ValueError: a line that is not ``kind<TAB>model<TAB>key``, naming the file and line.
    """
    found: dict[Kind, set[tuple[str, str]]] = {kind: set() for kind in KINDS}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 3 or parts[0] not in KINDS or not parts[2]:
            raise ValueError(f"{path}:{number}: not a ledger line (kind<TAB>model<TAB>key): {line[:80]!r}")
        found[parts[0]].add((parts[1], parts[2]))
    return found


def replaying() -> str | None:
    """The bundle this process replays from, or None in an ordinary run."""
    return os.environ.get(REPLAY_ENV) or None


def stage_name() -> str:
    """The stage notebook this process runs (``?`` outside the Makefile)."""
    return os.environ.get(STAGE_ENV) or "?"


def first_line(text: str) -> str:
    """The first non-blank line of a text, cut to 120 characters."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= 120 else line[:117] + "..."


def replay_miss(kind: Kind, model: str, missing: int, text: str) -> ReplayMiss:
    """The error of a lookup the bundle cannot answer (raised by the caller before anything is sent)."""
    what = {"llm": "model call", "embedding": "embedding", "rerank": "reranker score"}[kind]
    return ReplayMiss(
        f"stage {stage_name()}: {missing} {what}(s) of model {model!r} are not in the bundle {replaying()}; "
        f"nothing was sent. The first begins: {first_line(text)!r}. Replay with the params the bundle "
        "was made from (its params.yaml), or make the bundle again from a run that made these calls."
    )
