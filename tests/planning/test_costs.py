"""Tests for declinecraft.planning.costs: machines, GPU counts, throughput, dollars."""

from __future__ import annotations

import pytest

from declinecraft.core.registry import ModelSpec
from declinecraft.planning import costs

H100 = costs.Machine.parse("8xH100-80GB")


def spec(backend: str = "vllm", streams: int | None = None, **extra: object) -> ModelSpec:
    """A 70B FP8 entry of ``backend`` with ``extra`` settings."""
    return ModelSpec(
        id="m",
        backend=backend,
        served_name="m",
        params_total_b=70,
        params_active_b=70,
        precision="FP8",
        max_concurrency=streams,
        extra=extra,
    )


class TestMachine:
    def test_parse(self) -> None:
        """<n>x<name>-<memory>GB reads as count, name and memory."""
        assert (H100.gpus, H100.name, H100.memory_gb, str(H100)) == (8, "H100", 80.0, "8xH100-80GB")


class TestGpusNeeded:
    def test_from_weights(self) -> None:
        """A 70B FP8 model (70 GB, plus 25 %) needs two 80 GB GPUs at 0.9 utilisation."""
        assert costs.gpus_needed(spec(), H100) == 2

    def test_declared_wins(self) -> None:
        """An entry's tensor_parallel_size is taken as it is."""
        assert costs.gpus_needed(spec(tensor_parallel_size=4), H100) == 4


class TestMeasured:
    def test_recovers_rates(self) -> None:
        """Latencies of prompt/100 + completion/10 seconds give 100 and 10 tokens per second."""
        usage = [(p, c, p / 100 + c / 10) for p in (100, 300, 900) for c in (5, 50, 200, 400, 20, 80, 160)]
        rate = costs.measured(spec("llamacpp", streams=1), usage)
        assert rate is not None and (rate.prefill, rate.decode) == (pytest.approx(100), pytest.approx(10))

    def test_too_few(self) -> None:
        """Fewer than MIN_MEASURED calls measure nothing; the rule is used."""
        assert costs.measured(spec(), [(10, 10, 1.0)] * 3) is None
        assert costs.throughput(spec(), H100, [(10, 10, 1.0)] * 3).source.startswith("rule")

    def test_declared_first(self) -> None:
        """An entry's declared throughput wins over a measured one."""
        rate = costs.throughput(spec(decode_tokens_per_s=500), H100, [(10, 10, 1.0)] * 50)
        assert (rate.decode, rate.prefill, rate.source) == (500, 5000, "declared")


class TestDollars:
    def test_batch_discount(self) -> None:
        """A million tokens each way at 2 and 8 USD: 10 plain, 5 at the default batch discount,
        and the batch price where batch is on."""
        priced = spec("openai", price_in=2.0, price_out=8.0)
        got = costs.dollars(priced, 1e6, 1e6)
        assert (got.plain, got.batch, got.at(priced)) == (10.0, 5.0, 10.0)
        assert got.at(spec("openai", batch=True)) == 5.0

    def test_no_price(self) -> None:
        """An entry without prices costs None (unknown), never 0."""
        assert costs.dollars(spec("openai"), 1e6, 1e6).plain is None
