"""What a model's server needs (GPUs, cores, memory) against what the machine has, and the gate
that lets as many models run at once as fit.

A registry entry may declare ``resources: {gpus: 2, cores: 8, memory_gb: 80}``: what the server the
run starts for it takes while it is up. Fields left out are 0. An entry that declares nothing
takes the whole machine when the run starts its server (llama.cpp and vLLM use every core, or the
GPUs, they are given), so two such servers never run at once: on a machine with two cores the
offline models run one after another, in their order, as they always did. A model the run does
not start (a hosted API, an external ``base_url``/``base_urls``) takes nothing of the machine; it
holds only its endpoint, so two models behind one URL still take turns, each at its own
concurrency, and every separate endpoint is busy at once.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from declinecraft.core.registry import ModelSpec, RegistryError

#: The fields of an entry's ``resources:`` mapping.
FIELDS = ("gpus", "cores", "memory_gb")


class ResourceError(RegistryError):
    """An entry declares more than the machine has, or its ``resources:`` cannot be read; raised
    before any server starts, naming the model."""


@dataclass(frozen=True)
class Resources:
    """Amounts of the machine: what it has, or what one model's server takes."""

    gpus: int = 0
    """Whole GPUs (CUDA devices)."""
    cores: float = 0.0
    """CPU cores."""
    memory_gb: float = 0.0
    """Main memory in GB (10^9 bytes)."""

    def fits(self, other: Resources) -> bool:
        """Whether ``other`` fits into these amounts."""
        return other.gpus <= self.gpus and other.cores <= self.cores and other.memory_gb <= self.memory_gb

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.gpus + other.gpus, self.cores + other.cores, self.memory_gb + other.memory_gb)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.gpus - other.gpus, self.cores - other.cores, self.memory_gb - other.memory_gb)


@dataclass(frozen=True)
class Needs:
    """What running one model takes: a share of the machine, and its endpoint while it runs."""

    model: str
    machine: Resources
    endpoint: str | None
    """The external endpoint it sends to (its base URLs), held by one model at a time; None for
    a server the run starts (its own endpoint)."""
    declared: bool
    """Whether the entry declared ``resources:`` (else a local server takes the whole machine)."""


def machine(environ: Mapping[str, str] | None = None) -> Resources:
    """What this machine has: the GPUs visible (``CUDA_VISIBLE_DEVICES`` when set, else the
    ``/dev/nvidia<N>`` devices), the cores this process may use, and the main memory."""
    env = os.environ if environ is None else environ
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        gpus = len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    else:
        gpus = len([p for p in Path("/dev").glob("nvidia*") if p.name[len("nvidia") :].isdigit()])
    memory_gb = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gb = int(line.split()[1]) * 1024 / 1e9
                break
    except OSError:
        pass
    return Resources(gpus=gpus, cores=float(len(os.sched_getaffinity(0))), memory_gb=memory_gb)


def for_servers(has: Resources, kept: int | None) -> tuple[Resources, tuple[int, ...]]:
    """What the servers the run starts may take of a machine that ``has`` so much, and the GPU
    indices they may be lent: every GPU but ``kept``, the one ``llm.retrieval_device: cuda:N``
    keeps for the embedder and the reranker (None: every GPU).

    Raises:
        ResourceError: ``kept`` is not one of the machine's GPUs.
    """
    if kept is None:
        return has, tuple(range(has.gpus))
    if kept >= has.gpus:
        raise ResourceError(
            f"llm.retrieval_device is 'cuda:{kept}' but this machine has {has.gpus} GPU(s) "
            "(CUDA_VISIBLE_DEVICES or /dev/nvidia*); nothing was started"
        )
    lendable = tuple(i for i in range(has.gpus) if i != kept)
    return dataclasses.replace(has, gpus=len(lendable)), lendable


def visible_devices(indices: Sequence[int], environ: Mapping[str, str] | None = None) -> str:
    """``CUDA_VISIBLE_DEVICES`` for a server lent the GPUs ``indices`` (0-based among the GPUs this
    process sees: through its own ``CUDA_VISIBLE_DEVICES`` when that is set)."""
    env = os.environ if environ is None else environ
    seen = [d.strip() for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return ",".join(seen[i] if i < len(seen) else str(i) for i in indices)


def declared(spec: ModelSpec) -> Resources | None:
    """An entry's ``resources:`` (fields left out are 0), or None when it declares none.

    Raises:
        ResourceError: not a mapping, an unknown field, or an amount that is not a number >= 0
            (GPUs: a whole number).
    """
    raw: Any = spec.extra.get("resources")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ResourceError(f"model {spec.id!r}: resources must be a mapping of {', '.join(FIELDS)}, got {raw!r}")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise ResourceError(f"model {spec.id!r}: resources has unknown field(s) {unknown} (known: {', '.join(FIELDS)})")
    for name, value in raw.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or value < 0 or (name == "gpus" and not float(value).is_integer()):
            what = "a whole number >= 0" if name == "gpus" else "a number >= 0"
            raise ResourceError(f"model {spec.id!r}: resources.{name} must be {what}, got {value!r}")
    return Resources(int(raw.get("gpus", 0)), float(raw.get("cores", 0)), float(raw.get("memory_gb", 0)))


def starts_server(spec: ModelSpec) -> bool:
    """Whether the run starts this model's server itself (local backend, no base URL given)."""
    return spec.is_local and not spec.base_url and not spec.base_urls


def needs(spec: ModelSpec, has: Resources) -> Needs:
    """What running ``spec`` takes on a machine that ``has`` so much.

    Raises:
        ResourceError: the entry declares more GPUs, cores or memory than the machine has
            (nothing has started yet: the message says so).
    """
    wants = declared(spec)
    if wants is not None and not has.fits(wants):
        short = [
            f"{getattr(wants, name):g} {label} (the machine has {getattr(has, name):g})"
            for name, label in (("gpus", "GPUs"), ("cores", "cores"), ("memory_gb", "GB of memory"))
            if getattr(wants, name) > getattr(has, name)
        ]
        raise ResourceError(
            f"model {spec.id!r}: its entry declares {', '.join(short)} in resources; this machine cannot "
            "run it. Nothing was started: run it on a larger machine, or lower its resources."
        )
    if not starts_server(spec):
        urls = spec.base_urls or ((spec.base_url,) if spec.base_url else ())
        endpoint = ",".join(sorted(u.rstrip("/") for u in urls)) or f"{spec.backend}:{spec.served_name}"
        return Needs(spec.id, Resources(), endpoint, wants is not None)
    return Needs(spec.id, has if wants is None else wants, None, wants is not None)


def can_overlap(needs: Sequence[Needs], has: Resources) -> bool:
    """Whether any two of ``needs`` could run at once on a machine that ``has`` so much."""
    for i, a in enumerate(needs):
        for b in needs[i + 1 :]:
            if (a.endpoint is None or a.endpoint != b.endpoint) and has.fits(a.machine + b.machine):
                return True
    return False


class Gate:
    """Admits models while what they need fits in what is free; an earlier model (in the order
    given) that fits goes before a later one, so who waits for whom does not depend on threads.
    ``gpus`` are the GPU indices it lends (default: all of ``has``; :func:`for_servers` leaves out
    the retrieval models' GPU). ``held`` maps a model to the GPUs its server kept up for the run
    holds (:func:`declinecraft.llm.kept.held_gpus`): that model gets them again when they are free,
    so its server is reused, and other models get GPUs no kept server holds while there are any."""

    def __init__(
        self,
        has: Resources,
        order: Sequence[str],
        gpus: Sequence[int] | None = None,
        held: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        if gpus is not None and len(gpus) != has.gpus:
            raise ValueError(f"Gate: {has.gpus} GPUs but {len(gpus)} indices to lend ({list(gpus)})")
        self.held = {model: tuple(sorted(g)) for model, g in (held or {}).items()}
        self.free = has
        self.rank = {model: i for i, model in enumerate(order)}
        self.gpus_free = list(range(has.gpus)) if gpus is None else sorted(gpus)
        self.endpoints: set[str] = set()
        self.waiting: dict[str, Needs] = {}
        self._cond = threading.Condition()

    def _rank(self, model: str) -> int:
        return self.rank.get(model, len(self.rank))  # a model not in the order comes last

    def _fits(self, need: Needs) -> bool:
        return self.free.fits(need.machine) and (need.endpoint is None or need.endpoint not in self.endpoints)

    def acquire(self, need: Needs) -> tuple[int, ...]:
        """Wait until ``need`` fits and no earlier waiting model does; take it. Returns the GPU
        indices lent to the model: those its kept server holds when they are all free, else the
        lowest free ones that no kept server holds, then the lowest others."""
        with self._cond:
            self.waiting[need.model] = need
            try:
                self._cond.wait_for(
                    lambda: (
                        self._fits(need)
                        and not any(
                            self._rank(m) < self._rank(need.model) and self._fits(n) for m, n in self.waiting.items()
                        )
                    )
                )
            finally:
                del self.waiting[need.model]
                self._cond.notify_all()
            self.free -= need.machine
            if need.endpoint is not None:
                self.endpoints.add(need.endpoint)
            gpus = self._choose(need)
            self.gpus_free = [g for g in self.gpus_free if g not in gpus]
            return gpus

    def _choose(self, need: Needs) -> tuple[int, ...]:
        own = self.held.get(need.model, ())
        if own and len(own) == need.machine.gpus and set(own) <= set(self.gpus_free):
            return own
        others = {g for model, gpus in self.held.items() if model != need.model for g in gpus}
        return tuple(sorted(sorted(self.gpus_free, key=lambda g: (g in others, g))[: need.machine.gpus]))

    def release(self, need: Needs, gpus: Sequence[int]) -> None:
        """Give back what :meth:`acquire` took."""
        with self._cond:
            self.free += need.machine
            self.endpoints.discard(need.endpoint or "")
            self.gpus_free = sorted([*self.gpus_free, *gpus])
            self._cond.notify_all()
