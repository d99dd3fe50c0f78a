"""A run's replay bundle: one zip with what it takes to rebuild the run's outputs without a model.

``make bundle RUN=<run>`` writes ``outputs/<run>/replay-bundle.zip`` holding

- ``params.yaml``: the run's resolved params (:meth:`RunConfig.to_dict`);
- ``environment.json``: the run's machine record (machine, packages, model files' sha256);
- ``llm.sqlite``, ``embeddings.sqlite``, ``rerank.sqlite``: the LLM calls, embedding vectors and
  reranker scores the run looked up, and only those: the keys its stages wrote to their ledgers
  (:mod:`declinecraft.runtime.replay`), copied row for row out of the shared caches;
- ``manifest.json``: the format, the run, each file's sha256 and size, and the counts per kind.

``make all PARAMS=… BUNDLE=<file>`` checks the manifest and the params, unpacks the three stores
into ``outputs/<run>/replay/cache/`` and runs the pipeline with that folder as the cache and strict
replay on: every lookup is answered from the bundle, and one it lacks stops the stage.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import yaml

from declinecraft.core import catalogue, paths
from declinecraft.core.config import RunConfig, load
from declinecraft.core.environment import sha256_file
from declinecraft.runtime import replay

FORMAT = "declinecraft-replay-bundle"
VERSION = 1
BUNDLE_NAME = "replay-bundle.zip"
MANIFEST = "manifest.json"
PARAMS = "params.yaml"
ENVIRONMENT = catalogue.PAPER_ENVIRONMENT.name
#: Bundle member -> (store under the cache folder, table, key columns) per kind of answer.
STORES: dict[replay.Kind, tuple[str, str, str, tuple[str, ...]]] = {
    "llm": ("llm.sqlite", "llm/calls.sqlite", "calls", ("key",)),
    "embedding": ("embeddings.sqlite", "embeddings/embeddings.sqlite", "vectors", ("model", "sha")),
    "rerank": ("rerank.sqlite", "rerank/scores.sqlite", "vectors", ("model", "sha")),
}
#: Where a replay keeps the bundle's machine record, inside its cache folder.
RECORDED_ENVIRONMENT = "bundle-environment.json"


class BundleError(ValueError):
    """A bundle cannot be written or replayed; the message names the file and what is wrong."""


def ledger_path(cfg: RunConfig, notebook: str) -> Path:
    """The ledger a stage notebook writes: ``outputs/<owner>/calls/<notebook>.tsv``."""
    block = catalogue.block_of(notebook)
    return cfg.run_dir(cfg.owner(block)) / "calls" / f"{notebook}.tsv"


def replay_cache(cfg: RunConfig) -> Path:
    """The cache folder a replay of ``cfg``'s run reads: ``outputs/<run>/replay/cache``."""
    return cfg.run_dir() / "replay" / "cache"


def _used(cfg: RunConfig) -> dict[replay.Kind, set[tuple[str, str]]]:
    used: dict[replay.Kind, set[tuple[str, str]]] = {kind: set() for kind in replay.KINDS}
    for block, notebook in ((s.block, s.notebook) for s in catalogue.STAGES.values()):
        executed = cfg.run_dir(cfg.owner(block)) / "executed" / f"{notebook}.ipynb"
        if not executed.is_file():
            raise BundleError(f"{executed} is missing: run '{cfg.run}' is not complete (make all RUN={cfg.run})")
        ledger = ledger_path(cfg, notebook)
        if not ledger.is_file():
            raise BundleError(
                f"{ledger} is missing: stage {notebook} ran before its lookups were recorded. Rerun it "
                f"(delete {executed} and run make all RUN={cfg.run}; cached answers are not sent again)"
            )
        for kind, keys in replay.ledger_read(ledger).items():
            used[kind] |= keys
    return used


def _copy_rows(source: Path, target: Path, kind: replay.Kind, keys: set[tuple[str, str]]) -> int:
    """Copy the rows of ``keys`` from one cache store into a new store of the same schema."""
    _, _, table, columns = STORES[kind]
    if not keys:
        return 0
    if not source.is_file():
        raise BundleError(f"{source}: no such cache, yet the run looked up {len(keys)} {kind} answers in it")
    db = sqlite3.connect(target)
    try:
        db.execute("ATTACH DATABASE ? AS src", (str(source),))
        for (sql,) in db.execute("SELECT sql FROM src.sqlite_master WHERE type = 'table' AND sql IS NOT NULL"):
            db.execute(sql)
        db.execute(f"CREATE TEMP TABLE want ({', '.join(columns)})")
        rows = [(key,) if kind == "llm" else (model, key) for model, key in sorted(keys)]
        db.executemany(f"INSERT INTO want VALUES ({', '.join('?' * len(columns))})", rows)
        match = " AND ".join(f"t.{c} = w.{c}" for c in columns)
        db.execute(
            f"INSERT INTO main.{table} SELECT t.* FROM src.{table} t JOIN want w ON {match} ORDER BY "
            f"{', '.join('t.' + c for c in columns)}"
        )
        if kind == "llm":
            db.execute("INSERT INTO main.meta SELECT * FROM src.meta")
            db.execute(
                "INSERT INTO main.call_environment SELECT e.* FROM src.call_environment e "
                "JOIN want w ON e.key = w.key ORDER BY e.key"
            )
            db.execute(
                "INSERT INTO main.environments SELECT * FROM src.environments "
                "WHERE id IN (SELECT environment FROM main.call_environment) ORDER BY id"
            )
        (copied,) = db.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()
        db.commit()
    finally:
        db.close()
    if copied != len(keys):
        raise BundleError(
            f"{source}: {len(keys) - copied} of the {len(keys)} {kind} answers the run's ledgers name are not in the "
            "cache (was the cache cleared or another DECLINECRAFT_CACHE used?); no bundle was written"
        )
    return int(copied)


def write(cfg: RunConfig, target: Path | None = None) -> Path:
    """Write the replay bundle of a complete run; return its path.

    Raises:
        BundleError: the run is incomplete, a stage kept no ledger, or the cache lacks an answer.
    """
    target = target or cfg.run_dir() / BUNDLE_NAME
    environment = catalogue.PAPER_ENVIRONMENT.path(cfg)
    if not environment.is_file():
        raise BundleError(f"{environment} is missing: the paper stage writes it (make all RUN={cfg.run})")
    used = _used(cfg)
    staging = target.with_name(f".{target.name}.parts")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        counts = {}
        for kind, (member, store, _, _) in STORES.items():
            counts[kind] = _copy_rows(cfg.cache_dir / store, staging / member, kind, used[kind])
        (staging / PARAMS).write_text(
            yaml.safe_dump(cfg.to_dict(), sort_keys=True, allow_unicode=True), encoding="utf-8"
        )
        shutil.copyfile(environment, staging / ENVIRONMENT)
        files = sorted(p.name for p in staging.iterdir())
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "run": cfg.run,
            "counts": counts,
            "files": {
                name: {"sha256": sha256_file(staging / name), "bytes": (staging / name).stat().st_size}
                for name in files
            },
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        with paths.atomic_path(target) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in [MANIFEST, *files]:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
                with open(staging / name, "rb") as fh, archive.open(info, "w") as out:
                    shutil.copyfileobj(fh, out, 1 << 20)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _first_difference(mine: Any, theirs: Any, where: str = "") -> str | None:
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            found = _first_difference(mine.get(key), theirs.get(key), f"{where}.{key}" if where else str(key))
            if found:
                return found
        return None
    return None if mine == theirs else f"{where}: {mine!r} here, {theirs!r} in the bundle"


#: Read size when a member is hashed and copied out (members can be gigabytes at the paper's size).
_BLOCK = 1 << 20
#: What reading a damaged zip member raises: a bad deflate stream (zlib), a CRC or header mismatch.
_DAMAGED = (zlib.error, zipfile.BadZipFile, EOFError, OSError)


def _read(bundle: Path, archive: zipfile.ZipFile, name: str) -> bytes:
    """A small member's bytes; a damaged one is a :class:`BundleError` naming bundle and member."""
    try:
        return archive.read(name)
    except _DAMAGED as exc:
        raise BundleError(
            f"{bundle}: member {name} is damaged and cannot be read ({exc}); get the bundle again"
        ) from None


def _copy_checked(bundle: Path, archive: zipfile.ZipFile, name: str, sha256: str, out: Path | None) -> None:
    """Stream a member through sha256 (into ``out`` when given) and compare with the manifest."""
    digest = hashlib.sha256()
    try:
        with archive.open(name) as source, contextlib.ExitStack() as stack:
            target = stack.enter_context(open(out, "wb")) if out is not None else None
            while block := source.read(_BLOCK):
                digest.update(block)
                if target is not None:
                    target.write(block)
    except _DAMAGED as exc:
        raise BundleError(
            f"{bundle}: member {name} is damaged and cannot be read ({exc}); get the bundle again"
        ) from None
    if digest.hexdigest() != sha256:
        raise BundleError(f"{bundle}: {name} does not match its sha256 in the manifest (damaged or edited)")


def _manifest(bundle: Path, archive: zipfile.ZipFile) -> dict[str, Any]:
    """The bundle's manifest, checked for format, version and a sha256 per member."""
    names = set(archive.namelist())
    if MANIFEST not in names:
        raise BundleError(f"{bundle}: no {MANIFEST}; not a replay bundle")
    try:
        manifest = json.loads(_read(bundle, archive, MANIFEST))
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise BundleError(f"{bundle}: member {MANIFEST} is damaged ({exc}); get the bundle again") from None
    if not isinstance(manifest, dict):
        raise BundleError(f"{bundle}: member {MANIFEST} is damaged (not a JSON object); get the bundle again")
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise BundleError(
            f"{bundle}: format {manifest.get('format')!r} v{manifest.get('version')}, this code reads "
            f"{FORMAT} v{VERSION}"
        )
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        raise BundleError(f"{bundle}: member {MANIFEST} lists no files; not a replay bundle")
    for name, entry in sorted(listed.items()):
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            raise BundleError(f"{bundle}: member {MANIFEST} gives no sha256 for {name}")
    if extra := sorted(names - set(listed) - {MANIFEST}):
        raise BundleError(f"{bundle}: {extra[0]} is not in the manifest")
    if missing := sorted(set(listed) - names):
        raise BundleError(f"{bundle}: {missing[0]} is in the manifest but not in the bundle")
    return manifest


def check(bundle: Path) -> dict[str, Any]:
    """Check every member of a bundle against its sha256 in the manifest; return the manifest.

    Reads each member once, in blocks, so a bundle of any size is checked in constant memory.

    Raises:
        BundleError: naming the bundle and the member that is missing, damaged, changed or
            unexpected (never a raw ``zlib.error`` or ``BadZipFile``).
    """
    if not bundle.is_file():
        raise BundleError(f"{bundle}: no such bundle file")
    try:
        archive = zipfile.ZipFile(bundle)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{bundle}: not a replay bundle, or damaged ({exc})") from None
    with archive:
        manifest = _manifest(bundle, archive)
        for name, entry in sorted(manifest["files"].items()):
            _copy_checked(bundle, archive, name, entry["sha256"], None)
    return manifest


def unpack(bundle: Path, cfg: RunConfig, target: Path | None = None) -> Path:
    """Check a bundle against its manifest and ``cfg``'s params, then unpack its stores as a cache
    folder (``outputs/<run>/replay/cache`` unless ``target``); return the folder.

    Every member is checked against its sha256 before anything is unpacked; the stores are then
    copied out in blocks and checked again on the way (a bundle is read twice, never held in memory).

    Raises:
        BundleError: naming the bundle and the member that is missing, damaged, changed or
            unexpected, or the first params key that differs.
    """
    manifest = check(bundle)
    target = target or replay_cache(cfg)
    with zipfile.ZipFile(bundle) as archive:
        recorded = yaml.safe_load(_read(bundle, archive, PARAMS))
        if difference := _first_difference(json.loads(json.dumps(cfg.to_dict())), recorded):
            raise BundleError(f"{bundle}: made from other params than {cfg.params_file}: {difference}")
        shutil.rmtree(target, ignore_errors=True)
        listed = manifest["files"]
        for member, store, _, _ in STORES.values():
            if member in listed:
                (target / store).parent.mkdir(parents=True, exist_ok=True)
                _copy_checked(bundle, archive, member, listed[member]["sha256"], target / store)
        (target / RECORDED_ENVIRONMENT).write_bytes(_read(bundle, archive, ENVIRONMENT))
    return target


def recorded_environment(cache_dir: Path) -> dict[str, Any] | None:
    """The bundle's machine record in a replay (None in an ordinary run)."""
    path = cache_dir / RECORDED_ENVIRONMENT
    if not replay.replaying() or not path.is_file():
        return None
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _main(argv: list[str]) -> int:
    """``write PARAMS [--out FILE]`` or ``replay BUNDLE PARAMS -- COMMAND...`` (the Makefile's)."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.runtime.bundle")
    sub = parser.add_subparsers(dest="action", required=True)
    make = sub.add_parser("write", help="write the replay bundle of a complete run")
    make.add_argument("params_file")
    make.add_argument("--out", type=Path)
    run = sub.add_parser("replay", help="unpack a bundle, then run COMMAND with strict replay on")
    run.add_argument("bundle", type=Path)
    run.add_argument("params_file")
    run.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    try:
        cfg = load(args.params_file)
        if args.action == "write":
            out = write(cfg, args.out)
            manifest = json.loads(zipfile.ZipFile(out).read(MANIFEST))
            counts = ", ".join(f"{n} {kind}" for kind, n in manifest["counts"].items())
            print(f">> {out}: {out.stat().st_size / 2**20:.1f} MiB ({counts})")
            return 0
        cache = unpack(args.bundle, cfg)
    except (BundleError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    print(f">> replaying {args.bundle} strictly: every model call, embedding and score comes from it")
    env = {**os.environ, paths.CACHE_ENV: str(cache), replay.REPLAY_ENV: str(args.bundle.resolve())}
    return subprocess.call(command, env=env) if command else 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
