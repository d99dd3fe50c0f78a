"""Tests for declinecraft.runtime.bundle: a bundle replays a run byte for byte, and a strict miss names
stage, model and prompt.

The whole-run test bundles the session's scripted run (every role on hosted models answered by the
fake server, tests/support/fake_model.py; the ``scripted_run`` fixture of tests/conftest.py) and
replays the bundle into a second copy with an empty cache, where every Python socket connection is
refused and logged (a ``sitecustomize`` on the path): no model server may start and no connection
may open, so the fake server, still up for the other tests, is never reached."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import struct
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from declinecraft.core import catalogue, config, environment
from declinecraft.llm import serve
from declinecraft.retrieval.embedding_cache import EmbeddingCache
from declinecraft.runtime import bundle, replay
from tests.support import faults, projects

RUN = faults.SCRIPTED_RUN


PARAMS = faults.SCRIPTED_PARAMS_FILE


#: Files a replay may write differently: the machine record (this machine), its macros, the PDF,
#: the explorer page (it names the machine) and the logs and notebooks (timings).
MACHINE_FILES = ("environment.json", "environment.tex", "main.pdf")


#: A ``sitecustomize`` that refuses and logs every Internet-family socket connection of the process.
GUARD = """
import os, socket
_log = os.environ["DECLINECRAFT_TEST_CONNECT_LOG"]
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
def _guard(self, address, _real):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        with open(_log, "a") as out:
            out.write(f"{os.getpid()} {address}\\n")
        raise ConnectionRefusedError(f"replay test: connection to {address} refused")
    return _real(self, address)
socket.socket.connect = lambda self, address: _guard(self, address, _connect)
socket.socket.connect_ex = lambda self, address: _guard(self, address, _connect_ex)
"""


def tiny_run(root: Path, monkeypatch: pytest.MonkeyPatch) -> config.RunConfig:
    """A complete-looking run: every stage executed, one embedding looked up by 02_index (of two cached)."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(root / "cache"))
    cfg = config.load(projects.copy_project(root / "project") / "params" / "default.yaml")
    store = EmbeddingCache(cfg.cache_dir / "embeddings" / "embeddings.sqlite")
    store.put_many("m", [("used", np.ones(2, np.float32)), ("unused", np.zeros(2, np.float32))])
    store.close()
    for notebook in map(catalogue.notebook, catalogue.STAGES):
        (cfg.run_dir() / "executed").mkdir(parents=True, exist_ok=True)
        (cfg.run_dir() / "executed" / f"{notebook}.ipynb").write_text("{}")
        bundle.ledger_path(cfg, notebook).parent.mkdir(parents=True, exist_ok=True)
        bundle.ledger_path(cfg, notebook).write_text("embedding\tm\tused\n" if notebook == "02_index" else "")
    (cfg.run_dir() / "environment.json").write_text('{"environment_id": "abc"}')
    return cfg


def flip_byte(archive: Path, member: str) -> Path:
    """Flip one byte in the middle of ``member``'s compressed data, in place; return the path."""
    with zipfile.ZipFile(archive) as opened:
        info = opened.getinfo(member)
    data = bytearray(archive.read_bytes())
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    return archive


class TestBundle:
    def test_only_used_rows(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The bundle holds the looked-up rows only, and unpacks them as a cache folder."""
        cfg = tiny_run(tmp_path, monkeypatch)
        archive = bundle.write(cfg)
        manifest = json.loads(zipfile.ZipFile(archive).read("manifest.json"))
        assert manifest["counts"] == {"llm": 0, "embedding": 1, "rerank": 0}
        folder = bundle.unpack(archive, cfg)
        assert set(
            EmbeddingCache(folder / "embeddings" / "embeddings.sqlite").get_many("m", ["used", "unused"], 2)
        ) == {"used"}

    def test_missing_ledger(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A stage without a ledger is refused, naming the file and the stage to rerun."""
        cfg = tiny_run(tmp_path, monkeypatch)
        bundle.ledger_path(cfg, "05_answer").unlink()
        with pytest.raises(bundle.BundleError, match=r"calls/05_answer.tsv is missing: stage 05_answer ran before"):
            bundle.write(cfg)

    def test_answer_gone_from_cache(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A ledger naming an answer the cache lost: no bundle, and the message says how many."""
        cfg = tiny_run(tmp_path, monkeypatch)
        bundle.ledger_path(cfg, "03_generate").write_text("embedding\tm\tlost\n")
        with pytest.raises(bundle.BundleError, match="1 of the 2 embedding answers"):
            bundle.write(cfg)
        assert not (cfg.run_dir() / bundle.BUNDLE_NAME).exists()

    def test_damaged_member(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A member whose bytes differ from the manifest's sha256 is refused, naming it."""
        cfg = tiny_run(tmp_path, monkeypatch)
        archive = bundle.write(cfg)
        changed = tmp_path / "changed.zip"
        with zipfile.ZipFile(archive) as source, zipfile.ZipFile(changed, "w") as target:
            for name in source.namelist():
                target.writestr(name, b"{}" if name == "environment.json" else source.read(name))
        with pytest.raises(bundle.BundleError, match="environment.json does not match its sha256"):
            bundle.unpack(changed, cfg)

    @pytest.mark.parametrize("member", ["embeddings.sqlite", "manifest.json", "params.yaml"])
    def test_flipped_byte(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: str) -> None:
        """One flipped byte in a member's compressed data: refused naming bundle and member, nothing
        unpacked, and the replay command never runs (no raw zlib.error)."""
        cfg = tiny_run(tmp_path, monkeypatch)
        archive = flip_byte(bundle.write(cfg), member)
        with pytest.raises(bundle.BundleError, match=rf"{re.escape(str(archive))}: (member )?{re.escape(member)} "):
            bundle.unpack(archive, cfg)
        assert not bundle.replay_cache(cfg).exists()
        ran = tmp_path / "ran"
        code = bundle._main(["replay", str(archive), str(cfg.params_file), "--", "touch", str(ran)])
        assert code == 1 and not ran.exists()

    def test_check_reads_every_member(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """check() returns the manifest of a sound bundle, with a sha256 for every member."""
        cfg = tiny_run(tmp_path, monkeypatch)
        manifest = bundle.check(bundle.write(cfg))
        assert set(manifest["files"]) == {"embeddings.sqlite", "params.yaml", "environment.json"}
        assert all(len(entry["sha256"]) == 64 for entry in manifest["files"].values())

    def test_other_params(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A bundle of other params is refused, naming the first key that differs."""
        cfg = tiny_run(tmp_path, monkeypatch)
        archive = bundle.write(cfg)
        cfg.params_file.write_text(cfg.params_file.read_text().replace("seed: 0", "seed: 3", 1))
        with pytest.raises(bundle.BundleError, match="made from other params.*seed: 3 here, 0 in the bundle"):
            bundle.unpack(archive, config.load(cfg.params_file))


#: Keys of the stage manifests that hold times or this checkout's paths, not results.
VOLATILE_KEYS = ("seconds", "created", "pdf")


def _steady(value: object) -> object:
    """A manifest without its timings and paths (keys holding one of :data:`VOLATILE_KEYS`)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not any(word in str(k) for word in VOLATILE_KEYS)}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _files(run_root: Path) -> dict[str, bytes]:
    """Every output of the run, compared byte for byte: stage files, tables and macros. Left out:
    figures' images (their data are the analysis files, compared), the search indexes' store files
    (named by random ids; what they retrieve is in 05_answer, compared), the machine record, logs
    and notebooks; JSON manifests are compared without their timings."""
    found = {}
    for base in (run_root / "outputs" / RUN, run_root / "outputs" / "faults"):
        for path in sorted(p for p in base.rglob("*") if p.is_file()):
            relative = path.relative_to(run_root).as_posix()
            parts = set(path.relative_to(base).parts)
            if parts & {"executed", "logs", "calls", "replay", "params", "explorer", "figures", "lancedb", "tantivy"}:
                continue
            if path.name in MACHINE_FILES or path.name.startswith(".") or path.suffix in (".zip", ".lock"):
                continue
            data = path.read_bytes()
            if path.suffix == ".json":
                data = json.dumps(_steady(json.loads(data)), sort_keys=True).encode()
            found[relative] = data
    return found


@dataclass
class Replayed:
    """The scripted run, its bundle and its replay into a second checkout."""

    first: Path
    second: Path
    archive: Path
    env: dict[str, str]
    sent: int
    seconds: float
    returncode: int
    out: str
    log: Path
    cache: Path


def make(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *args, f"PARAMS={PARAMS}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=3000,
    )


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, scripted_run: faults.ScriptedRun) -> Replayed:
    """Bundle the session's scripted run, and replay it into a fresh copy with an empty cache."""
    first = scripted_run.root
    done = make(first, scripted_run.env, "bundle")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    base = tmp_path_factory.mktemp("replay")
    (base / "second").mkdir()
    second = faults.copy_tree(base / "second")
    for name in ("models_scripted.yaml", "scripted.yaml"):
        (second / "params" / name).write_bytes((first / "params" / name).read_bytes())
    (base / "guard").mkdir()
    (base / "guard" / "sitecustomize.py").write_text(GUARD)
    log, cache = base / "connections.log", base / "cache-second"  # empty: the replay must not need it
    env = faults.make_env(cache, {"DECLINECRAFT_TEST_CONNECT_LOG": str(log)})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(base / "guard"), env.get("PYTHONPATH", "")]))
    archive = first / "outputs" / RUN / bundle.BUNDLE_NAME
    start = time.monotonic()
    done = make(second, env, "all", f"BUNDLE={archive}")
    seconds = time.monotonic() - start
    return Replayed(
        first,
        second,
        archive,
        env,
        scripted_run.requests,
        seconds,
        done.returncode,
        done.stdout + done.stderr,
        log,
        cache,
    )


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_replay_into_second_checkout(replayed: Replayed) -> None:
    """A bundle replayed in a fresh copy with an empty cache: the same bytes, no connection, no server."""
    assert replayed.returncode == 0 and "replaying" in replayed.out, replayed.out[-3000:]
    with zipfile.ZipFile(replayed.archive) as opened:
        assert {"manifest.json", "params.yaml", "environment.json", "llm.sqlite"} <= set(opened.namelist())
    faults.report(
        {
            "check": "replay bundle",
            "calls_sent_first": replayed.sent,
            "bundle_bytes": replayed.archive.stat().st_size,
            "replay_s": round(replayed.seconds),
        }
    )
    assert replayed.sent > 0
    assert not replayed.log.exists(), f"connections opened during the replay: {replayed.log.read_text()[:500]}"
    assert not list(serve.servers_dir(replayed.cache).glob("*")), "a model server was started"
    assert not list(replayed.cache.rglob("*.sqlite")), "the empty cache was used instead of the bundle"
    original, copy = _files(replayed.first), _files(replayed.second)
    assert f"outputs/{RUN}/04_verify/benchmark.parquet" in copy and f"outputs/{RUN}/paper/numbers.tex" in copy
    assert any(name.startswith(f"outputs/{RUN}/paper/tables/") for name in copy)
    differing = sorted(n for n in set(original) | set(copy) if original.get(n) != copy.get(n))
    assert differing == []


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_replay_miss_names_stage_model_prompt(replayed: Replayed, tmp_path: Path) -> None:
    """A bundle lacking one answer call: the answer stage stops naming itself, the model and the
    prompt's first line; nothing is sent. A bundle of other params is refused before any stage."""
    looked_up = replay.ledger_read(replayed.second / "outputs" / RUN / "calls" / "05_answer.tsv")["llm"]
    key = min(k for model, k in looked_up if model.endswith("scripted-under-test"))
    with sqlite3.connect(replayed.second / "outputs" / RUN / "replay" / "cache" / "llm" / "calls.sqlite") as db:
        (request,) = db.execute("SELECT request FROM calls WHERE key = ?", (key,)).fetchone()
    prompt = next(m["content"] for m in json.loads(request)["messages"] if m["role"] == "user")
    lacking = tmp_path / "lacking.zip"
    with zipfile.ZipFile(replayed.archive) as source, zipfile.ZipFile(lacking, "w") as target:
        (tmp_path / "llm.sqlite").write_bytes(source.read("llm.sqlite"))
        with sqlite3.connect(tmp_path / "llm.sqlite") as db:
            db.execute("DELETE FROM calls WHERE key = ?", (key,))
        db.close()
        manifest = json.loads(source.read("manifest.json"))
        manifest["files"]["llm.sqlite"]["sha256"] = environment.sha256_file(tmp_path / "llm.sqlite")
        for name in source.namelist():
            data = {
                "manifest.json": json.dumps(manifest).encode(),
                "llm.sqlite": (tmp_path / "llm.sqlite").read_bytes(),
            }
            target.writestr(name, data[name] if name in data else source.read(name))
    (replayed.second / "outputs" / RUN / "executed" / "05_answer.ipynb").unlink()
    done = make(replayed.second, replayed.env, "all", f"BUNDLE={lacking}")
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "stage 05_answer: 1 model call(s) of model 'scripted-under-test'" in out, out[-3000:]
    assert repr(replay.first_line(prompt)) in out
    assert not replayed.log.exists()
    params = replayed.second / "params" / "scripted.yaml"
    params.write_text(params.read_text() + "seed: 1\n")
    refused = make(replayed.second, replayed.env, "all", f"BUNDLE={replayed.archive}")
    assert (
        refused.returncode != 0
        and "made from other params than" in refused.stderr
        and "seed: 1 here, 0 in the bundle" in refused.stderr
    )
