"""Tests for declinecraft.llm.batch against a fake provider of both batch APIs (tests/support/fake_batches.py):
results folded into the cache, partial results, expired lines, a rejected batch, a kill while polling."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from declinecraft.core import model_terms, registry
from declinecraft.llm import batch, cache, transport
from declinecraft.llm.cache import Cache
from declinecraft.llm.client import Budget, BudgetExceeded, Client, LLMError, Request, client_for, run_batch
from tests.support import fake_batches

KEY_ENV = "DECLINECRAFT_TEST_BATCH_KEY"
ENV = {KEY_ENV: "sk-batch-test"}


@pytest.fixture()
def fake() -> Iterator[fake_batches.FakeBatches]:
    server = fake_batches.FakeBatches(polls=2)
    yield server
    server.stop()


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Cache]:
    with cache.open_cache(tmp_path) as db:
        yield db


def spec(fake: fake_batches.FakeBatches, api: str = "openai", **extra: object) -> registry.ModelSpec:
    terms = {"batch": True, "batch_api": api, "batch_poll_s": 0, "price_in": 2.0, "price_out": 8.0, **extra}
    return registry.ModelSpec(
        id=f"hosted-{api}",
        backend="openai",
        served_name="hosted-model",
        base_url=fake.base_url,
        api_key_env=KEY_ENV,
        extra=terms,
    )


def requests(*texts: str) -> list[Request]:
    return [Request.from_text(t, max_tokens=16) for t in texts]


def client(fake: fake_batches.FakeBatches, store: Cache, api: str = "openai", **options: object) -> Client:
    budget = options.pop("budget", None)
    return client_for(spec(fake, api, **options), store, environ=ENV, budget=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
class TestBatcher:
    def test_partial_results_folded_into_cache(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """One batch carries the uncached calls; an answered line is stored ok under its call's key,
        an errored and an expired line are stored as failed calls with the reason."""
        c = client(fake, store, api)
        results = run_batch(c, requests("alpha", "beta [[batch error]]", "gamma [[batch expire]]"), progress=False)
        assert [r.ok for r in results] == [True, False, False]
        assert results[0].text == "echo: alpha" and results[0].prompt_tokens
        assert "expire" in (results[2].error or "") or "batch_expired" in (results[2].error or "")
        assert {r.key for r in results} == {rec.key for rec in store.records()}
        assert (fake.counts["batches"], fake.counts["lines"]) == (1, 3)
        assert list(batch.batches_dir(store).glob("*.json")) == []  # collected: nothing left waiting
        if api == "anthropic":
            assert results[0].thinking == "hm"
            assert any(h.get("x-api-key") == ENV[KEY_ENV] and h.get("anthropic-version") for h in fake.headers)
        else:
            assert any(h.get("authorization") == f"Bearer {ENV[KEY_ENV]}" for h in fake.headers)

    def test_failures_retried_by_next_run(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """A rerun answers the ok call from the cache and re-submits only the failed lines."""
        texts = ("alpha", "beta [[batch error]]")
        run_batch(client(fake, store, api), requests(*texts), progress=False)
        again = run_batch(client(fake, store, api), requests(*texts), progress=False, retry_failures=True)
        assert again[0].cached and not again[1].cached
        assert (fake.counts["batches"], fake.counts["lines"]) == (2, 3)

    def test_kill_while_polling_then_collected(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """A poller cancelled while the batch runs leaves its id on disk; the next run collects that
        batch instead of submitting (and paying for) the calls again."""
        fake.hold = True
        first = client(fake, store, api)

        async def killed() -> None:
            task = asyncio.ensure_future(first.arun(requests("one", "two"), progress=False))
            while (
                not fake.counts["batches"]
                or fake.batches[f"{'msgbatch' if api == 'anthropic' else 'batch'}_1"]["looks"] < 2
            ):
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        transport.run_sync(killed())
        waiting = list(batch.batches_dir(store).glob("*.json"))
        assert len(waiting) == 1 and store.count() == 0
        fake.hold = False
        results = run_batch(client(fake, store, api), requests("two", "one"), progress=False)
        assert [r.text for r in results] == ["echo: two", "echo: one"] and all(not r.cached for r in results)
        assert fake.counts["batches"] == 1 and list(batch.batches_dir(store).glob("*.json")) == []

    def test_rejected_batch_names_line(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """A batch the provider rejects names the line and the reason."""
        c = client(fake, store, api)
        if api == "anthropic":
            with pytest.raises(LLMError, match=r"rejected a batch.*requests\.1: fake rejection"):
                run_batch(c, requests("fine", "bad [[batch reject]]"), progress=False)
            return
        results = run_batch(c, requests("fine", "bad [[batch reject]]"), progress=False)
        assert not any(r.ok for r in results)
        assert all("line 2: invalid_request fake rejection" in (r.error or "") for r in results)

    def test_poll_errors_tried_again(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """A look at a running batch that fails with HTTP 503 is tried again; too many in a row stop the
        run with the batch still stored for the next one."""
        fake.fail_looks = 2
        (result,) = run_batch(client(fake, store, api), requests("patient"), progress=False)
        assert result.ok and fake.counts["batches"] == 1
        fake.fail_looks = batch.MAX_POLL_ERRORS
        with pytest.raises(LLMError, match=r"looks in a row at batch .* failed.*next run collects it"):
            run_batch(client(fake, store, api), requests("impatient"), progress=False)
        assert len(list(batch.batches_dir(store).glob("*.json"))) == 1

    def test_size_limit_splits(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """Calls beyond the batch size go in further batches."""
        results = run_batch(client(fake, store, api, batch_max_requests=2), requests("a", "b", "c", "d", "e"))
        assert all(r.ok for r in results) and fake.counts["batches"] == 3

    def test_batch_price_and_budget(self, fake: fake_batches.FakeBatches, store: Cache, api: str) -> None:
        """Spend is recorded at the batch price (half); a budget too small for a call submits nothing."""
        budget = Budget(store, "run", usd=100.0, tokens=None)
        results = run_batch(client(fake, store, api, budget=budget), requests("priced"), progress=False)
        (row,) = store.spend_totals("run")
        prices = model_terms.prices(spec(fake, api))
        assert row["batch"] and row["usd"] == pytest.approx(
            prices.usd(results[0].prompt_tokens or 0, results[0].completion_tokens or 0, batch=True)
        )
        tiny = Budget(store, "run", usd=row["usd"] + 1e-9, tokens=None)
        with pytest.raises(BudgetExceeded, match=r"at the batch price"):
            run_batch(client(fake, store, api, budget=tiny), requests("more"), progress=False)
        assert fake.counts["batches"] == 1


class TestChunks:
    def test_chunks_by_bytes(self) -> None:
        """A batch also ends at the provider's byte limit."""
        terms = model_terms.BatchTerms(enabled=True, max_requests=100, max_bytes=400)
        calls = [batch.Pending(f"k{i}", {"messages": [{"role": "user", "content": "x" * 100}]}, "") for i in range(5)]
        parts = batch.chunks(calls, terms, "m")
        assert len(parts) > 1 and sum(len(p) for p in parts) == 5
