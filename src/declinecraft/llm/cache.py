"""Content-addressed store of every LLM call: one SQLite file in ``cfg.cache_dir / "llm"``.

A call's key is the sha256 of what determines its answer: the endpoint identity (backend, served
model, revision; never the port of a local server), the exact request body (messages, sampling,
thinking switch, response format) and the prompt-template version. One row per key.

Durability and concurrency: WAL journal, ``synchronous=NORMAL`` and one commit per stored batch,
so a process killed with SIGKILL loses only the calls still in flight (a committed WAL frame
survives a process crash; only a power cut can lose the last commits, never corrupt the file).
Several processes may write at once: writers queue on ``busy_timeout`` and ``BEGIN IMMEDIATE``.

Status policy: a row is ``ok`` or ``failed``. An ``ok`` row is final and never overwritten. A
``failed`` row (the error kept) is returned as a failure unless a caller retries failures
(``retry_failures=True`` in :mod:`declinecraft.llm.client`), and then replaced. The stages' model
layer (:mod:`declinecraft.llm.pool`) retries those of earlier runs unless ``llm.retry_failures``
is false.
The cache lives outside every run's outputs: ``make clean`` never deletes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from declinecraft.llm import call_environments, spend
from declinecraft.runtime import cache_recovery
from declinecraft.runtime.cache_file import CacheError, check_file, check_writable, damaged, refused

SCHEMA_VERSION = 1
FILE_NAME = "calls.sqlite"
Status = Literal["ok", "failed"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One stored call, as the server answered it (thinking is split later, from these fields)."""

    key: str
    status: Status
    endpoint: str
    """``backend:served_name``: which service answered (for exploring the store by model)."""
    revision: str
    prompt_version: str
    request: str
    """Canonical JSON of the request body that was keyed and sent (no URL, no credentials)."""
    text: str | None
    """The message ``content`` exactly as returned (may hold ``<think>`` blocks)."""
    reasoning: str | None
    """A separate reasoning field (``reasoning_content`` or ``reasoning``) when the server sent one."""
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    """Seconds of the answering attempt (for a failure: of the last attempt)."""
    error: str | None
    attempts: int
    """Attempts of the call that wrote this row (1 = first try succeeded)."""
    created_at: str
    """UTC ISO time the row was written."""


_COLUMNS = [f.name for f in fields(CallRecord)]
_SQL_TYPES = {
    "attempts": "INTEGER NOT NULL",
    "prompt_tokens": "INTEGER",
    "completion_tokens": "INTEGER",
    "latency_s": "REAL",
    "key": "TEXT PRIMARY KEY",
    "status": "TEXT NOT NULL",
}
_CREATE = "CREATE TABLE IF NOT EXISTS calls ({}) WITHOUT ROWID".format(
    ", ".join(f"{c} {_SQL_TYPES.get(c, 'TEXT')}" for c in _COLUMNS)
)
_UPSERT = (
    f"INSERT INTO calls ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
    f"ON CONFLICT(key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _COLUMNS[1:])} "
    "WHERE calls.status <> 'ok'"
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM calls"
_CHUNK = 500  # keys per IN (...) query


def _create(path: Path) -> None:
    """Make a new, empty store beside ``path`` and link it into place unless one appeared meanwhile.

    So a store file is never seen half-created (0 bytes) by another process: a 0-byte or truncated
    store is always damage (:func:`check_file`), never a fresh cache to fill silently.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
    try:
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute(_CREATE)
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        finally:
            db.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process created it first: use theirs
    finally:
        tmp.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            tmp.with_name(tmp.name + suffix).unlink(missing_ok=True)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal data always gives equal text (and key)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def call_key(endpoint: Mapping[str, Any], body: Mapping[str, Any], prompt_version: str) -> str:
    """Return the hex sha256 that addresses one call.

    Args:
        endpoint: identity of the model service (backend, served name, revision, weights...).
        body: the request body without ``model`` (messages, sampling, thinking switch...).
        prompt_version: version of the template the messages came from ('' when none).
    """
    return body_key(canonical_json(endpoint), canonical_json(body), prompt_version)


def body_key(endpoint_json: str, body_json: str, prompt_version: str) -> str:
    """:func:`call_key` of an endpoint and a body already in canonical JSON (each serialised once).

    The text hashed is the canonical JSON of ``{"v", "endpoint", "body", "prompt"}``, written by
    hand in its sorted key order, so the key is the same as :func:`call_key`'s, byte for byte.
    """
    prompt, version = canonical_json(prompt_version), canonical_json(SCHEMA_VERSION)
    blob = f'{{"body":{body_json},"endpoint":{endpoint_json},"prompt":{prompt},"v":{version}}}'
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Cache:
    """The SQLite store. Thread-safe within a process; safe with other processes writing at once."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 120.0) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except PermissionError:
            raise refused(self.path, f"a folder above {self.path.parent}") from None
        self._lock = threading.Lock()
        check_writable(self.path)
        if not self.path.exists():
            _create(self.path)
        check_file(self.path)
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute(_CREATE)
            call_environments.create(self._db)
            spend.create(self._db)
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            (version,) = self._db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and not any(
                word in str(exc) for word in ("malformed", "not a database", "corrupt")
            ):
                if "readonly" in str(exc) or "unable to open" in str(exc):
                    raise refused(self.path, f"the file or its folder ({exc})") from None
                raise CacheError(f"{self.path}: cannot open the LLM call cache: {exc}") from exc
            raise damaged(self.path, str(exc)) from None
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: cannot open the LLM call cache: {exc}") from exc
        if version != str(SCHEMA_VERSION):
            raise CacheError(f"{self.path}: schema version {version}, this code reads {SCHEMA_VERSION}")

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"

    def fetch(self, keys: Iterable[str]) -> dict[str, CallRecord]:
        """Return the stored records among ``keys`` (absent keys are simply missing)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CallRecord] = {}
        with self._lock, self._guard():
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                query = f"{_SELECT} WHERE key IN ({', '.join('?' * len(chunk))})"
                for row in self._db.execute(query, chunk):
                    found[row[0]] = CallRecord(*row)
        return found

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite's damage errors, met while reading or writing, into a :class:`CacheError`."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "malformed" not in str(exc):
                raise
            raise damaged(self.path, str(exc)) from None

    def get(self, key: str) -> CallRecord | None:
        """Return one record, or None."""
        return self.fetch([key]).get(key)

    def store(self, records: Sequence[CallRecord], spent: Sequence[spend.Spent] = ()) -> None:
        """Write records in one transaction. An ``ok`` row is never replaced; a ``failed`` one is.

        ``spent``: the run's spend rows of these calls (:mod:`~declinecraft.llm.spend`), written in the
        same transaction, so a paid call is never stored without its cost.
        """
        if not records and not spent:
            return
        rows = [tuple(getattr(r, c) for c in _COLUMNS) for r in records]  # astuple deep-copies
        with self._lock, self._guard():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                call_environments.put(self._db, [r.key for r in records])
                self._db.executemany(_UPSERT, rows)
                spend.put(self._db, spent)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def environment_counts(self, keys: Iterable[str]) -> dict[str, int]:
        """How many of the stored calls among ``keys`` each environment stored
        (:mod:`~declinecraft.llm.call_environments`)."""
        with self._lock, self._guard():
            return call_environments.counts(self._db, keys)

    def environment_record(self, env_id: str) -> dict[str, Any] | None:
        """The record (machine, packages, llama.cpp build) stored under an environment id, if any."""
        with self._lock, self._guard():
            return call_environments.record(self._db, env_id)

    def spend_totals(self, run: str) -> list[dict[str, Any]]:
        """A run's spend per model and batch or not (:func:`declinecraft.llm.spend.totals`)."""
        with self._lock, self._guard():
            return spend.totals(self._db, run)

    def count(self, status: Status | None = None, *, endpoint: str | None = None) -> int:
        """Return how many rows there are (optionally of one status and/or endpoint)."""
        where, args = _where(status, endpoint)
        with self._lock, self._guard():
            return int(self._db.execute(f"SELECT COUNT(*) FROM calls{where}", args).fetchone()[0])

    def records(self, status: Status | None = None, *, endpoint: str | None = None) -> list[CallRecord]:
        """Return every row (optionally of one status and/or endpoint), oldest first."""
        where, args = _where(status, endpoint)
        with self._lock, self._guard():
            rows = self._db.execute(f"{_SELECT}{where} ORDER BY created_at", args).fetchall()
        return [CallRecord(*row) for row in rows]

    def usage(self, endpoint: str, limit: int = 5000) -> list[tuple[int, int, float]]:
        """``(prompt_tokens, completion_tokens, latency_s)`` of an endpoint's newest answered calls
        that recorded all three (for measuring its throughput), at most ``limit`` of them."""
        query = (
            "SELECT prompt_tokens, completion_tokens, latency_s FROM calls WHERE endpoint = ? AND status = 'ok' "
            "AND prompt_tokens IS NOT NULL AND completion_tokens IS NOT NULL AND latency_s > 0 "
            "ORDER BY created_at DESC LIMIT ?"
        )
        with self._lock, self._guard():
            rows = self._db.execute(query, (endpoint, limit)).fetchall()
        return [(int(p), int(c), float(t)) for p, c, t in rows]

    def close(self) -> None:
        """Close the connection (the file stays complete: every batch was committed)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _where(status: Status | None, endpoint: str | None) -> tuple[str, list[str]]:
    clauses: list[str] = []
    args: list[str] = []
    if status is not None:
        clauses.append("status = ?")
        args.append(status)
    if endpoint is not None:
        clauses.append("endpoint = ?")
        args.append(endpoint)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def cache_path(cache_dir: str | Path) -> Path:
    """Return the store's file under the project's cache folder: ``<cache_dir>/llm/calls.sqlite``."""
    return Path(cache_dir) / "llm" / FILE_NAME


def open_cache(cache_dir: str | Path) -> Cache:
    """Open (creating if needed) the LLM call store of a project cache folder (``cfg.cache_dir``)."""
    return Cache(cache_path(cache_dir))


@dataclass(frozen=True, slots=True)
class Salvaged:
    """What :func:`salvage` got back from a damaged store."""

    recovered: int
    """Calls copied into the fresh store (one per key)."""
    lost: int
    """Calls seen whose overflow pages are cut, plus an estimate of those on the missing pages (the
    readable pages' calls per page times the missing pages)."""
    missing_pages: int
    """Pages the file's header (or its WAL) counts that are no longer there."""
    pages: int
    aside: Path
    """Where the damaged file now lies."""

    @property
    def total(self) -> int:
        """Calls the damaged file held (recovered + lost; an estimate when pages are missing)."""
        return self.recovered + self.lost

    @property
    def complete(self) -> bool:
        """Whether everything the file held came back."""
        return self.lost == 0 and self.missing_pages == 0


def _call_row(values: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The row of a ``calls`` record read from a page, or None for another table's record."""
    if len(values) != len(_COLUMNS) or values[1] not in ("ok", "failed") or not isinstance(values[0], str):
        return None
    row = dict(zip(_COLUMNS, values, strict=True))
    if not isinstance(row["attempts"], int):
        return None
    if isinstance(row["latency_s"], int):  # SQLite stores a whole REAL as an integer on disk
        row["latency_s"] = float(row["latency_s"])
    return tuple(row.values())


def salvage(path: str | Path) -> Salvaged:
    """Copy every call still readable from a damaged store into a fresh one at the same path.

    Reads every page on its own (:mod:`declinecraft.runtime.cache_recovery`, WAL included), so a cut or damaged
    page loses only the calls on it. The damaged file (and its -wal/-shm) is moved aside as
    ``<name>.damaged-<UTC time>`` first, so nothing is lost for a later, better recovery. Of two
    copies of one key (a stale one on a free page), an answered one wins, then the newer.

    Raises:
        CacheError: the file does not exist, or its folder cannot be written.
    """
    path = Path(path)
    if not path.is_file():
        raise CacheError(f"{path}: no such file; there is nothing to salvage")
    if not os.access(path, os.R_OK):
        raise refused(path, "the file (it cannot even be read)")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    try:
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists():
                os.replace(part, aside.with_name(aside.name + suffix))
    except PermissionError as exc:
        raise CacheError(
            f"{path}: cannot salvage: permission denied ({exc.strerror}) when moving it aside in {path.parent}; "
            "the file is untouched. Make the folder writable and run salvage again."
        ) from None
    found = cache_recovery.scan(aside, aside.with_name(aside.name + "-wal"))
    best: dict[str, tuple[Any, ...]] = {}
    for values in found.records:
        row = _call_row(values)
        if row is None:
            continue
        held = best.get(row[0])
        if held is None or (row[1], str(row[-1])) > (held[1], str(held[-1])):  # 'ok' > 'failed', then newer
            best[row[0]] = row
    read = found.pages - found.missing
    per_page = (len(best) + found.broken) / read if read else 0.0
    lost = found.broken + round(max(0, found.missing - found.broken_pages) * per_page)
    with Cache(path) as fresh:
        fresh.store([CallRecord(*row) for row in best.values()])
    return Salvaged(len(best), lost, found.missing, found.pages, aside)


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.llm.cache {check|salvage} FILE``: check or recover a call store."""
    if len(argv) != 2 or argv[0] not in {"check", "salvage"}:
        print("usage: python -m declinecraft.llm.cache {check|salvage} .cache/llm/calls.sqlite", file=sys.stderr)
        return 2
    path = Path(argv[1])
    if not path.is_file():
        done = "checked" if argv[0] == "check" else "salvaged"
        print(f"error: {path}: no such file; nothing was {done} and no file was made", file=sys.stderr)
        return 1
    if argv[0] == "salvage":
        try:
            got = salvage(path)
        except CacheError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(
            f"{path}: {got.recovered} calls recovered, {got.lost} lost, of {got.total} the file held "
            f"({got.missing_pages} of its {got.pages} pages missing); the damaged file is kept as {got.aside}"
        )
        if not got.complete:
            print(f"error: {path}: {got.lost} calls could not be recovered; they will be sent again", file=sys.stderr)
            return 1
        return 0
    try:
        with Cache(path) as store:
            with store._lock, store._guard():
                (verdict,) = store._db.execute("PRAGMA quick_check").fetchone()
            if verdict != "ok":
                raise damaged(path, f"quick_check: {verdict}")
            print(f"{path}: ok, {store.count('ok')} answered and {store.count('failed')} failed calls")
    except CacheError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
