"""A model entry's terms of service: its prices, its rate limits and whether it goes through a batch API.

All of them are keys of the model's entry in ``params/models.yaml`` (none is fixed in code; an entry
that says nothing gets the defaults below, which are the client's long-standing behaviour):

``price_in`` / ``price_out``
    USD per million prompt / output tokens. ``price_batch_in`` / ``price_batch_out``: the batch
    price; absent, half the price (OpenAI's, Anthropic's, Google's and Together's batch discount).
    An entry without prices costs nothing (a local server); a budget in dollars refuses to send to
    a hosted entry without them (:mod:`declinecraft.llm.spend`).
``requests_per_minute`` / ``tokens_per_minute``
    The provider's rate limits (prompt plus output budget per request, as providers count them);
    absent: no limit.
``max_concurrency``
    Requests in flight at once (a field of :class:`~declinecraft.core.registry.ModelSpec`).
``max_retries``
    Retries after a failed attempt (429, 5xx, timeouts, malformed bodies); default 5.
``max_retry_after_s``
    The longest wait between attempts the run honours, a server's ``Retry-After`` included; default 60.
``timeout_s``
    Seconds one attempt may take; default 900 (16k-token outputs on a slow server take minutes).
``batch``
    ``true``: the entry's uncached calls go out through a batch API (:mod:`declinecraft.llm.batch`).
``batch_api``
    ``openai`` (``/files`` and ``/batches``, also Together's and many gateways') or ``anthropic``
    (``/messages/batches``); default ``openai``.
``batch_poll_s``
    Seconds between two looks at a submitted batch; default 30.
``batch_max_requests``
    Requests per submitted batch; default the provider's limit (50,000 OpenAI, 100,000 Anthropic).

:func:`check_entry` checks the types and signs of these keys when the registry is read, so
``make check-params`` refuses ``price_in: -1`` or ``max_retries: "five"`` with the file and the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Batch APIs the client speaks.
BATCH_APIS = ("openai", "anthropic")
#: Requests per batch the providers accept (OpenAI Batch API, Anthropic Message Batches).
BATCH_LIMITS = {"openai": 50_000, "anthropic": 100_000}
#: Bytes per batch the providers accept (200 MB for an OpenAI input file, 256 MB for an Anthropic batch).
BATCH_BYTES = {"openai": 200_000_000, "anthropic": 256_000_000}

#: key -> (kind, lowest allowed, whether the lowest is excluded). Kinds: number, int, bool, choice.
#: The share of the plain price a batch API takes off where an entry gives neither batch prices nor
#: its own ``batch_discount``.
BATCH_DISCOUNT = 0.5

KEYS: dict[str, tuple[str, float, bool]] = {
    "price_in": ("number", 0, False),
    "price_out": ("number", 0, False),
    "price_batch_in": ("number", 0, False),
    "price_batch_out": ("number", 0, False),
    "requests_per_minute": ("number", 0, True),
    "tokens_per_minute": ("number", 0, True),
    "max_concurrency": ("int", 1, False),
    "max_retries": ("int", 0, False),
    "max_retry_after_s": ("number", 0, False),
    "timeout_s": ("number", 0, True),
    "batch": ("bool", 0, False),
    "batch_api": ("choice", 0, False),
    "batch_poll_s": ("number", 0, False),
    "batch_max_requests": ("int", 1, False),
}


@dataclass(frozen=True)
class Prices:
    """USD per million tokens (0 for a model that costs nothing per call)."""

    input: float = 0.0
    output: float = 0.0
    batch_input: float = 0.0
    batch_output: float = 0.0
    declared: bool = False
    """Whether the entry gives a price at all (a hosted entry without one cannot be kept to a budget)."""

    def usd(self, prompt_tokens: int, output_tokens: int, *, batch: bool = False) -> float:
        """Dollars for a call of these token counts, at the batch price when ``batch``."""
        rate_in, rate_out = (self.batch_input, self.batch_output) if batch else (self.input, self.output)
        return (prompt_tokens * rate_in + output_tokens * rate_out) / 1e6


@dataclass(frozen=True)
class Limits:
    """How hard the client may push one model's endpoint (see the module docstring for each key)."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_retries: int = 5
    max_retry_after_s: float = 60.0
    timeout_s: float = 900.0


@dataclass(frozen=True)
class BatchTerms:
    """Whether and how an entry's calls go through a provider's batch API."""

    enabled: bool = False
    api: str = "openai"
    poll_s: float = 30.0
    max_requests: int = BATCH_LIMITS["openai"]
    max_bytes: int = BATCH_BYTES["openai"]


def _value(spec: Any, key: str) -> Any:
    """An entry's value of ``key``: a field of the spec where it has one, else its extra keys."""
    value = getattr(spec, key, None)
    return spec.extra.get(key) if value is None else value


def prices(spec: Any) -> Prices:
    """The entry's prices; where it gives no batch price, the plain price less its
    ``batch_discount`` (default 0.5: the providers' batch APIs cost half)."""
    price_in, price_out = _value(spec, "price_in"), _value(spec, "price_out")
    declared = price_in is not None or price_out is not None
    rate_in, rate_out = float(price_in or 0), float(price_out or 0)
    batch_in, batch_out = _value(spec, "price_batch_in"), _value(spec, "price_batch_out")
    keep = 1 - float(_value(spec, "batch_discount") or BATCH_DISCOUNT)
    return Prices(
        rate_in,
        rate_out,
        rate_in * keep if batch_in is None else float(batch_in),
        rate_out * keep if batch_out is None else float(batch_out),
        declared,
    )


def limits(spec: Any) -> Limits:
    """The entry's rate limits and retry policy, defaults where it says nothing."""
    given = {k: _value(spec, k) for k in ("requests_per_minute", "tokens_per_minute", "max_retries")}
    given |= {k: _value(spec, k) for k in ("max_retry_after_s", "timeout_s")}
    return Limits(**{k: v for k, v in given.items() if v is not None})


def batch_terms(spec: Any) -> BatchTerms:
    """Whether the entry batches its calls, through which API, and the batch's bounds."""
    api = str(_value(spec, "batch_api") or "openai")
    poll = _value(spec, "batch_poll_s")
    size = _value(spec, "batch_max_requests")
    return BatchTerms(
        enabled=bool(_value(spec, "batch")),
        api=api,
        poll_s=30.0 if poll is None else float(poll),
        max_requests=int(size) if size is not None else BATCH_LIMITS.get(api, BATCH_LIMITS["openai"]),
        max_bytes=BATCH_BYTES.get(api, BATCH_BYTES["openai"]),
    )


def check_entry(model_id: str, entry: dict[str, Any]) -> list[str]:
    """One message per price, limit or batch key of an entry with the wrong type or sign (empty: fine)."""
    problems = []
    for key, (kind, low, above) in KEYS.items():
        if key not in entry or entry[key] is None:
            continue
        value, where = entry[key], f"model {model_id!r}: {key}"
        if kind == "bool":
            if not isinstance(value, bool):
                problems.append(f"{where}: expected true/false, got {value!r}")
        elif kind == "choice":
            if value not in BATCH_APIS:
                problems.append(f"{where}: expected one of {', '.join(BATCH_APIS)}, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int if kind == "int" else (int, float)):
            problems.append(f"{where}: expected {'an integer' if kind == 'int' else 'a number'}, got {value!r}")
        elif not math.isfinite(value) or (value <= low if above else value < low):
            problems.append(f"{where}: {value!r} is out of range (needs {'>' if above else '>='} {low:g})")
    return problems
