"""Tests for declinecraft.runtime.cache_recovery, the page reader that salvage uses: records straight from SQLite
pages and WAL frames."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from declinecraft.runtime import cache_recovery


def table(path: Path, rows: list[tuple[str, object]]) -> None:
    """A WITHOUT ROWID table of (key, value) rows, closed (so checkpointed)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v) WITHOUT ROWID")
        db.executemany("INSERT INTO t VALUES (?, ?)", rows)
    db.close()


class TestScan:
    def test_every_type(self, tmp_path: Path) -> None:
        """Integers of every width, floats, NULL, text and blobs decode as SQLite stored them."""
        rows = [("a", 0), ("b", 1), ("c", -300), ("d", 2**40), ("e", 2.5), ("f", None), ("g", "é" * 5000)]
        rows.append(("h", b"\x00\xff" * 3000))
        table(tmp_path / "t.sqlite", rows)
        assert sorted(cache_recovery.scan(tmp_path / "t.sqlite").records) == rows

    def test_garbage(self, tmp_path: Path) -> None:
        """A file that is not SQLite at all: nothing found, nothing raised."""
        (tmp_path / "g.sqlite").write_bytes(b"\x0a\xff" * 10000)
        found = cache_recovery.scan(tmp_path / "g.sqlite")
        assert found.records == [] and found.missing == 0

    def test_cut_overflow(self, tmp_path: Path) -> None:
        """A record whose overflow pages are cut off is counted broken, not returned in part."""
        table(tmp_path / "t.sqlite", [("a", "x" * 20000)])
        data = (tmp_path / "t.sqlite").read_bytes()
        (tmp_path / "t.sqlite").write_bytes(data[: len(data) - 4096])
        found = cache_recovery.scan(tmp_path / "t.sqlite")
        assert found.records == [] and found.broken == 1 and found.broken_pages == found.missing == 1


class TestWalPages:
    def test_stops_at_bad_checksum(self, tmp_path: Path) -> None:
        """A frame with a wrong checksum ends the log: only the commits before it count."""
        path = tmp_path / "w.sqlite"
        db = sqlite3.connect(path)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v) WITHOUT ROWID")
        db.commit()
        wal = path.with_name("w.sqlite-wal").read_bytes()
        db.execute("INSERT INTO t VALUES ('a', 1)")
        db.commit()
        longer = path.with_name("w.sqlite-wal").read_bytes()
        db.close()
        first, count, size = cache_recovery.wal_pages(wal)
        assert first and count >= 2 and size == 4096
        bad = bytearray(longer)
        bad[len(wal) + 30] ^= 0xFF  # a byte of the first new frame's page
        assert cache_recovery.wal_pages(bytes(bad))[0] == first
