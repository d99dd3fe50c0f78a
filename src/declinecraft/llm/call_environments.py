"""Which environment stored each call of the LLM call store: two tables beside ``calls``.

``environments`` holds each environment's record once (machine, packages, llama.cpp build:
:mod:`declinecraft.core.environment`); ``call_environment`` names the environment of each stored
call. Neither is part of a call's key, so a store moved to another machine still answers from
cache, and a reader can still tell which machine produced an answer. The functions take the
store's open SQLite connection; :class:`declinecraft.llm.cache.Cache` calls them inside its
transactions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from declinecraft.core import environment

TABLES = (
    "CREATE TABLE IF NOT EXISTS environments (id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS call_environment (key TEXT PRIMARY KEY, environment TEXT NOT NULL) WITHOUT ROWID",
)
# A call's environment follows its row: set with a new row or a replaced failure, never over an ok row.
_PUT = (
    "INSERT INTO call_environment (key, environment) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
    "environment = excluded.environment WHERE NOT EXISTS "
    "(SELECT 1 FROM calls WHERE calls.key = excluded.key AND calls.status = 'ok')"
)
_CHUNK = 500  # keys per IN (...) query


def create(db: sqlite3.Connection) -> None:
    """Create the two tables if the store lacks them (stores made before they existed)."""
    for table in TABLES:
        db.execute(table)


def put(db: sqlite3.Connection, keys: Iterable[str]) -> None:
    """Name this process's environment for ``keys``; call inside the transaction storing them,
    before the calls themselves are written."""
    env_id, record = environment.current()
    db.execute("INSERT OR IGNORE INTO environments VALUES (?, ?)", (env_id, record))
    db.executemany(_PUT, [(key, env_id) for key in keys])


def counts(db: sqlite3.Connection, keys: Iterable[str]) -> dict[str, int]:
    """How many of the stored calls among ``keys`` each environment id stored (unrecorded ones: "")."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        query = (
            "SELECT COALESCE(e.environment, ''), COUNT(*) FROM calls c LEFT JOIN call_environment e "
            f"ON e.key = c.key WHERE c.key IN ({', '.join('?' * len(chunk))}) GROUP BY 1"
        )
        for env_id, n in db.execute(query, chunk):
            found[env_id] = found.get(env_id, 0) + int(n)
    return found


def record(db: sqlite3.Connection, env_id: str) -> dict[str, Any] | None:
    """The record stored under an environment id, if any."""
    row = db.execute("SELECT record FROM environments WHERE id = ?", (env_id,)).fetchone()
    return dict(json.loads(row[0])) if row else None
