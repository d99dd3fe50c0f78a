"""Sending a model's uncached calls through its provider's batch API, at the batch price.

For an entry with ``batch: true`` (:func:`declinecraft.core.model_terms.batch_terms`) the client
hands a stage's uncached calls to :class:`Batcher` instead of sending them one by one. It splits
them into batches within the provider's limits (requests and bytes), submits each, polls until it
ends, and folds every result into the call cache under the key of the call that asked for it, so
the rest of the pipeline reads them as it reads any call. Two APIs:

- ``openai``: upload the JSONL (``POST /files``, purpose ``batch``), ``POST /batches``, poll
  ``GET /batches/{id}``, download ``output_file_id`` and ``error_file_id`` (``GET /files/{id}/content``);
  also what Together and many OpenAI-compatible gateways speak;
- ``anthropic``: ``POST /messages/batches``, poll ``GET /messages/batches/{id}`` until its
  ``processing_status`` is ``ended``, then read its ``results_url``.

A kill loses nothing: each batch's id (and each of its calls' key and request) is written under
``<cache>/llm/batches/`` as soon as the provider has accepted it, and removed only once its results
are in the cache. The next run collects a stored batch that holds any call it needs before it
submits anything, so no call is paid twice. A line that errors, is cancelled or expires is stored as
a failed call with its reason (the next run re-sends it, ``llm.retry_failures``); a batch the
provider rejects stores each of its calls as failed, naming the line and the reason it gave.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import httpx2

from declinecraft.core import model_terms, paths
from declinecraft.llm import batch_lines, spend
from declinecraft.llm.cache import Cache, CallRecord, canonical_json
from declinecraft.llm.transport import Answer, LLMError

log = logging.getLogger(__name__)

#: OpenAI batch states after which nothing more will change.
OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
#: The Anthropic API version sent with every request.
ANTHROPIC_VERSION = "2023-06-01"
#: Looks in a row at a batch that may fail (HTTP 429 or 5xx, a dropped connection) before the run stops;
#: the batch stays stored, so the next run collects it.
MAX_POLL_ERRORS = 10


class Transient(LLMError):
    """A look at a batch failed in a way worth trying again (HTTP 429 or 5xx, a dropped connection)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """One call waiting in a batch: its key, its keyed body (stored with its record) and template version."""

    key: str
    body: Mapping[str, Any]
    prompt_version: str


@dataclass(frozen=True)
class Ended:
    """A batch the provider has finished with: its state and each line's answer, by custom_id."""

    state: str
    answers: dict[str, Answer]
    reason: str = ""
    """Why lines have no answer (the batch was rejected, expired or cancelled)."""


class BatchAPI(Protocol):
    """What the batcher needs from a provider."""

    name: str

    async def submit(self, lines: Sequence[Pending]) -> str:
        """Create a batch of these calls; return its id."""
        ...

    async def ended(self, batch_id: str) -> Ended | None:
        """The batch's results once it has ended; None while it runs."""
        ...


def _raise_for(response: httpx2.Response, what: str) -> None:
    if response.status_code >= 400:
        kind = Transient if response.status_code == 429 or response.status_code >= 500 else LLMError
        raise kind(f"{what}: HTTP {response.status_code}: {response.text[:500]}")


class OpenAIBatches:
    """The OpenAI Batch API at ``base_url`` (``https://api.openai.com/v1`` or any that speaks it)."""

    name = "openai"

    def __init__(self, http: httpx2.AsyncClient, base_url: str, model: str, api_key: str | None) -> None:
        self.http, self.base, self.model = http, base_url.rstrip("/"), model
        self.headers = {"Authorization": f"Bearer {api_key or 'EMPTY'}"}

    async def submit(self, lines: Sequence[Pending]) -> str:
        data = batch_lines.jsonl(batch_lines.openai_line(p.key, self.model, p.body) for p in lines)
        upload = await self.http.post(
            f"{self.base}/files",
            headers=self.headers,
            data={"purpose": "batch"},
            files={"file": ("batch.jsonl", data, "application/jsonl")},
        )
        _raise_for(upload, f"model {self.model!r}: uploading a batch file to {self.base}/files")
        created = await self.http.post(
            f"{self.base}/batches",
            headers=self.headers,
            json={"input_file_id": upload.json()["id"], "endpoint": batch_lines.CHAT_URL, "completion_window": "24h"},
        )
        _raise_for(created, f"model {self.model!r}: creating a batch at {self.base}/batches")
        return str(created.json()["id"])

    async def _file(self, file_id: str) -> list[dict[str, Any]]:
        got = await self.http.get(f"{self.base}/files/{file_id}/content", headers=self.headers)
        _raise_for(got, f"model {self.model!r}: downloading batch file {file_id}")
        return batch_lines.read_jsonl(got.content, f"batch file {file_id}")

    async def ended(self, batch_id: str) -> Ended | None:
        got = await self.http.get(f"{self.base}/batches/{batch_id}", headers=self.headers)
        _raise_for(got, f"model {self.model!r}: reading batch {batch_id}")
        batch = got.json()
        state = str(batch.get("status"))
        if state not in OPENAI_ENDED:
            return None
        answers: dict[str, Answer] = {}
        for field in ("output_file_id", "error_file_id"):
            if batch.get(field):
                for line in await self._file(str(batch[field])):
                    key, answer = batch_lines.openai_result(line, f"batch {batch_id}")
                    answers[key] = answer
        errors = (batch.get("errors") or {}).get("data") or []
        reason = "; ".join(
            f"line {e.get('line')}: {e.get('code') or ''} {e.get('message') or ''}".strip() for e in errors[:5]
        )
        return Ended(state, answers, reason)


class AnthropicBatches:
    """Anthropic's Message Batches at ``base_url`` (``https://api.anthropic.com/v1``)."""

    name = "anthropic"

    def __init__(self, http: httpx2.AsyncClient, base_url: str, model: str, api_key: str | None) -> None:
        self.http, self.base, self.model = http, base_url.rstrip("/"), model
        self.headers = {"x-api-key": api_key or "", "anthropic-version": ANTHROPIC_VERSION}

    async def submit(self, lines: Sequence[Pending]) -> str:
        requests = [batch_lines.anthropic_line(p.key, self.model, p.body) for p in lines]
        created = await self.http.post(
            f"{self.base}/messages/batches", headers=self.headers, json={"requests": requests}
        )
        _raise_for(created, f"model {self.model!r}: the provider rejected a batch at {self.base}/messages/batches")
        return str(created.json()["id"])

    async def ended(self, batch_id: str) -> Ended | None:
        got = await self.http.get(f"{self.base}/messages/batches/{batch_id}", headers=self.headers)
        _raise_for(got, f"model {self.model!r}: reading batch {batch_id}")
        batch = got.json()
        if batch.get("processing_status") != "ended":
            return None
        answers: dict[str, Answer] = {}
        if batch.get("results_url"):
            results = await self.http.get(str(batch["results_url"]), headers=self.headers)
            _raise_for(results, f"model {self.model!r}: downloading the results of batch {batch_id}")
            for line in batch_lines.read_jsonl(results.content, f"results of batch {batch_id}"):
                key, answer = batch_lines.anthropic_result(line, f"batch {batch_id}")
                answers[key] = answer
        return Ended("ended", answers)


APIS: dict[str, type[OpenAIBatches] | type[AnthropicBatches]] = {"openai": OpenAIBatches, "anthropic": AnthropicBatches}


def batches_dir(cache: Cache) -> Path:
    """Where submitted batches wait to be collected: ``<cache>/llm/batches/``."""
    return cache.path.parent / "batches"


def chunks(calls: Sequence[Pending], terms: model_terms.BatchTerms, model: str) -> list[list[Pending]]:
    """Calls split into batches of at most ``terms.max_requests`` lines and ``terms.max_bytes`` bytes."""
    out: list[list[Pending]] = []
    size = 0
    for call in calls:
        line = len(canonical_json({"custom_id": call.key, "body": {"model": model, **call.body}})) + 80
        if not out or len(out[-1]) >= terms.max_requests or size + line > terms.max_bytes:
            out.append([])
            size = 0
        out[-1].append(call)
        size += line
    return out


class Batcher:
    """Runs one model's uncached calls through its batch API (see the module docstring).

    Args:
        model_id: the registry id (named in messages and spend rows).
        served_name: the model name the provider knows.
        endpoint: ``backend:served_name``, stored with each record.
        revision: the entry's revision, stored with each record.
        base_url: the provider's API root (``.../v1``).
        api_key: the key from the entry's environment variable (never stored).
        terms: the entry's batch terms; prices: its prices (batch price used).
        cache: the call store; budget: the run's budget (None: no cap, no spend recorded).
        identity: the endpoint identity (a stored batch is collected only by the same model service).
    """

    def __init__(
        self,
        *,
        model_id: str,
        served_name: str,
        endpoint: str,
        revision: str,
        base_url: str,
        api_key: str | None,
        terms: model_terms.BatchTerms,
        prices: model_terms.Prices,
        cache: Cache,
        budget: spend.Budget | None,
        identity: Mapping[str, str],
        hosted: bool = True,
    ) -> None:
        self.model_id, self.served_name, self.endpoint, self.revision = model_id, served_name, endpoint, revision
        self.base_url, self.api_key, self.terms, self.prices = base_url, api_key, terms, prices
        self.cache, self.budget, self.hosted = cache, budget, hosted
        self.identity = canonical_json(dict(identity))

    def _api(self, http: httpx2.AsyncClient) -> BatchAPI:
        api: BatchAPI = APIS[self.terms.api](http, self.base_url, self.served_name, self.api_key)
        return api

    def stored(self) -> list[dict[str, Any]]:
        """The batches of this model service submitted earlier and not collected yet (oldest first)."""
        folder = batches_dir(self.cache)
        found = []
        for file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            data = json.loads(file.read_text(encoding="utf-8"))
            if data.get("identity") == self.identity:
                found.append(data)
        return sorted(found, key=lambda d: d["submitted_at"])

    def _store(self, batch_id: str, calls: Sequence[Pending]) -> dict[str, Any]:
        data = {
            "batch_id": batch_id,
            "api": self.terms.api,
            "model": self.model_id,
            "identity": self.identity,
            "submitted_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "calls": [
                {"key": c.key, "request": canonical_json(c.body), "prompt_version": c.prompt_version} for c in calls
            ],
        }
        paths.write_text_atomic(batches_dir(self.cache) / f"{_safe(batch_id)}.json", json.dumps(data))
        return data

    async def run(self, calls: Sequence[Pending]) -> dict[str, CallRecord]:
        """Answer ``calls`` through batches; return the stored record of each (ok or failed).

        Stored batches holding any of them are collected first; the rest are submitted (each
        holding its most cost at the batch price first), polled and folded into the cache.

        Raises:
            BudgetExceeded: after the calls within the budget were submitted and collected.
            LLMError: the provider refused a request outright (the message names it).
        """
        wanted = {c.key: c for c in calls}
        records: dict[str, CallRecord] = {}
        async with httpx2.AsyncClient(timeout=300.0) as http:
            api = self._api(http)
            waiting = [b for b in self.stored() if any(c["key"] in wanted for c in b["calls"])]
            if waiting:
                log.info("%s: collecting %d batch(es) submitted by an earlier run", self.model_id, len(waiting))
                records |= await self._collect(api, waiting, {})
            todo = [c for k, c in wanted.items() if k not in records]
            holds: dict[str, spend.Hold] = {}
            stop: spend.BudgetExceeded | None = None
            for call in todo:
                if self.budget is None:
                    break
                try:
                    holds[call.key] = self.budget.reserve(
                        self.model_id, self.prices, call.body, hosted=self.hosted, batch=True
                    )
                except spend.BudgetExceeded as exc:
                    stop = exc
                    break
            if self.budget is not None:
                todo = [c for c in todo if c.key in holds]
            submitted = []
            for part in chunks(todo, self.terms, self.served_name):
                batch_id = await api.submit(part)
                submitted.append(self._store(batch_id, part))
                log.info("%s: submitted batch %s (%d calls)", self.model_id, batch_id, len(part))
            records |= await self._collect(api, submitted, holds)
        if stop is not None:
            raise stop
        return {k: r for k, r in records.items() if k in wanted}

    async def _collect(
        self, api: BatchAPI, batches: list[dict[str, Any]], holds: Mapping[str, spend.Hold]
    ) -> dict[str, CallRecord]:
        """Poll ``batches`` until each ends, fold their results into the cache, forget them."""
        records: dict[str, CallRecord] = {}
        left = list(batches)
        errors = 0
        while left:
            still = []
            for batch in left:
                try:
                    ended = await api.ended(batch["batch_id"])
                except (Transient, httpx2.TransportError) as exc:
                    errors += 1
                    if errors >= MAX_POLL_ERRORS:
                        raise LLMError(
                            f"model {self.model_id!r}: {errors} looks in a row at batch {batch['batch_id']} failed, "
                            f"the last: {exc}; the batch stays stored and the next run collects it"
                        ) from None
                    log.warning(
                        "%s: looking at batch %s failed (%s); trying again", self.model_id, batch["batch_id"], exc
                    )
                    still.append(batch)
                    continue
                errors = 0
                if ended is None:
                    still.append(batch)
                    continue
                records |= self._fold(batch, ended, holds)
                (batches_dir(self.cache) / f"{_safe(batch['batch_id'])}.json").unlink(missing_ok=True)
            left = still
            if left:
                await asyncio.sleep(self.terms.poll_s)
        return records

    def _fold(self, batch: Mapping[str, Any], ended: Ended, holds: Mapping[str, spend.Hold]) -> dict[str, CallRecord]:
        """Store one ended batch's calls (failed where the batch gave no answer); return their records."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        missing = f"batch {batch['batch_id']} ended {ended.state} without an answer for this call"
        if ended.reason:
            missing += f" (the provider: {ended.reason})"
        records, costs = [], []
        for call in batch["calls"]:
            answer = ended.answers.get(call["key"]) or Answer(ok=False, error=missing)
            record = batch_lines.record_of(call, answer, endpoint=self.endpoint, revision=self.revision, created_at=now)
            records.append(record)
            hold = holds.get(call["key"])
            if self.budget is not None and hold is None:  # submitted by an earlier run: it holds nothing now
                hold = spend.Hold(0.0, 0, 0)
            costs += spend.spent_row(self.budget, hold, record, model_id=self.model_id, prices=self.prices, batch=True)
        self.cache.store(records, costs)
        return {r.key: r for r in records}


def _safe(batch_id: str) -> str:
    """A batch id as a file name."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in batch_id)
