"""Tests for declinecraft.llm.resources: what each model needs, what fits, and the gate."""

from __future__ import annotations

import threading
import time

import pytest

from declinecraft.core.registry import ModelSpec
from declinecraft.llm import resources
from declinecraft.llm.resources import Needs, ResourceError, Resources

BIG = Resources(gpus=8, cores=64.0, memory_gb=512.0)
SMALL = Resources(gpus=0, cores=2.0, memory_gb=8.0)


def local(model: str = "m", backend: str = "llamacpp", **extra: object) -> ModelSpec:
    """A model whose server the run starts (``extra`` as a models.yaml entry's further fields)."""
    return ModelSpec(id=model, backend=backend, served_name=model, extra=dict(extra))


def hosted(model: str, url: str) -> ModelSpec:
    """A model behind an external base URL."""
    return ModelSpec(id=model, backend="openai", served_name=model, base_url=url)


class TestDeclared:
    def test_none(self) -> None:
        """An entry without resources declares nothing."""
        assert resources.declared(local()) is None

    def test_fields_default_to_zero(self) -> None:
        """Fields left out are 0."""
        assert resources.declared(local(resources={"gpus": 2})) == Resources(gpus=2)

    @pytest.mark.parametrize(
        ("raw", "match"),
        [
            ([1], "resources must be a mapping"),
            ({"gpu": 1}, r"resources has unknown field\(s\) \['gpu'\]"),
            ({"gpus": 1.5}, "resources.gpus must be a whole number"),
            ({"cores": -1}, "resources.cores must be a number >= 0"),
            ({"memory_gb": "lots"}, "resources.memory_gb must be a number >= 0"),
        ],
    )
    def test_bad(self, raw: object, match: str) -> None:
        """A resources entry that cannot be read is an error naming the model."""
        with pytest.raises(ResourceError, match=rf"model 'm': {match}"):
            resources.declared(local(resources=raw))


class TestNeeds:
    def test_too_many_gpus_refused(self) -> None:
        """An entry declaring more GPUs than the machine has is refused, saying nothing started."""
        with pytest.raises(ResourceError, match=r"model 'm'.*8 GPUs \(the machine has 1\).*Nothing was started"):
            resources.needs(local(backend="vllm", resources={"gpus": 8}), Resources(gpus=1, cores=8, memory_gb=64))

    def test_undeclared_local_takes_machine(self) -> None:
        """A server the run starts, with nothing declared, takes the whole machine."""
        assert resources.needs(local(), SMALL).machine == SMALL

    def test_external_takes_endpoint_only(self) -> None:
        """A model behind a base URL takes nothing of the machine, only its endpoint."""
        need = resources.needs(hosted("h", "http://a/v1/"), SMALL)
        assert (need.machine, need.endpoint) == (Resources(), "http://a/v1")


class TestCanOverlap:
    def test_two_undeclared_local(self) -> None:
        """Two llama.cpp servers declaring nothing never run together (the offline run's order)."""
        needs = [resources.needs(local(m), SMALL) for m in ("a", "b")]
        assert not resources.can_overlap(needs, SMALL)

    def test_separate_endpoints(self) -> None:
        """Two models behind separate URLs run together; two behind one URL take turns."""
        apart = [resources.needs(hosted("a", "http://a/v1"), SMALL), resources.needs(hosted("b", "http://b/v1"), SMALL)]
        shared = [
            resources.needs(hosted("a", "http://a/v1"), SMALL),
            resources.needs(hosted("b", "http://a/v1"), SMALL),
        ]
        assert resources.can_overlap(apart, SMALL) and not resources.can_overlap(shared, SMALL)

    def test_declared_servers_that_fit(self) -> None:
        """Servers whose declared needs fit side by side run together; ones that do not, in turn."""
        two = [resources.needs(local(m, "vllm", resources={"gpus": 4}), BIG) for m in ("a", "b")]
        big = [resources.needs(local(m, "vllm", resources={"gpus": 5}), BIG) for m in ("a", "b")]
        assert resources.can_overlap(two, BIG) and not resources.can_overlap(big, BIG)

    def test_local_beside_hosted(self) -> None:
        """A hosted model runs beside a local server that takes the whole machine."""
        needs = [resources.needs(local("a"), SMALL), resources.needs(hosted("h", "http://h/v1"), SMALL)]
        assert resources.can_overlap(needs, SMALL)


class TestMachine:
    @pytest.mark.parametrize(("visible", "gpus"), [("0,1,3", 3), ("", 0), ("-1", 0)])
    def test_visible_devices(self, visible: str, gpus: int) -> None:
        """CUDA_VISIBLE_DEVICES, when set, says how many GPUs there are."""
        assert resources.machine({"CUDA_VISIBLE_DEVICES": visible}).gpus == gpus

    def test_cores_and_memory(self) -> None:
        """The machine has at least one core and some memory."""
        has = resources.machine({})
        assert has.cores >= 1 and has.memory_gb > 0


class TestGate:
    def test_gpus_lent_and_returned(self) -> None:
        """Each admitted model gets its own GPU indices, given back on release."""
        gate = resources.Gate(Resources(gpus=4, cores=8), ["a", "b"])
        a = Needs("a", Resources(gpus=2), None, True)
        b = Needs("b", Resources(gpus=2), None, True)
        got_a, got_b = gate.acquire(a), gate.acquire(b)
        assert (got_a, got_b) == ((0, 1), (2, 3))
        gate.release(a, got_a)
        assert gate.acquire(Needs("c", Resources(gpus=1), None, True)) == (0,)

    def test_held_gpus_lent_again(self) -> None:
        """A model whose server the run keeps on GPUs 2-3 gets them again (its server is reused);
        another model gets GPUs no kept server holds while there are any, then the lowest others."""
        gate = resources.Gate(Resources(gpus=6, cores=8), ["a", "b", "c"], held={"a": [2, 3], "z": [0, 1]})
        assert gate.acquire(Needs("a", Resources(gpus=2), None, True)) == (2, 3)
        assert gate.acquire(Needs("b", Resources(gpus=2), None, True)) == (4, 5)
        assert gate.acquire(Needs("c", Resources(gpus=1), None, True)) == (0,)

    def test_held_gpus_busy(self) -> None:
        """When a kept server's GPUs are lent already, its model gets the lowest free ones."""
        gate = resources.Gate(Resources(gpus=4, cores=8), ["b", "a"], held={"a": [0, 1]})
        assert gate.acquire(Needs("b", Resources(gpus=3), None, True)) == (0, 2, 3)
        assert gate.acquire(Needs("a", Resources(gpus=1), None, True)) == (1,)

    def test_earlier_goes_first(self) -> None:
        """When room frees, the earliest waiting model (in the order given) is admitted first."""
        whole = Resources(cores=2)
        gate = resources.Gate(whole, ["a", "b", "c"])
        needs = {m: Needs(m, whole, None, False) for m in "abc"}
        held = gate.acquire(needs["a"])
        admitted: list[str] = []

        def wait(model: str) -> None:
            gate.acquire(needs[model])
            admitted.append(model)
            gate.release(needs[model], ())

        threads = [threading.Thread(target=wait, args=(m,)) for m in ("c", "b")]
        for thread in threads:
            thread.start()
        while len(gate.waiting) < 2:  # both wait before room frees
            time.sleep(0.01)
        gate.release(needs["a"], held)
        for thread in threads:
            thread.join(timeout=10)
        assert admitted == ["b", "c"]


class TestVisibleDevices:
    @pytest.mark.parametrize(("environ", "expected"), [({}, "0,2"), ({"CUDA_VISIBLE_DEVICES": "4,5,6"}, "4,6")])
    def test_indices_to_ids(self, environ: dict[str, str], expected: str) -> None:
        """Lent GPU indices name the devices this process sees (its own CUDA_VISIBLE_DEVICES)."""
        assert resources.visible_devices([0, 2], environ) == expected


class TestForServers:
    def test_kept_gpu_left_out(self) -> None:
        """The retrieval models' GPU is not among the servers' GPUs, and the count drops by one."""
        has, lendable = resources.for_servers(Resources(gpus=4, cores=8), 1)
        assert (has.gpus, lendable) == (3, (0, 2, 3))

    def test_none_keeps_all(self) -> None:
        """With no GPU kept the machine is unchanged."""
        assert resources.for_servers(BIG, None) == (BIG, tuple(range(8)))

    def test_missing_gpu_refused(self) -> None:
        """Keeping a GPU the machine lacks is an error naming the setting."""
        with pytest.raises(ResourceError, match=r"retrieval_device is 'cuda:2' but this machine has 2 GPU"):
            resources.for_servers(Resources(gpus=2), 2)

    def test_gate_never_lends_kept(self) -> None:
        """A gate over the servers' share lends every GPU but the kept one."""
        has, lendable = resources.for_servers(Resources(gpus=3, cores=8), 0)
        gate = resources.Gate(has, ["a", "b"], lendable)
        got = [gate.acquire(Needs(m, Resources(gpus=1), None, True)) for m in "ab"]
        assert got == [(1,), (2,)] and gate.free.gpus == 0
