"""Servers kept up for the whole run: a model the machine can hold is started once per run.

Under Make every stage's recipe sets :data:`RUN_PID_ENV` to the pid of the ``make`` that runs the
stages (the run). A server a stage starts is then handed to a keeper, ``python -m
declinecraft.llm.kept``, that lives until that ``make`` ends: a later stage that asks for the
same model with the same server command (and GPUs) finds it up and sends to it, so a model's
answers, Know2Guess and evidence work are done on one start wherever the machine holds the
run's servers at once. A new server makes room first: the servers kept for the run that this
process is not using are stopped, least recently used first, until what the others take
(:mod:`declinecraft.llm.resources`) and the new one's needs fit the machine, and so is any of
them on a GPU lent to the new one. A stage lends a model the GPUs its kept server holds when
they are free, and other models GPUs no kept server holds while there are any
(:func:`held_gpus`, :class:`~declinecraft.llm.resources.Gate`). An entry that
declares no ``resources:`` takes the whole machine, so on a small machine (the offline run's
llama.cpp servers) only the server in use stays up, and the models run one after another as
before; a later stage reuses the last one when it asks for it first.

Lifecycle: the keeper runs in a session of its own and starts the server as its child, bound by
:mod:`~declinecraft.runtime.parent_death` (a keeper killed with ``kill -9`` takes its server
along). It stops the server and exits when the run's ``make`` ends, however it ends (a pidfd),
on SIGTERM, SIGINT or SIGHUP, or when the server dies (the stage then starts another). No
server outlives the run that started it. Outside Make (Jupyter, a script) nothing is kept: a
stage stops its servers when it ends. Stages run one at a time (``make`` without ``-j``); two at
once could stop each other's kept server, which the stage then restarts
(:class:`~declinecraft.llm.supervisor.LocalServer`).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from declinecraft.core import paths
from declinecraft.core.registry import ModelSpec
from declinecraft.llm import resources, serve
from declinecraft.runtime import stop_signals
from declinecraft.runtime.process_exit import log_tail

#: The environment variable the Makefile sets to the pid of the ``make`` that runs the stages.
RUN_PID_ENV = "DECLINECRAFT_RUN_PID"
#: Seconds a keeper gets to stop its server after SIGTERM before it is killed.
STOP_TIMEOUT_S = 30.0

_lock = threading.Lock()
_in_use: collections.Counter[str] = collections.Counter()
"""State files of the kept servers this process sends to (a count per open connection)."""
_children: dict[int, subprocess.Popen[bytes]] = {}
"""Keepers this process started (reaped through their ``Popen``)."""


def run_pid(environ: Mapping[str, str] | None = None) -> int | None:
    """The run's ``make`` pid when a stage runs under Make and that process lives, else None."""
    raw = (os.environ if environ is None else environ).get(RUN_PID_ENV, "")
    return int(raw) if raw.isdigit() and _alive(int(raw)) else None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    if pid in _children:
        return _children[pid].poll() is None
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def identity(spec: ModelSpec, cache_dir: Path, n_threads: int | None, gpus: Sequence[int] | None) -> str:
    """What makes a running server the one a stage asks for: its command (any port) and GPUs."""
    command = serve.server_command(spec, 0, cache_dir, n_threads)
    return json.dumps([command, None if gpus is None else resources.visible_devices(gpus)])


def held_gpus(cache_dir: Path, pid: int | None) -> dict[str, list[int]]:
    """The GPUs each model's server kept up for run ``pid`` was lent (none outside a run)."""
    if pid is None:
        return {}
    held = {}
    for state_file in (serve.servers_dir(cache_dir) / f"run-{pid}").glob("*.json"):
        state = _read(state_file)
        if state and state.get("gpus") and _alive(state["keeper_pid"]):
            held[state_file.stem] = [int(g) for g in state["gpus"]]
    return held


@dataclasses.dataclass
class _Keeper:
    """Process-like view of a keeper for :class:`~declinecraft.llm.supervisor.LocalServer`."""

    pid: int

    def poll(self) -> int | None:
        return None if _alive(self.pid) else 1


@dataclasses.dataclass
class KeptServer:
    """A server kept for the run: :meth:`stop` ends this process's use, :meth:`evict` the server."""

    spec: ModelSpec
    base_url: str
    process: _Keeper
    state_file: Path
    log_file: Path | None

    def healthy(self) -> bool:
        """True when the server lists its models."""
        return serve.healthy(self.base_url)

    def stop(self, timeout: float = 10.0) -> None:
        """This process no longer sends to it; it stays up for the run's later stages."""
        _release(self.state_file)

    def evict(self) -> None:
        """Stop the keeper and its server."""
        _stop_keeper(self.process.pid)


def start(
    spec: ModelSpec, cache_dir: Path, pid: int, *, n_threads: int | None = None, gpus: Sequence[int] | None = None
) -> KeptServer:
    """The run's server for ``spec``: the one kept up, else a new one (after making room).

    Raises:
        ServeError: the keeper or its server ended while starting, or the server did not become
            healthy in time; the message quotes the end of the keeper's log.
    """
    _prune(serve.servers_dir(cache_dir))
    folder = serve.servers_dir(cache_dir) / f"run-{pid}"
    folder.mkdir(parents=True, exist_ok=True)
    state_file = folder / f"{spec.id}.json"
    key = identity(spec, cache_dir, n_threads, gpus)
    has = resources.machine()
    need = resources.needs(spec, has).machine
    with _locked(folder):
        state = _read(state_file)
        same = state is not None and state.get("key") == key and _alive(state["keeper_pid"])
        if state and same and (not state.get("base_url") or serve.healthy(state["base_url"])):
            keeper = _Keeper(state["keeper_pid"])  # up, or being started by another stage: shared
            os.utime(state_file)  # least recently used last
        else:
            if state:  # stale, or the same model with another command: stopped, as any server is
                _evict(state_file, state)
            lent = None if gpus is None else list(gpus)
            _make_room(folder, need, has, lent)
            request = {"key": key, "needs": dataclasses.asdict(need), "gpus": lent}
            keeper = _Keeper(_spawn(spec, cache_dir, pid, state_file, request, n_threads, gpus).pid)
            with contextlib.suppress(FileExistsError), open(state_file, "x") as placeholder:  # unless it wrote first
                placeholder.write(json.dumps({"keeper_pid": keeper.pid, **request}))
        _in_use[str(state_file)] += 1
    try:
        state = _wait(spec, keeper, state_file)
    except BaseException:
        _release(state_file)
        _stop_keeper(keeper.pid)
        state_file.unlink(missing_ok=True)
        raise
    return KeptServer(spec, state["base_url"], keeper, state_file, _log(state))


def _release(state_file: Path) -> None:
    with _lock:
        if _in_use[str(state_file)] > 0:
            _in_use[str(state_file)] -= 1


def _prune(servers: Path) -> None:
    """Remove the folders of ended runs whose keepers are gone."""
    for folder in servers.glob("run-*"):
        pid = folder.name.removeprefix("run-")
        states = [_read(f) for f in folder.glob("*.json")]
        if pid.isdigit() and not _alive(int(pid)) and not any(s and _alive(s["keeper_pid"]) for s in states):
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """This process's threads and the run's other processes decide one at a time."""
    with _lock, open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _read(state_file: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("keeper_pid"), int) else None


def _log(state: Mapping[str, Any]) -> Path | None:
    return Path(state["log_file"]) if state.get("log_file") else None


def _make_room(folder: Path, need: resources.Resources, has: resources.Resources, gpus: list[int] | None) -> None:
    """Stop kept servers this process does not use, least recently used first, until ``need`` fits;
    and any of them on a GPU lent to the new server (None: every GPU it sees)."""
    kept = []
    for state_file in folder.glob("*.json"):
        state = _read(state_file)
        if state is None or not _alive(state["keeper_pid"]):
            state_file.unlink(missing_ok=True)
        else:
            kept.append((state_file, state))
    used = [s for f, s in kept if _in_use[str(f)] > 0]
    free = sorted((item for item in kept if _in_use[str(item[0])] == 0), key=lambda item: item[0].stat().st_mtime)
    for state_file, state in list(free):
        if _share_a_gpu(need, gpus, resources.Resources(**state["needs"]), state.get("gpus")):
            free.remove((state_file, state))
            _evict(state_file, state)
    taken = [resources.Resources(**s["needs"]) for s in used + [s for _, s in free]]
    while free and not has.fits(sum(taken, need)):
        state_file, state = free.pop(0)
        taken.remove(resources.Resources(**state["needs"]))
        _evict(state_file, state)


def _share_a_gpu(a: resources.Resources, a_gpus: list[int] | None, b: resources.Resources, b_gpus: Any) -> bool:
    """Whether two servers may use one GPU: both take GPUs, and one sees every GPU or they share one."""
    return a.gpus > 0 and b.gpus > 0 and (a_gpus is None or b_gpus is None or bool(set(a_gpus) & set(b_gpus)))


def _evict(state_file: Path, state: Mapping[str, Any]) -> None:
    _stop_keeper(state["keeper_pid"])
    state_file.unlink(missing_ok=True)


def _spawn(
    spec: ModelSpec,
    cache_dir: Path,
    pid: int,
    state_file: Path,
    request: Mapping[str, Any],
    n_threads: int | None,
    gpus: Sequence[int] | None,
) -> subprocess.Popen[bytes]:
    spec_file = state_file.with_suffix(".spec")
    paths.write_text_atomic(spec_file, json.dumps({"spec": dataclasses.asdict(spec), **request}, default=str))
    command = [sys.executable, "-m", "declinecraft.llm.kept", str(spec_file), str(cache_dir), str(pid)]
    command += ["--threads", str(n_threads)] if n_threads is not None else []
    command += ["--gpus", ",".join(map(str, gpus))] if gpus is not None else []
    log_file = state_file.with_suffix(".keeper.log")
    with open(log_file, "wb") as log:
        keeper = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    _children[keeper.pid] = keeper
    return keeper


def _wait(spec: ModelSpec, keeper: _Keeper, state_file: Path) -> dict[str, Any]:
    """Wait until the keeper records its server's URL."""
    log_file = state_file.with_suffix(".keeper.log")
    deadline = time.monotonic() + serve.startup_timeout_of(spec) + 60
    while time.monotonic() < deadline:
        if keeper.poll() is not None:
            raise serve.ServeError(
                f"the keeper of {spec.id!r}'s server ended while starting it; the end of its log {log_file}:\n"
                + log_tail(log_file)
            )
        state = _read(state_file)
        if state and state["keeper_pid"] == keeper.pid and state.get("base_url"):
            return state
        time.sleep(0.25)
    raise serve.ServeError(f"server for {spec.id!r} not healthy in time; the keeper's log {log_file}")


def _stop_keeper(pid: int) -> None:
    """SIGTERM a keeper (it stops its server) and wait for it; SIGKILL past the timeout."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # its server dies with it (parent-death signal)
        while _alive(pid) and pid in _children:
            time.sleep(0.1)
    _children.pop(pid, None)


def spec_from_json(raw: Mapping[str, Any]) -> ModelSpec:
    """A registry entry as :func:`dataclasses.asdict` gave it."""
    return ModelSpec(**{**raw, "base_urls": tuple(raw["base_urls"]), "roles": tuple(raw["roles"])})


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.llm.kept SPEC_FILE CACHE_DIR RUN_PID [--threads N] [--gpus 0,1]``:
    serve the model until the run ends, a stop signal arrives or the server dies."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.llm.kept")
    parser.add_argument("spec_file", type=Path)
    parser.add_argument("cache_dir", type=Path)
    parser.add_argument("run_pid", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--gpus")
    args = parser.parse_args(argv)
    request = json.loads(args.spec_file.read_text())
    spec = spec_from_json(request["spec"])
    state_file = args.spec_file.with_suffix(".json")
    gpus = None if args.gpus is None else tuple(int(g) for g in args.gpus.split(",") if g)
    try:
        run = os.pidfd_open(args.run_pid)
    except ProcessLookupError:
        return 0  # the run already ended
    with stop_signals.stop_on_signals():
        server = None
        try:
            server = serve.start(spec, args.cache_dir, reuse=False, n_threads=args.threads, gpus=gpus)
            state = {
                "keeper_pid": os.getpid(),
                **{k: request[k] for k in ("key", "needs", "gpus")},
                "base_url": server.base_url,
                "log_file": str(server.log_file),
                "server_pid": server.process.pid if server.process else None,
            }
            paths.write_text_atomic(state_file, json.dumps(state))
            print(f"keeping {spec.id} at {server.base_url} until run {args.run_pid} ends", flush=True)
            while not select.select([run], [], [], 1.0)[0]:
                if server.process is not None and server.process.poll() is not None:
                    print(f"the server of {spec.id} ended; the end of its log:\n{log_tail(server.log_file)}")
                    return 1
        except stop_signals.Stopped as stop:
            print(f"{stop.name}: stopping {spec.id}", flush=True)
        finally:
            if server is not None:
                server.stop()
            left = _read(state_file)
            if left and left["keeper_pid"] == os.getpid():
                state_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
