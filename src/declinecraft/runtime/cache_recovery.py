"""Read index b-tree records straight from the pages of a damaged SQLite file (and its WAL).

SQLite's own reader stops at the first damaged page it meets, which for a truncated file is
usually the root: nothing comes back although most pages are intact. This module ignores the tree
and looks at every page on its own (file format: https://sqlite.org/fileformat2.html): each index
b-tree page, leaf or interior, holds whole records (a ``WITHOUT ROWID`` table is an index b-tree),
and a record longer than its page continues on a chain of overflow pages. Committed frames of the
write-ahead log replace the file's copy of a page, as SQLite itself would read them.

Nothing here knows the store's schema: callers check the shape of each record they keep.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

_MAGIC = b"SQLite format 3\x00"
_WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}
_INDEX_LEAF, _INDEX_INTERIOR = 0x0A, 0x02

Value = int | float | str | bytes | None


@dataclass
class PageScan:
    """What a scan of every page found."""

    records: list[tuple[Value, ...]] = field(default_factory=list)
    """Every complete record of every index b-tree page (stale copies on free pages included)."""
    broken: int = 0
    """Records seen whose overflow pages are missing or unreadable."""
    broken_pages: int = 0
    """Overflow pages those broken records miss (already among ``missing`` when cut off)."""
    pages: int = 0
    """Pages the file held: the larger of its header's count and the last WAL commit's."""
    missing: int = 0
    """Pages of ``pages`` that are neither in the file nor in the WAL (cut off)."""
    page_size: int = 0


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Return (value, position after it) of the big-endian varint at ``pos`` (1 to 9 bytes)."""
    value = 0
    for i in range(8):
        byte = buf[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | buf[pos + 8], pos + 9


def _decode(payload: bytes) -> tuple[Value, ...]:
    """Decode one record (header of serial types, then the values).

    Raises:
        ValueError: the record does not decode (sizes past its end, reserved types, bad UTF-8).
    """
    size, pos = _varint(payload, 0)
    if size > len(payload):
        raise ValueError("record header past its end")
    types = []
    while pos < size:
        kind, pos = _varint(payload, pos)
        types.append(kind)
    values: list[Value] = []
    for kind in types:
        if kind in (0, 8, 9):
            values.append(None if kind == 0 else kind - 8)
            continue
        if kind in (10, 11):
            raise ValueError("reserved serial type")
        width = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8}.get(kind, (kind - 12) // 2)
        chunk = payload[size : size + width]
        if len(chunk) != width:
            raise ValueError("record body past its end")
        size += width
        if kind == 7:
            values.append(struct.unpack(">d", chunk)[0])
        elif kind < 7:
            values.append(int.from_bytes(chunk, "big", signed=True))
        elif kind % 2:
            values.append(chunk.decode("utf-8"))
        else:
            values.append(bytes(chunk))
    return tuple(values)


def _checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), continued from (s0, s1)."""
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def wal_pages(wal: bytes) -> tuple[dict[int, bytes], int, int]:
    """Return (page number -> newest committed image, page count at the last commit, page size)
    from a write-ahead log; frames after the last valid commit are ignored, as SQLite ignores them."""
    if len(wal) < 32:
        return {}, 0, 0
    magic, _, page_size, _, salt1, salt2, c0, c1 = struct.unpack(">8I", wal[:32])
    order = _WAL_MAGIC.get(magic)
    if order is None or page_size < 512 or page_size & (page_size - 1):
        return {}, 0, 0
    s0, s1 = _checksum(wal[:24], order, 0, 0)
    if (s0, s1) != (c0, c1):
        return {}, 0, 0
    committed: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    count = 0
    pos = 32
    while pos + 24 + page_size <= len(wal):
        number, after, f_salt1, f_salt2, f0, f1 = struct.unpack(">6I", wal[pos : pos + 24])
        image = wal[pos + 24 : pos + 24 + page_size]
        if (f_salt1, f_salt2) != (salt1, salt2):
            break
        s0, s1 = _checksum(wal[pos : pos + 8] + image, order, s0, s1)
        if (s0, s1) != (f0, f1):
            break
        pending[number] = image
        if after:
            committed.update(pending)
            pending.clear()
            count = after
        pos += 24 + page_size
    return committed, count, page_size


def _local_size(payload: int, usable: int) -> int:
    """Bytes of an index cell's payload kept on its own page (the rest overflows)."""
    most = (usable - 12) * 64 // 255 - 23
    if payload <= most:
        return payload
    least = (usable - 12) * 32 // 255 - 23
    local = least + (payload - least) % (usable - 4)
    return local if local <= most else least


def _cells(
    page: bytes, number: int, usable: int, get: Callable[[int], bytes | None]
) -> Iterator[tuple[bytes | None, int]]:
    """Yield (whole payload, 0) for each cell of one index b-tree page, or (None, overflow pages not
    found) for a cell whose overflow chain is cut."""
    head = 100 if number == 1 else 0
    kind = page[head]
    count = int.from_bytes(page[head + 3 : head + 5], "big")
    pointers = head + (12 if kind == _INDEX_INTERIOR else 8)
    for i in range(count):
        at = pointers + 2 * i
        if at + 2 > usable:
            return
        cell = int.from_bytes(page[at : at + 2], "big") + (4 if kind == _INDEX_INTERIOR else 0)
        try:
            size, start = _varint(page, cell)
        except IndexError:
            continue
        local = _local_size(size, usable)
        payload = bytearray(page[start : start + local])
        if len(payload) != local or start + local > usable:
            yield None, 0
            continue
        following = int.from_bytes(page[start + local : start + local + 4], "big") if local < size else 0
        seen: set[int] = set()
        while len(payload) < size:
            spill = get(following) if following not in seen else None
            if spill is None:
                break
            seen.add(following)
            payload += spill[4:usable][: size - len(payload)]
            following = int.from_bytes(spill[:4], "big")
        short = size - len(payload)
        yield (bytes(payload), 0) if not short else (None, -(-short // (usable - 4)))


def scan(path: Path, wal: Path | None = None) -> PageScan:
    """Read every record of every index b-tree page of ``path`` (and of its WAL, if given).

    Never raises on damage: a page that does not parse is skipped, a record whose overflow chain is
    cut is counted in ``broken``, pages past the end of the file are counted in ``missing``.
    """
    data = path.read_bytes()
    frames, wal_count, wal_page_size = wal_pages(wal.read_bytes()) if wal and wal.is_file() else ({}, 0, 0)
    header_ok = data[:16] == _MAGIC and len(data) >= 100
    page_size = int.from_bytes(data[16:18], "big") if header_ok else 0
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        page_size = wal_page_size or 4096
    reserved = data[20] if header_ok else 0
    usable = page_size - reserved
    in_file = len(data) // page_size
    header_count = int.from_bytes(data[28:32], "big") if header_ok else 0
    found = PageScan(page_size=page_size)
    found.pages = max(header_count, wal_count, in_file)

    def get(number: int) -> bytes | None:
        if number in frames:
            return frames[number]
        if 1 <= number <= in_file:
            return data[(number - 1) * page_size : number * page_size]
        return None

    for number in range(1, found.pages + 1):
        page = get(number)
        if page is None:
            found.missing += 1
            continue
        if page[100 if number == 1 else 0] not in (_INDEX_LEAF, _INDEX_INTERIOR):
            continue
        for payload, cut_pages in _cells(page, number, usable, get):
            if payload is None:
                found.broken += 1
                found.broken_pages += cut_pages
                continue
            try:
                found.records.append(_decode(payload))
            except (ValueError, IndexError, UnicodeDecodeError):
                found.broken += 1
    return found
