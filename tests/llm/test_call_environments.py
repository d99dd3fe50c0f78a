"""Tests for declinecraft.llm.call_environments: which environment stored each call."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from declinecraft.core import environment
from declinecraft.llm import call_environments


@pytest.fixture()
def db() -> Iterator[sqlite3.Connection]:
    """A store with two calls, ``k1`` answered and ``k2`` failed, and the environment tables."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, status TEXT)")
    conn.executemany("INSERT INTO calls VALUES (?, ?)", [("k1", "ok"), ("k2", "failed"), ("k3", "ok")])
    call_environments.create(conn)
    call_environments.create(conn)  # twice is harmless (stores made before the tables)
    yield conn
    conn.close()


def as_environment(monkeypatch: pytest.MonkeyPatch, env_id: str) -> None:
    """Make this process's environment ``env_id``, its record naming it."""
    monkeypatch.setattr(environment, "current", lambda: (env_id, json.dumps({"cpu_model": env_id})))


class TestPut:
    def test_never_over_an_answer(self, db: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
        """A second environment takes over a failed call's row, never an answered one's."""
        as_environment(monkeypatch, "A")
        call_environments.put(db, ["k1", "k2"])
        as_environment(monkeypatch, "B")
        call_environments.put(db, ["k1", "k2"])
        assert dict(db.execute("SELECT key, environment FROM call_environment")) == {"k1": "A", "k2": "B"}


class TestCounts:
    def test_per_environment(self, db: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
        """Stored calls counted once each by environment; a stored call without one counts under ""
        and a key not stored is not counted."""
        as_environment(monkeypatch, "A")
        call_environments.put(db, ["k1", "k2"])
        assert call_environments.counts(db, ["k1", "k2", "k1", "k3", "absent"]) == {"A": 2, "": 1}


class TestRecord:
    def test_stored_once(self, db: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
        """The environment's record is stored under its id; an unknown id gives None."""
        as_environment(monkeypatch, "A")
        call_environments.put(db, ["k1"])
        call_environments.put(db, ["k3"])
        assert call_environments.record(db, "A") == {"cpu_model": "A"}
        assert db.execute("SELECT COUNT(*) FROM environments").fetchone()[0] == 1
        assert call_environments.record(db, "B") is None
