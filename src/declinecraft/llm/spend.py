"""What a run spent on model calls, and the budget it may not pass (``llm.budget_usd``, ``llm.budget_tokens``).

Every call the client sends for a run is written to a ``spend`` table of the call store (one row:
run, call key, model, batch or not, prompt and output tokens, dollars at the entry's price), in the
same transaction as the call's record, so a kill never loses a paid call's spend and a cached call
(never sent) costs nothing. The run's spend so far is the sum of its rows, over every stage and
every earlier attempt of the run.

:class:`Budget` keeps a run under its caps. Before a call is sent it holds the most the call can
cost: its prompt counted at one token per :data:`CHARS_PER_TOKEN` characters (fewer characters per
token than any tokenizer we know gives English prose, so an overestimate) plus its whole output
budget. When the spend so far, plus what calls in flight hold, plus this hold would pass either
cap, nothing more is sent: :class:`BudgetExceeded` says what was spent and what is left, and the
stage exits non-zero. Raising the cap and running again resumes from the cache. When the call
returns, its hold gives way to what the server counted. A cap of 0 sends nothing at all.
A hosted entry without a price cannot be kept to a dollar cap and is refused before it sends.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from typing import Any

from declinecraft.core.model_terms import Prices
from declinecraft.llm.transport import LLMError

#: Characters per token assumed when a prompt's cost is held before sending (an overestimate).
CHARS_PER_TOKEN = 3
#: Tokens held per message for the chat template's role markers.
TOKENS_PER_MESSAGE = 8

TABLE = (
    "CREATE TABLE IF NOT EXISTS spend (run TEXT NOT NULL, key TEXT NOT NULL, model TEXT NOT NULL, "
    "batch INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
    "usd REAL NOT NULL, created_at TEXT NOT NULL)"
)


class BudgetExceeded(LLMError):
    """A call would pass the run's budget (or the budget is 0); the message says what was spent and what is left."""


@dataclass(frozen=True, slots=True)
class Spent:
    """One sent call's cost, as stored in the ``spend`` table."""

    run: str
    key: str
    model: str
    batch: bool
    prompt_tokens: int
    completion_tokens: int
    usd: float
    created_at: str


_COLUMNS = [f.name for f in fields(Spent)]


def create(db: sqlite3.Connection) -> None:
    """Create the ``spend`` table if the store lacks it (stores made before it existed)."""
    db.execute(TABLE)


def put(db: sqlite3.Connection, rows: Sequence[Spent]) -> None:
    """Add spend rows; call inside the transaction that stores their calls."""
    db.executemany(
        f"INSERT INTO spend ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
        [(*astuple(r)[:3], int(r.batch), *astuple(r)[4:]) for r in rows],
    )


def totals(db: sqlite3.Connection, run: str) -> list[dict[str, Any]]:
    """A run's spend per model and batch or not: calls, prompt and output tokens, dollars (sorted)."""
    rows = db.execute(
        "SELECT model, batch, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(usd) FROM spend "
        "WHERE run = ? GROUP BY model, batch ORDER BY model, batch",
        (run,),
    ).fetchall()
    return [
        {
            "model": model,
            "batch": bool(batch),
            "calls": int(calls),
            "prompt_tokens": int(prompt),
            "completion_tokens": int(completion),
            "usd": round(float(usd), 6),
        }
        for model, batch, calls, prompt, completion, usd in rows
    ]


def prompt_tokens_bound(body: Mapping[str, Any]) -> int:
    """The most prompt tokens a request body is held at (see :data:`CHARS_PER_TOKEN`)."""
    chars, messages = 0, list(body.get("messages") or [])
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(str(part.get("text", ""))) for part in content if isinstance(part, Mapping))
    return -(-chars // CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * max(1, len(messages))


def output_tokens_bound(body: Mapping[str, Any]) -> int:
    """The request's output budget (``max_tokens`` or ``max_completion_tokens``)."""
    return int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)


@dataclass(frozen=True, slots=True)
class Hold:
    """What one call holds of the budget until it returns."""

    usd: float
    prompt: int
    output: int

    @property
    def tokens(self) -> int:
        """Prompt and output tokens held."""
        return self.prompt + self.output


class Budget:
    """A run's caps and its spend so far (every stage, every earlier attempt of the run).

    Args:
        cache: the call store (:class:`declinecraft.llm.cache.Cache`), which holds the spend rows.
        run: the run's name (``cfg.run``).
        usd: ``llm.budget_usd`` (None: no cap in dollars).
        tokens: ``llm.budget_tokens`` (None: no cap in tokens).
        where: the params file, named in the message that stops the run.
    """

    def __init__(self, cache: Any, run: str, *, usd: float | None, tokens: int | None, where: str = "") -> None:
        self.cache = cache
        self.run = run
        self.usd_cap = usd
        self.tokens_cap = tokens
        self.where = where
        spent = cache.spend_totals(run)
        self.spent_usd = sum(r["usd"] for r in spent)
        self.spent_tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in spent)
        self.held_usd = 0.0
        self.held_tokens = 0
        self._lock = threading.RLock()  # a stage's models may run side by side, each in its thread
        self.stopped: str | None = None

    def _state(self) -> str:
        usd = f"${self.spent_usd:.4f} spent" + (
            f" of ${self.usd_cap:g} (${max(0.0, self.usd_cap - self.spent_usd):.4f} left)"
            if self.usd_cap is not None
            else ""
        )
        tokens = f"{self.spent_tokens:,} tokens spent" + (
            f" of {self.tokens_cap:,} ({max(0, self.tokens_cap - self.spent_tokens):,} left)"
            if self.tokens_cap is not None
            else ""
        )
        return f"run {self.run!r}: {usd}; {tokens}"

    def reserve(self, model_id: str, prices: Prices, body: Mapping[str, Any], *, hosted: bool, batch: bool) -> Hold:
        """Hold the most one call can cost, or stop the run.

        Raises:
            BudgetExceeded: the call would pass a cap (from then on every call is refused), a cap is
                0, or a hosted model without a price meets a dollar cap; the message says what was
                spent and what is left, and that nothing more is sent.
        """
        with self._lock:
            if self.stopped:
                raise BudgetExceeded(self.stopped)
            fix = f"raise llm.budget_usd / llm.budget_tokens in {self.where or 'the params file'} and run again"
            if self.usd_cap == 0 or self.tokens_cap == 0:
                cap = "llm.budget_usd" if self.usd_cap == 0 else "llm.budget_tokens"
                self.stopped = (
                    f"{cap} is 0: nothing is sent; model {model_id!r} has calls that are not in the cache "
                    f"({self._state()}). Answered calls come from the cache and cost nothing; {fix}"
                )
                raise BudgetExceeded(self.stopped)
            if self.usd_cap is not None and hosted and not prices.declared:
                raise BudgetExceeded(
                    f"model {model_id!r} is hosted and its entry gives no price_in / price_out, so llm.budget_usd "
                    f"({self.usd_cap:g}) cannot be kept; nothing was sent. Give its prices in the models file"
                )
            prompt, output = prompt_tokens_bound(body), output_tokens_bound(body)
            hold = Hold(prices.usd(prompt, output, batch=batch), prompt, output)
            over_usd = self.usd_cap is not None and self.spent_usd + self.held_usd + hold.usd > self.usd_cap
            over_tokens = (
                self.tokens_cap is not None and self.spent_tokens + self.held_tokens + hold.tokens > self.tokens_cap
            )
            if over_usd or over_tokens:
                cap = "llm.budget_usd" if over_usd else "llm.budget_tokens"
                self.stopped = (
                    f"{cap}: the next call of model {model_id!r} (up to {hold.tokens:,} tokens, ${hold.usd:.4f}"
                    f"{' at the batch price' if batch else ''}) would pass the budget; nothing more is sent "
                    f"({self._state()}). Answered calls come from the cache and cost nothing; {fix}"
                )
                raise BudgetExceeded(self.stopped)
            self.held_usd += hold.usd
            self.held_tokens += hold.tokens
            return hold

    def release(self, hold: Hold) -> None:
        """Give back a hold whose call was never sent."""
        with self._lock:
            self.held_usd -= hold.usd
            self.held_tokens -= hold.tokens

    def settle(
        self,
        hold: Hold,
        *,
        key: str,
        model_id: str,
        prices: Prices,
        prompt_tokens: int,
        completion_tokens: int,
        batch: bool,
        created_at: str,
    ) -> Spent:
        """Replace a call's hold by what it cost; return the row to store with its record."""
        with self._lock:
            self.release(hold)
            row = Spent(
                self.run,
                key,
                model_id,
                batch,
                prompt_tokens,
                completion_tokens,
                prices.usd(prompt_tokens, completion_tokens, batch=batch),
                created_at,
            )
            self.spent_usd += row.usd
            self.spent_tokens += prompt_tokens + completion_tokens
            return row


def spent_row(
    budget: Budget | None, hold: Hold | None, record: Any, *, model_id: str, prices: Prices, batch: bool
) -> list[Spent]:
    """The spend row of a sent call's record (none without a budget or for a call the server refused).

    An answer without token counts is charged its hold: the most it could have cost.
    """
    if budget is None or hold is None:
        return []
    if record.status != "ok" and record.prompt_tokens is None:
        budget.release(hold)  # an HTTP error or a cut connection: providers do not charge it
        return []
    prompt = hold.prompt if record.prompt_tokens is None else int(record.prompt_tokens)
    output = hold.output if record.completion_tokens is None else int(record.completion_tokens)
    return [
        budget.settle(
            hold,
            key=record.key,
            model_id=model_id,
            prices=prices,
            prompt_tokens=prompt,
            completion_tokens=output,
            batch=batch,
            created_at=record.created_at,
        )
    ]


def summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals over :func:`totals` rows: calls, tokens and dollars, and the same per model."""
    rows = list(rows)
    return {
        "calls": sum(r["calls"] for r in rows),
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
        "completion_tokens": sum(r["completion_tokens"] for r in rows),
        "usd": round(sum(r["usd"] for r in rows), 6),
        "by_model": rows,
    }
