"""Tests for declinecraft.core.model_terms: prices, rate limits and batch keys of a model entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from declinecraft.core import config, model_terms, registry


def spec(**extra: object) -> registry.ModelSpec:
    return registry.ModelSpec(id="m", backend="openai", served_name="m", extra=dict(extra))


class TestPrices:
    def test_batch_price_defaults_to_half(self) -> None:
        """Without a batch price the batch price is half the price; dollars are per million tokens."""
        prices = model_terms.prices(spec(price_in=2.0, price_out=8))
        assert (prices.batch_input, prices.batch_output, prices.declared) == (1.0, 4.0, True)
        assert prices.usd(1_000_000, 500_000) == pytest.approx(6.0)
        assert prices.usd(1_000_000, 500_000, batch=True) == pytest.approx(3.0)

    def test_declared_batch_price_and_none(self) -> None:
        """A declared batch price is used; an entry without prices costs nothing and says so."""
        assert model_terms.prices(spec(price_in=2, price_out=8, price_batch_in=0.5)).batch_input == 0.5
        free = model_terms.prices(spec())
        assert (free.usd(10**6, 10**6), free.declared) == (0.0, False)


class TestLimits:
    def test_defaults_and_entry(self) -> None:
        """An entry's limits replace the defaults (5 retries, 60 s Retry-After, 900 s per attempt)."""
        assert model_terms.limits(spec()) == model_terms.Limits(None, None, 5, 60.0, 900.0)
        given = model_terms.limits(spec(requests_per_minute=500, tokens_per_minute=2e5, max_retries=2, timeout_s=30))
        assert (given.requests_per_minute, given.tokens_per_minute, given.max_retries, given.timeout_s) == (
            500,
            2e5,
            2,
            30,
        )


class TestBatchTerms:
    def test_provider_limits(self) -> None:
        """The batch size defaults to the provider's limit; batch is off unless the entry says true."""
        assert not model_terms.batch_terms(spec()).enabled
        anthropic = model_terms.batch_terms(spec(batch=True, batch_api="anthropic"))
        assert (anthropic.enabled, anthropic.max_requests) == (True, 100_000)
        assert model_terms.batch_terms(spec(batch=True, batch_max_requests=3)).max_requests == 3


class TestCheckEntry:
    @pytest.mark.parametrize(
        ("key", "value", "match"),
        [
            ("price_in", -1, r"price_in: -1 is out of range \(needs >= 0\)"),
            ("price_out", "cheap", r"price_out: expected a number"),
            ("requests_per_minute", 0, r"requests_per_minute: 0 is out of range \(needs > 0\)"),
            ("max_retries", 2.5, r"max_retries: expected an integer"),
            ("max_retry_after_s", -5, r"max_retry_after_s: -5 is out of range"),
            ("max_concurrency", 0, r"max_concurrency: 0 is out of range \(needs >= 1\)"),
            ("batch", "yes", r"batch: expected true/false"),
            ("batch_api", "gemini", r"batch_api: expected one of openai, anthropic"),
            ("tokens_per_minute", True, r"tokens_per_minute: expected a number"),
        ],
    )
    def test_refused(self, key: str, value: object, match: str) -> None:
        """A price, limit or batch key of the wrong type or sign is named with its model."""
        problems = model_terms.check_entry("m", {key: value})
        assert len(problems) == 1 and problems[0].startswith(f"model 'm': {key}")
        assert re.search(match, problems[0])

    def test_accepted(self) -> None:
        """Well-typed keys pass."""
        entry = {"price_in": 0, "price_out": 1.25, "max_retries": 0, "batch": True, "batch_api": "anthropic"}
        assert model_terms.check_entry("m", entry) == []


class TestCheckParams:
    def test_names_file_and_key(self, project: Path, root: Path) -> None:
        """`make check-params` (config check) refuses a models file with a negative price, naming file and key."""
        models = yaml.safe_load((root / "params" / "models.yaml").read_text())
        first = next(iter(models["models"]))
        models["models"][first]["price_out"] = -3
        (project / "params" / "models.yaml").write_text(yaml.safe_dump(models))
        params = project / "params" / "default.yaml"
        cfg = config.load(params)
        with pytest.raises(config.ConfigError, match=rf"models\.yaml: model '{first}': price_out: -3 is out of range"):
            config.check_models(cfg)
