"""Tests for declinecraft.llm.cache: keys, upsert policy, WAL durability, concurrent writer processes."""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.llm import cache
from declinecraft.llm.cache import Cache, CallRecord
from tests.support import projects, records


@pytest.fixture()
def store(tmp_path: Path) -> Cache:
    with Cache(tmp_path / "calls.sqlite") as db:
        yield db


class TestCanonicalJson:
    def test_order_free(self) -> None:
        """Key order and spacing never change the text."""
        assert cache.canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == '{"a":[1,{"c":3,"d":2}],"b":1}'

    def test_unicode_kept(self) -> None:
        """Non-ASCII text is kept as is (the paper's typographic quotes)."""
        assert cache.canonical_json("user’s") == '"user’s"'


class TestCallKey:
    ENDPOINT = {"backend": "vllm", "model": "m", "revision": ""}
    BODY = {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.0, "max_tokens": 8}

    def test_stable(self) -> None:
        """Equal inputs give the same 64-hex key, whatever the dict order."""
        a = cache.call_key(self.ENDPOINT, self.BODY, "v1")
        b = cache.call_key(dict(reversed(self.ENDPOINT.items())), dict(reversed(self.BODY.items())), "v1")
        assert a == b and len(a) == 64

    @pytest.mark.parametrize("prompt", ["v1", "", 'q"uote\u00fc'])
    def test_same_as_whole_json(self, prompt: str) -> None:
        """The key hashes the canonical JSON of {v, endpoint, body, prompt}, byte for byte, though
        the body is serialised on its own (keys of stores written before stay valid)."""
        whole = cache.canonical_json(
            {"v": cache.SCHEMA_VERSION, "endpoint": self.ENDPOINT, "body": self.BODY, "prompt": prompt}
        )
        expected = hashlib.sha256(whole.encode("utf-8")).hexdigest()
        assert cache.call_key(self.ENDPOINT, self.BODY, prompt) == expected
        assert cache.body_key(cache.canonical_json(self.ENDPOINT), cache.canonical_json(self.BODY), prompt) == expected

    @pytest.mark.parametrize(
        "change",
        [
            ("endpoint", {"model": "other"}),
            ("endpoint", {"revision": "r2"}),
            ("body", {"temperature": 0.7}),
            ("body", {"max_tokens": 9}),
            ("body", {"messages": [{"role": "user", "content": "hi!"}]}),
            ("prompt", "v2"),
        ],
    )
    def test_sensitive(self, change: tuple[str, object]) -> None:
        """Model, revision, sampling, messages and prompt version each change the key."""
        endpoint, body, prompt = dict(self.ENDPOINT), dict(self.BODY), "v1"
        where, value = change
        if where == "endpoint":
            endpoint.update(value)  # type: ignore[arg-type]
        elif where == "body":
            body.update(value)  # type: ignore[arg-type]
        else:
            prompt = str(value)
        assert cache.call_key(endpoint, body, prompt) != cache.call_key(self.ENDPOINT, self.BODY, "v1")


class TestCacheStore:
    def test_roundtrip(self, store: Cache) -> None:
        """Every field comes back as stored."""
        rec = records.record("k1", reasoning="trace", text="<think>t</think>a")
        store.store([rec])
        assert store.get("k1") == rec

    def test_ok_is_final(self, store: Cache) -> None:
        """An ok row is never replaced, neither by a failure nor by another answer."""
        store.store([records.record("k", text="first")])
        store.store([records.record("k", status="failed", text=None), records.record("k", text="second")])
        assert store.get("k").text == "first"  # type: ignore[union-attr]
        assert store.count() == 1

    def test_failure_replaced(self, store: Cache) -> None:
        """A failed row is replaced by a later answer (a deliberate retry)."""
        store.store([records.record("k", status="failed", text=None)])
        store.store([records.record("k", text="late", attempts=2)])
        got = store.get("k")
        assert got is not None and got.status == "ok" and got.text == "late" and got.attempts == 2

    def test_wal(self, store: Cache) -> None:
        """The file is in WAL mode (readers never block the writer)."""
        with sqlite3.connect(store.path) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def test_empty(self, store: Cache) -> None:
        """Storing nothing is a no-op."""
        store.store([])
        assert store.count() == 0


class TestCacheFetch:
    def test_many(self, store: Cache) -> None:
        """Only present keys come back; batches above the IN-list chunk work."""
        store.store([records.record(f"k{i}") for i in range(1200)])
        found = store.fetch([f"k{i}" for i in range(0, 1300, 2)])
        assert len(found) == 600 and set(found) == {f"k{i}" for i in range(0, 1200, 2)}


class TestCacheCount:
    def test_by_status_and_endpoint(self, store: Cache) -> None:
        """Counts split by status and endpoint."""
        store.store(
            [records.record("a"), records.record("b", status="failed"), records.record("c", endpoint="openai:x")]
        )
        assert (store.count(), store.count("ok"), store.count("failed")) == (3, 2, 1)
        assert store.count(endpoint="openai:x") == 1
        assert [r.key for r in store.records("failed")] == ["b"]


class TestCache:
    def test_schema_mismatch(self, tmp_path: Path) -> None:
        """A store written by another schema version is refused with its path."""
        path = tmp_path / "calls.sqlite"
        Cache(path).close()
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = '99' WHERE name = 'schema'")
        with pytest.raises(cache.CacheError, match=r"calls\.sqlite: schema version 99"):
            Cache(path)

    def test_repr(self, store: Cache) -> None:
        """The repr names the file."""
        assert "calls.sqlite" in repr(store)

    def test_two_processes(self, tmp_path: Path) -> None:
        """Two processes writing overlapping keys at once: no lock errors, no lost rows."""
        path = tmp_path / "calls.sqlite"
        script = textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(projects.REPO)!r})
            from tests.support import records
            from declinecraft.llm.cache import Cache
            start = int(sys.argv[1])
            with Cache({str(path)!r}) as db:
                for i in range(start, start + 1500, 3):
                    db.store([records.record(f"k{{j}}") for j in range(i, i + 3)])
            """
        )
        procs = [
            subprocess.Popen([sys.executable, "-c", script, str(s)], stderr=subprocess.PIPE, text=True)
            for s in (0, 500)
        ]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], errors
        assert not any("locked" in e for e in errors)
        with Cache(path) as db:
            assert db.count() == 2000
            assert set(db.fetch(f"k{i}" for i in range(2000))) == {f"k{i}" for i in range(2000)}


class TestOpenCache:
    def test_location(self, tmp_path: Path) -> None:
        """The store lives in <cache_dir>/llm/, outside every run's outputs."""
        with cache.open_cache(tmp_path) as db:
            assert db.path == tmp_path / "llm" / "calls.sqlite"
            assert db.path.is_file()


def filled(path: Path, n: int = 300, *, seed: int = 0) -> dict[str, CallRecord]:
    """A closed store of ``n`` calls of seeded sizes (requests and answers from 50 bytes to 6 KB)."""
    rng = random.Random(seed)
    stored = {
        f"k{i:04d}": records.record(f"k{i:04d}", request="q" * rng.randint(50, 3000), text="a" * rng.randint(50, 6000))
        for i in range(n)
    }
    with Cache(path) as db:
        for start in range(0, n, 20):
            db.store(list(stored.values())[start : start + 20])
    return stored


def cache_cli(command: str, path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m declinecraft.llm.cache COMMAND PATH``."""
    return subprocess.run(
        [sys.executable, "-m", "declinecraft.llm.cache", command, str(path)], capture_output=True, text=True
    )


class TestSalvage:
    def test_intact(self, tmp_path: Path) -> None:
        """An undamaged store comes back whole, and the command exits 0."""
        path = tmp_path / "calls.sqlite"
        records = filled(path)
        got = cache.salvage(path)
        assert (got.recovered, got.lost, got.total, got.complete) == (300, 0, 300, True)
        with Cache(path) as db:
            assert db.fetch(records) == records
        done = cache_cli("salvage", path)
        assert done.returncode == 0 and "300 calls recovered, 0 lost, of 300" in done.stdout

    def test_random_truncations(self, tmp_path: Path) -> None:
        """Cut at 10 seeded offsets: about the share of calls the cut left comes back, each one
        identical to what was stored, and the loss is reported."""
        whole = tmp_path / "whole.sqlite"
        records = filled(whole)
        data = whole.read_bytes()
        rng = random.Random(33)
        shares = []
        for cut in sorted(rng.randrange(4096, len(data)) for _ in range(10)):
            path = tmp_path / f"cut{cut}" / "calls.sqlite"
            path.parent.mkdir()
            path.write_bytes(data[:cut])
            got = cache.salvage(path)
            with Cache(path) as db:
                back = db.records()
            assert all(records[r.key] == r for r in back)
            assert got.recovered == len(back) and not got.complete and got.missing_pages > 0
            assert got.total == pytest.approx(300, rel=0.25)
            shares.append(got.recovered / 300)
            assert got.recovered / 300 >= cut / len(data) - 0.15  # about what the cut left
        assert sum(shares) / len(shares) >= 0.4, shares
        print(f"recovered per cut: {[round(s, 3) for s in shares]}, mean {sum(shares) / len(shares):.3f}")

    def test_cut_reports_loss(self, tmp_path: Path) -> None:
        """A store cut in half: the command names recovered / lost / total and exits 1."""
        path = tmp_path / "calls.sqlite"
        filled(path)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        done = cache_cli("salvage", path)
        assert done.returncode == 1, done.stderr
        found = re.search(r"(\d+) calls recovered, (\d+) lost, of (\d+) the file held", done.stdout)
        assert found and 100 <= int(found[1]) < 300 and int(found[2]) > 0
        assert "calls could not be recovered" in done.stderr
        with Cache(path) as db:
            assert db.count() == int(found[1])

    def test_wal_frames(self, tmp_path: Path) -> None:
        """Calls committed only to the write-ahead log (a writer killed before a checkpoint) come back."""
        path = tmp_path / "live" / "calls.sqlite"
        path.parent.mkdir()
        db = Cache(path)
        db.store([records.record(f"w{i}", text="w" * 2000) for i in range(40)])
        copy = tmp_path / "copy" / "calls.sqlite"
        copy.parent.mkdir()
        for suffix in ("", "-wal"):
            shutil.copy(path.with_name(path.name + suffix), copy.with_name(copy.name + suffix))
        db.close()
        got = cache.salvage(copy)
        assert got.recovered == 40 and got.complete

    def test_missing(self, tmp_path: Path) -> None:
        """A path that does not exist: CacheError, and no file is made."""
        with pytest.raises(cache.CacheError, match=r"nope\.sqlite: no such file; there is nothing to salvage"):
            cache.salvage(tmp_path / "nope.sqlite")
        assert list(tmp_path.iterdir()) == []


def as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m declinecraft.llm.cache ARGS`` as an unprivileged user (root ignores modes)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file modes cannot be tested")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {**os.environ, "PYTHONPATH": str(Path(cache.__file__).parents[2])}
    command = [*prefix, sys.executable, "-m", "declinecraft.llm.cache", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env)


@pytest.fixture()
def shared() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are private to their owner)."""
    folder = Path(tempfile.mkdtemp(prefix="cache-modes-"))
    folder.chmod(0o755)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755)
    shutil.rmtree(folder)


class TestReadOnly:
    @pytest.mark.parametrize("what", ["folder", "file"])
    def test_told_apart_from_damage(self, shared: Path, what: str) -> None:
        """A read-only store or folder: 'permission denied', never 'damaged' or a traceback (salvage
        too, in a read-only folder, where it cannot move the file aside)."""
        path = shared / "llm" / "calls.sqlite"
        filled(path, 5)
        path.chmod(0o444)
        path.parent.chmod(0o555 if what == "folder" else 0o777)
        for command in ("check", "salvage") if what == "folder" else ("check",):
            done = as_nobody(command, str(path))
            assert done.returncode == 1, done.stderr
            assert "permission denied" in done.stderr and "damaged" not in done.stderr.replace("not damaged", "")
            assert "Traceback" not in done.stderr
        assert not list(path.parent.glob("*.damaged-*"))

    def test_in_process(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Opening a store this user may not write raises CacheError naming the file and the cause."""
        path = tmp_path / "calls.sqlite"
        filled(path, 2)
        monkeypatch.setattr(os, "access", lambda *a, **k: False)
        with pytest.raises(cache.CacheError, match=rf"{path}: permission denied: its folder .* is read-only"):
            Cache(path)


class TestCheck:
    def test_missing_path_creates_nothing(self, tmp_path: Path) -> None:
        """`check` on a mistyped path: exit 1 saying so, and no store (nor folder) is made."""
        done = cache_cli("check", tmp_path / "typo" / "calls.sqlite")
        assert done.returncode == 1 and "no such file; nothing was checked and no file was made" in done.stderr
        assert list(tmp_path.iterdir()) == []

    def test_ok(self, tmp_path: Path) -> None:
        """`check` on a sound store counts its calls."""
        filled(tmp_path / "calls.sqlite", 3)
        done = cache_cli("check", tmp_path / "calls.sqlite")
        assert done.returncode == 0 and "ok, 3 answered and 0 failed calls" in done.stdout


class TestUsage:
    def test_answered_calls_with_counts(self, store: Cache) -> None:
        """An endpoint's answered calls with token counts and a latency, newest first; failures,
        calls without counts and other endpoints are left out."""
        store.store(
            [
                records.record("a", endpoint="e:m", prompt_tokens=10, completion_tokens=2, latency_s=0.5),
                records.record("b", endpoint="e:m", prompt_tokens=None, completion_tokens=2, latency_s=0.5),
                records.record(
                    "c", status="failed", endpoint="e:m", prompt_tokens=1, completion_tokens=1, latency_s=1.0
                ),
                records.record("d", endpoint="e:other", prompt_tokens=1, completion_tokens=1, latency_s=1.0),
            ]
        )
        assert store.usage("e:m") == [(10, 2, 0.5)]
