"""Checks of the call store's file on disk, before SQLite opens it: damage (a truncated or empty
file) and permission (a read-only file or folder) are told apart, each with its own remedy."""

from __future__ import annotations

import os
from pathlib import Path


class CacheError(RuntimeError):
    """The store cannot be opened, is damaged or has an unknown schema; the message names the file
    and the recovery command."""


def damaged(path: Path, what: str) -> CacheError:
    """The error for a damaged store: never answered by a silent fresh cache, which would re-send
    every call the damaged file still holds."""
    return CacheError(
        f"{path}: the LLM call cache is damaged ({what}). Nothing was overwritten. Recover the calls "
        f"that can still be read with `python -m declinecraft.llm.cache salvage {path}` (the damaged "
        "file is kept beside it as *.damaged-<time>); calls it cannot read are sent again."
    )


def refused(path: Path, what: str) -> CacheError:
    """The error for a store this user may not write: not damage, and salvage would not help."""
    return CacheError(
        f"{path}: permission denied: {what} is read-only for this user, so the LLM call cache cannot be "
        "written. The file is not damaged. Make it writable (chmod u+w), or set DECLINECRAFT_CACHE to a "
        "writable folder."
    )


def check_writable(path: Path) -> None:
    """Refuse a store whose file or folder this user may not write (SQLite needs both, for its
    -wal and -shm files beside it), before SQLite reports it as an unreadable, "damaged" file.

    Raises:
        CacheError: naming the file and what is read-only.
    """
    folder = path.parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise refused(path, f"its folder {folder}")
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise refused(path, "the file")


def check_file(path: Path) -> None:
    """Refuse a store file that is visibly truncated: empty, shorter than its header, or shorter
    than the page count its header records (when no write-ahead log is pending).

    Raises:
        CacheError: naming the file and the recovery command.
    """
    if not path.is_file():
        return
    size = path.stat().st_size
    wal = path.with_name(path.name + "-wal")
    pending = wal.is_file() and wal.stat().st_size > 0
    if size == 0 and not pending:
        raise damaged(path, "the file is empty")
    if 0 < size < 100:
        raise damaged(path, f"{size} bytes, shorter than an SQLite header")
    if size >= 100:
        with path.open("rb") as fh:
            header = fh.read(100)
        if not header.startswith(b"SQLite format 3\x00"):
            raise damaged(path, "not an SQLite database")
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = int.from_bytes(header[28:32], "big")
        valid = header[24:28] == header[92:96]  # the header's page count is current
        if valid and not pending and size < pages * page_size:
            raise damaged(path, f"truncated: {size} bytes of {pages * page_size}")
