"""Tests for declinecraft.core.retrieval_device: where the embedder and the reranker run."""

from __future__ import annotations

import sys

import pytest

from declinecraft.core.retrieval_device import RetrievalDevice, gpu_of


@pytest.fixture()
def gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Torch sees two GPUs (none is touched: only the device names are computed)."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)


class TestGpuOf:
    @pytest.mark.parametrize(("setting", "gpu"), [("auto", None), ("cpu", None), ("cuda:0", 0), ("cuda:7", 7)])
    def test_settings(self, setting: str, gpu: int | None) -> None:
        """``cuda:N`` names GPU N; ``auto`` and ``cpu`` name none."""
        assert gpu_of(setting) == gpu

    @pytest.mark.parametrize("setting", ["cuda", "gpu", "cuda:-1", "cuda:x", "CPU", "cuda:1,2", ""])
    def test_bad(self, setting: str) -> None:
        """Anything else is refused, listing the settings."""
        with pytest.raises(ValueError, match=r"retrieval_device must be auto, cpu or cuda:N"):
            gpu_of(setting)

    def test_bad_when_made(self) -> None:
        """A bad setting is refused when the device is made, before any model loads."""
        with pytest.raises(ValueError, match="'cuda'"):
            RetrievalDevice("cuda")


class TestTorch:
    @pytest.mark.usefixtures("gpus")
    @pytest.mark.parametrize(
        ("setting", "servers", "device"),
        [
            ("auto", True, "cpu"),  # a vLLM server may be on any GPU
            ("auto", False, "cuda"),  # the index stage: no server
            ("cpu", False, "cpu"),
            ("cuda:1", True, "cuda:1"),
            ("cuda:1", False, "cuda:1"),
        ],
    )
    def test_with_gpus(self, setting: str, servers: bool, device: str) -> None:
        """With GPUs, ``auto`` is the CPU in a server stage and the GPU elsewhere; a named GPU is kept."""
        assert RetrievalDevice(setting, servers=servers).torch() == device

    @pytest.mark.usefixtures("gpus")
    def test_missing_gpu(self) -> None:
        """A GPU torch does not see is an error naming the setting."""
        with pytest.raises(ValueError, match=r"'cuda:2' but torch sees 2 GPU"):
            RetrievalDevice("cuda:2").torch()

    def test_no_gpu(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without a GPU ``auto`` is the CPU everywhere (the default run)."""
        torch = pytest.importorskip("torch")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        assert {RetrievalDevice(servers=s).torch() for s in (True, False)} == {"cpu"}

    def test_no_torch(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without torch ``auto`` is the CPU and a named GPU is an error saying why."""
        monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
        assert RetrievalDevice().torch() == "cpu"
        with pytest.raises(ValueError, match="torch is not installed"):
            RetrievalDevice("cuda:0").torch()
