"""Tests for declinecraft.runtime.cache_file: a damaged store and a read-only one are told apart
before SQLite opens the file, each with its own remedy."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from declinecraft.runtime import cache_file
from declinecraft.runtime.cache_file import CacheError


def store(path: Path) -> Path:
    """A small, complete SQLite file (no WAL pending)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(str(i), "x" * 200) for i in range(100)])
    return path


class TestCheckFile:
    def test_complete_and_absent_pass(self, tmp_path: Path) -> None:
        """A whole SQLite file passes, and so does one not made yet."""
        cache_file.check_file(store(tmp_path / "calls.sqlite"))
        cache_file.check_file(tmp_path / "none.sqlite")

    @pytest.mark.parametrize(
        ("content", "said"),
        [(b"", "empty"), (b"SQLite", "shorter than an SQLite header"), (b"x" * 200, "not an SQLite database")],
    )
    def test_damage_is_named(self, tmp_path: Path, content: bytes, said: str) -> None:
        """An empty, short or foreign file is damage, with the salvage command in the message."""
        path = tmp_path / "calls.sqlite"
        path.write_bytes(content)
        with pytest.raises(CacheError, match=said) as info:
            cache_file.check_file(path)
        assert f"python -m declinecraft.llm.cache salvage {path}" in str(info.value)

    def test_truncated(self, tmp_path: Path) -> None:
        """A file shorter than the page count its header records is truncated."""
        path = store(tmp_path / "calls.sqlite")
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        with pytest.raises(CacheError, match="truncated"):
            cache_file.check_file(path)

    def test_pending_wal_is_not_damage(self, tmp_path: Path) -> None:
        """An empty file with a write-ahead log beside it is not reported as damaged."""
        path = tmp_path / "calls.sqlite"
        path.write_bytes(b"")
        path.with_name(path.name + "-wal").write_bytes(b"frames")
        cache_file.check_file(path)


#: Root may write read-only files, so a refusal cannot be shown there.
AS_ROOT = pytest.mark.skipif(os.geteuid() == 0, reason="root may write read-only files")


class TestCheckWritable:
    @AS_ROOT
    def test_read_only_file(self, tmp_path: Path) -> None:
        """A read-only file is refused as a permission problem, not damage."""
        path = store(tmp_path / "calls.sqlite")
        path.chmod(0o444)
        with pytest.raises(CacheError, match="permission denied: the file is read-only") as info:
            cache_file.check_writable(path)
        assert "not damaged" in str(info.value)

    @AS_ROOT
    def test_read_only_folder(self, tmp_path: Path) -> None:
        """A folder that cannot be written is named (SQLite writes its -wal and -shm there)."""
        folder = tmp_path / "llm"
        folder.mkdir()
        folder.chmod(0o555)
        try:
            with pytest.raises(CacheError, match="its folder"):
                cache_file.check_writable(folder / "calls.sqlite")
        finally:
            folder.chmod(0o755)

    def test_writable_passes(self, tmp_path: Path) -> None:
        """A file and folder this user may write pass."""
        cache_file.check_writable(store(tmp_path / "calls.sqlite"))


class TestErrors:
    def test_damaged_and_refused_differ(self, tmp_path: Path) -> None:
        """Damage points to salvage; refusal points to chmod and never to salvage."""
        path = tmp_path / "calls.sqlite"
        assert "salvage" in str(cache_file.damaged(path, "cut")) and "cut" in str(cache_file.damaged(path, "cut"))
        refused = str(cache_file.refused(path, "the file"))
        assert "chmod u+w" in refused and "salvage" not in refused
