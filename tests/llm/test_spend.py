"""Tests for declinecraft.llm.spend: the run's budget against the fake OpenAI-compatible server
(stops before a cap, resumes from the cache when it is raised) and the spend it records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.core import model_terms, registry
from declinecraft.llm import cache, spend
from declinecraft.llm.cache import Cache
from declinecraft.llm.client import Budget, BudgetExceeded, Client, Request, RetryPolicy, client_for, run_batch
from tests.support import fake_openai

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.05, timeout_s=5.0)
KEY_ENV = "DECLINECRAFT_TEST_SPEND_KEY"


def hosted(server: fake_openai.FakeServer, **extra: object) -> registry.ModelSpec:
    """A hosted entry at the fake server, one call at a time (so holds and spend come in order)."""
    return registry.ModelSpec(
        id="hosted",
        backend="openai",
        served_name="hosted-model",
        base_url=server.base_url,
        api_key_env=KEY_ENV,
        max_concurrency=1,
        extra={"price_in": 1.0, "price_out": 2.0, **extra},
    )


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Cache]:
    with cache.open_cache(tmp_path) as db:
        yield db


def client(server: fake_openai.FakeServer, store: Cache, budget: Budget, **extra: object) -> Client:
    return client_for(hosted(server, **extra), store, retry=FAST, environ={KEY_ENV: "k"}, budget=budget)


def texts(n: int, tag: str) -> list[Request]:
    return [Request.from_text(f"{tag}{i:02d}", max_tokens=16) for i in range(n)]


def sent(server: fake_openai.FakeServer, tag: str) -> int:
    return sum(n for text, n in server.stats()["by_text"].items() if text.startswith(tag))


class TestBudget:
    def test_stops_before_cap_then_resumes(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A token cap stops the run before a call could pass it, saying what was spent and what is left;
        raised, the run goes on: the answered calls come from the cache, only the rest are sent."""
        cap = 60
        with pytest.raises(BudgetExceeded, match=r"llm\.budget_tokens: the next call .* would pass the budget") as info:
            run_batch(client(server, store, Budget(store, "r", usd=None, tokens=cap)), texts(12, "cap"), progress=False)
        message = str(info.value)
        assert "tokens spent of 60" in message and "left" in message and "cost nothing" in message
        first = sent(server, "cap")
        assert 0 < first < 12 and store.count() == first
        spent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in store.spend_totals("r"))
        assert spent <= cap
        results = run_batch(client(server, store, Budget(store, "r", usd=None, tokens=1000)), texts(12, "cap"))
        assert all(r.ok for r in results) and sum(r.cached for r in results) == first
        assert sent(server, "cap") == 12  # nothing sent twice
        assert sum(r["calls"] for r in store.spend_totals("r")) == 12

    def test_dollar_cap(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A dollar cap counts each call at the entry's price and is never passed."""
        prices = model_terms.prices(hosted(server))
        one = prices.usd(spend.prompt_tokens_bound({"messages": [{"content": "usd00"}]}), 16)
        cap = 2.5 * one
        with pytest.raises(BudgetExceeded, match=r"llm\.budget_usd"):
            run_batch(client(server, store, Budget(store, "d", usd=cap, tokens=None)), texts(20, "usd"), progress=False)
        (row,) = store.spend_totals("d")
        assert 0 < row["calls"] < 20 and row["usd"] <= cap and not row["batch"]

    def test_zero_sends_nothing(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A budget of 0 sends nothing and says so; calls already in the cache still come back."""
        run_batch(client(server, store, Budget(store, "z", usd=None, tokens=None)), texts(2, "zero"), progress=False)
        before = server.stats()["requests"]
        results = run_batch(client(server, store, Budget(store, "z", usd=0.0, tokens=None)), texts(2, "zero"))
        assert all(r.cached for r in results)
        with pytest.raises(BudgetExceeded, match=r"llm\.budget_usd is 0: nothing is sent"):
            run_batch(client(server, store, Budget(store, "z", usd=0.0, tokens=None)), texts(3, "zero"), progress=False)
        assert server.stats()["requests"] == before

    def test_hosted_without_price_refused(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """A dollar cap cannot be kept for a hosted entry without prices: refused before sending."""
        spec = registry.ModelSpec(
            id="free", backend="openai", served_name="m", base_url=server.base_url, api_key_env=KEY_ENV
        )
        c = client_for(spec, store, retry=FAST, environ={KEY_ENV: "k"}, budget=Budget(store, "p", usd=5.0, tokens=None))
        with pytest.raises(BudgetExceeded, match=r"no price_in / price_out"):
            run_batch(c, texts(1, "noprice"), progress=False)
        assert sent(server, "noprice") == 0

    def test_spend_persists_per_run(self, server: fake_openai.FakeServer, store: Cache) -> None:
        """Spend is stored per run and read back by the next budget of that run (not of another)."""
        run_batch(client(server, store, Budget(store, "a", usd=None, tokens=None)), texts(3, "persist"))
        again = Budget(store, "a", usd=None, tokens=None)
        (row,) = store.spend_totals("a")
        assert again.spent_tokens == row["prompt_tokens"] + row["completion_tokens"] > 0
        assert Budget(store, "b", usd=None, tokens=None).spent_tokens == 0


class TestBounds:
    def test_prompt_bound_overestimates(self) -> None:
        """The prompt hold counts a token per 3 characters plus 8 per message."""
        assert spend.prompt_tokens_bound({"messages": [{"content": "x" * 30}, {"content": "y"}]}) == 11 + 16
        assert spend.output_tokens_bound({"max_completion_tokens": 7}) == 7
